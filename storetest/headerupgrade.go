package storetest

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
)

// HeaderUpgradeHarness is what RunHeaderChecksumUpgrade needs of an
// engine.
type HeaderUpgradeHarness struct {
	// DB is a new database.
	DB sessiontree.Database
	// Query returns the first column of each row of a query on DB's
	// database, as text.
	Query func(query string) ([]string, error)
	// Upgrade runs stmts on DB's database, takes it back to before the
	// migration that added sessions.header_checksum (what the migration
	// made dropped, its record deleted) and opens it again, which applies
	// the migration; it returns the database opened.
	Upgrade func(stmts ...string) sessiontree.Database
	// Testdata is the testdata folder.
	Testdata string
}

// RunHeaderChecksumUpgrade checks the migration that keeps a checksum of
// each session's header (sessiontree.HeaderChecksum): every session
// stored before it gets the checksum of its header columns as they are,
// the one its creation writes now. The sessions: made through the API (a
// parent session, a cwd with U+2028, an id of pi 1.x's shape), one
// imported from a pi file of version 1, and one whose cwd was changed
// before the upgrade, which nothing can tell (its sum is of the changed
// cwd). Check is clean after it.
func RunHeaderChecksumUpgrade(t *testing.T, h HeaderUpgradeHarness) {
	t.Helper()
	ctx := context.Background()
	err := h.DB.Update(ctx, func(tx sessiontree.DatabaseTx) error {
		for _, m := range []sessiontree.SessionMeta{
			{Cwd: "/w"},
			{ID: "child.1", CreatedAt: "2026-12-01T10:00:00.000Z", Cwd: "/w/\u2028x", ParentSession: "parent"},
			{ID: "moved", Cwd: "/before"},
		} {
			if _, err := tx.NewSession(m, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ImportLenient(t, h.DB, filepath.Join(h.Testdata, "pi", "legacy-v1-linear.jsonl"))
	want := h.headerSums(t)
	for id, sum := range want {
		if m := headerOf(t, h.DB, id); sum != m {
			t.Errorf("session %s: header checksum %d as written; want %d", id, sum, m)
		}
	}
	up := h.Upgrade(`UPDATE sessions SET cwd = '/after' WHERE id = 'moved'`)
	want["moved"] = headerOf(t, up, "moved")
	if diff := cmp.Diff(want, h.headerSums(t)); len(want) != 4 || diff != "" {
		t.Errorf("header checksums of %d sessions after the migration (-written +migrated):\n%s", len(want), diff)
	}
	if err := up.Check(ctx, ""); err != nil {
		t.Errorf("Check() after the migration = %v", err)
	}
}

// headerSums reads each session's header checksum, by id (-1 for none).
func (h *HeaderUpgradeHarness) headerSums(t *testing.T) map[string]int64 {
	t.Helper()
	rows, err := h.Query(`SELECT CAST(coalesce(header_checksum, -1) AS TEXT) || ' ' || id FROM sessions`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, r := range rows {
		sum, id, _ := strings.Cut(r, " ")
		n, err := strconv.ParseInt(sum, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = n
	}
	return out
}

// headerOf is the HeaderChecksum of session id's header as db reads it.
func headerOf(t *testing.T, db sessiontree.Database, id string) int64 {
	t.Helper()
	ctx := context.Background()
	st, err := db.OpenSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := st.Meta(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return sessiontree.HeaderChecksum(meta)
}
