package engine_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// headerSums reads each session's header checksum, by id (-1 for none).
func headerSums(t *testing.T, path string) map[string]int64 {
	t.Helper()
	rows, err := rawDB(t, path).Query(`SELECT id, coalesce(header_checksum, -1) FROM sessions`)
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

// TestHeaderChecksumMigration: migration 25 gives every session stored
// before it the checksum of its header columns as they are, the one its
// creation writes now: sessions made through the API (a parent session,
// a cwd with U+2028, an id of pi 1.x's shape), one imported from a pi
// file (legacy version 1, stored as version 3), and one whose cwd was
// changed before the upgrade, which nothing can tell (its sum is of the
// changed cwd). Check is clean after it.
func TestHeaderChecksumMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "h.db")
	db := openDB(t, path, engine.Options{})
	metas := []sessiontree.SessionMeta{
		{Cwd: "/w"},
		{ID: "child.1", CreatedAt: "2026-12-01T10:00:00.000Z", Cwd: "/w/\u2028x", ParentSession: "parent"},
		{ID: "moved", Cwd: "/before"},
	}
	for _, m := range metas {
		if _, err := db.CreateSession(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	imported := importFile(t, db, filepath.Join("..", "testdata", "pi", "legacy-v1-linear.jsonl"))
	want := headerSums(t, path)
	if len(want) != 4 || want[imported] != headerOf(t, db, imported) {
		t.Fatalf("header sums as written = %v; want 4, %s's of its header", want, imported)
	}
	db.Close()

	upgraded := reopenAfter(t, path, `UPDATE sessions SET cwd = '/after' WHERE id = 'moved'`,
		`ALTER TABLE sessions DROP COLUMN header_checksum`, `DELETE FROM schema_migrations WHERE version = 25`, `PRAGMA user_version = 24`)
	want["moved"] = headerOf(t, upgraded, "moved")
	if diff := cmp.Diff(want, headerSums(t, path)); diff != "" {
		t.Errorf("header sums after migration 25 (-written +migrated):\n%s", diff)
	}
	if err := upgraded.Check(ctx, ""); err != nil {
		t.Errorf("Check() after migration 25 = %v", err)
	}
}

// headerOf is the HeaderChecksum of session id's header as db reads it.
func headerOf(t *testing.T, db *engine.DB, id string) int64 {
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
