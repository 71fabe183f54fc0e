package pgengine_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/pgengine"
	"github.com/sessiontree/sessiontree/storetest"
)

// headerSums reads each session's header checksum, by id (-1 for none).
func headerSums(t *testing.T, url string) map[string]int64 {
	t.Helper()
	rows, err := connect(t, url).Query(context.Background(), `SELECT id, coalesce(header_checksum, -1) FROM sessions`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id string
		var sum int64
		if err := rows.Scan(&id, &sum); err != nil {
			t.Fatal(err)
		}
		out[id] = sum
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// headerOf is the HeaderChecksum of session id's header as db reads it.
func headerOf(t *testing.T, db *pgengine.DB, id string) int64 {
	t.Helper()
	ctx := context.Background()
	st, err := db.OpenStorage(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := st.Meta(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return sessiontree.HeaderChecksum(meta)
}

// TestHeaderChecksumMigration: migration 18 lists every session stored
// before it, and Open gives each the checksum of its header columns as
// they are, the one its creation writes now: sessions made through the
// API (a parent session, a cwd with U+2028, an id of pi 1.x's shape),
// one imported from a pi file (legacy version 1, stored as version 3),
// and one whose cwd was changed before the upgrade, which nothing can
// tell (its sum is of the changed cwd). Check is clean after it.
func TestHeaderChecksumMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := openDB(t)
	for _, m := range []sessiontree.SessionMeta{
		{Cwd: "/w"},
		{ID: "child.1", CreatedAt: "2026-12-01T10:00:00.000Z", Cwd: "/w/\u2028x", ParentSession: "parent"},
		{ID: "moved", Cwd: "/before"},
	} {
		if _, err := db.CreateSession(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	imported := storetest.ImportLenient(t, db, filepath.Join("..", "testdata", "pi", "legacy-v1-linear.jsonl"))
	want := headerSums(t, url)
	if len(want) != 4 || want[imported] != headerOf(t, db, imported) {
		t.Fatalf("header sums as written = %v; want 4, %s's of its header", want, imported)
	}

	// The database as before migration 18, the header of one session
	// changed.
	execAll(t, url, `UPDATE sessions SET cwd = '/after' WHERE id = 'moved'`, `ALTER TABLE sessions DROP COLUMN header_checksum`,
		`DROP TABLE header_checksum_fill`, `DELETE FROM schema_migrations WHERE version = 18`)
	upgraded := openURL(t, url) // Check clean at its cleanup
	want["moved"] = headerOf(t, upgraded, "moved")
	if diff := cmp.Diff(want, headerSums(t, url)); diff != "" {
		t.Errorf("header sums after migration 18 (-written +migrated):\n%s", diff)
	}
	var left int
	if err := connect(t, url).QueryRow(ctx, `SELECT count(*) FROM header_checksum_fill`).Scan(&left); err != nil || left != 0 {
		t.Errorf("sessions left to fill = %d, %v; want 0", left, err)
	}
}
