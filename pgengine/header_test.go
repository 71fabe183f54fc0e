package pgengine_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/storetest"
)

// TestHeaderChecksumMigration: migration 18 lists every session stored
// before it, and Open gives each the checksum of its header columns as
// they are (storetest.RunHeaderChecksumUpgrade), leaving the list empty.
func TestHeaderChecksumMigration(t *testing.T) {
	t.Parallel()
	db, url := openDB(t)
	conn := connect(t, url)
	storetest.RunHeaderChecksumUpgrade(t, storetest.HeaderUpgradeHarness{
		DB:    db,
		Query: func(query string) ([]string, error) { return pgQueryColumn(conn, query) },
		Upgrade: func(stmts ...string) sessiontree.Database {
			execAll(t, url, append(stmts, `ALTER TABLE sessions DROP COLUMN header_checksum`,
				`DROP TABLE header_checksum_fill`, `DELETE FROM schema_migrations WHERE version = 18`)...)
			return openURL(t, url) // Check clean at its cleanup
		},
		Testdata: filepath.Join("..", "testdata"),
	})
	var left int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM header_checksum_fill`).Scan(&left); err != nil || left != 0 {
		t.Errorf("sessions left to fill = %d, %v; want 0", left, err)
	}
}
