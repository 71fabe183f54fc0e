package engine_test

import (
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
			return engine.NewDatabase(reopenAfter(t, path, append(stmts, `ALTER TABLE sessions DROP COLUMN header_checksum`,
				`DELETE FROM schema_migrations WHERE version = 25`, `PRAGMA user_version = 24`)...))
		},
		Testdata: filepath.Join("..", "testdata"),
	})
}
