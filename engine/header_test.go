package engine_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/storetest"
)

// TestHeaderChecksumMigration: migration 25 gives every session stored
// before it the checksum of its header columns as they are
// (storetest.RunHeaderChecksumUpgrade).
func TestHeaderChecksumMigration(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "h.db")
	db := openDB(t, path, engine.Options{})
	raw := rawDB(t, path)
	storetest.RunHeaderChecksumUpgrade(t, storetest.HeaderUpgradeHarness{
		DB:    engine.NewDatabase(db),
		Query: func(query string) ([]string, error) { return queryColumn(raw, query) },
		Upgrade: func(stmts ...string) sessiontree.Database {
			db.Close()
			return engine.NewDatabase(reopenAfter(t, path, append(stmts, `DROP TRIGGER sessions_header_unsummed`,
				`ALTER TABLE sessions DROP COLUMN header_checksum`,
				`DELETE FROM schema_migrations WHERE version IN (25, 27)`, `PRAGMA user_version = 24`)...))
		},
		Testdata: filepath.Join("..", "testdata"),
	})
}

// TestOlderWriterSessionIsSummed: a session inserted without a header
// checksum, as an engine from before migration 25 does (a process still
// running while a newer one migrated the file), gets its sum from the
// database as it goes in (migration 27's trigger), so Check and an export
// take it: it read as damaged for good ('the header has no checksum').
func TestOlderWriterSessionIsSummed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "h.db")
	db := openDB(t, path, engine.Options{})
	raw := rawDB(t, path)
	meta := sessiontree.SessionMeta{ID: "old-after", Version: 3, CreatedAt: "2026-01-01T00:00:00.000Z", Cwd: "/old"}
	if _, err := raw.Exec(`INSERT INTO sessions (id, version, created_at, cwd, parent_session, updated_at)
		VALUES (?, ?, ?, ?, NULL, ?)`, meta.ID, meta.Version, meta.CreatedAt, meta.Cwd, meta.CreatedAt); err != nil {
		t.Fatal(err)
	}
	var sum int64
	if err := raw.QueryRow(`SELECT coalesce(header_checksum, -1) FROM sessions WHERE id = ?`, meta.ID).Scan(&sum); err != nil || sum != int64(sessiontree.HeaderChecksum(meta)) {
		t.Errorf("the older writer's session has header_checksum %d, %v; want %d", sum, err, sessiontree.HeaderChecksum(meta))
	}
	if err := db.Check(ctx, meta.ID); err != nil {
		t.Errorf("Check(the older writer's session) = %v; want nil", err)
	}
	// One an older writer stored before migration 27 gets its sum there.
	db.Close()
	db = reopenAfter(t, path, `DROP TRIGGER sessions_header_unsummed`,
		`INSERT INTO sessions (id, version, created_at, cwd, updated_at) VALUES ('old-before', 3, 't', '/old', 't')`,
		`DELETE FROM schema_migrations WHERE version = 27`, `PRAGMA user_version = 26`)
	if err := db.Check(ctx, ""); err != nil {
		t.Errorf("Check after migration 27 = %v; want nil", err)
	}
}
