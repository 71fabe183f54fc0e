package pgengine_test

import (
	"context"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/pgengine"
	"github.com/sessiontree/sessiontree/storetest"
)

// TestDerivedRedo: migration 16 lists the sessions whose values an older
// engine derived by rules since fixed, and Open computes them again
// (storetest.RunOlderRules).
func TestDerivedRedo(t *testing.T) {
	t.Parallel()
	url := pgtest.Migrated.Database(t)
	storetest.RunOlderRules(t, storetest.OlderRulesHarness{
		Dir: "../testdata/olderrules",
		Open: func(t *testing.T) (sessiontree.Database, func()) {
			db, err := pgengine.Open(context.Background(), url, pgengine.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return db, func() { db.Close() }
		},
		Exec: func(t *testing.T, stmts ...string) { execAll(t, url, stmts...) },
		Forget: func(t *testing.T) {
			execAll(t, url, `ALTER TABLE derived_redo RENAME TO usage_days_redo`,
				`DELETE FROM schema_migrations WHERE name LIKE '%\_derived\_redo.sql'`)
		},
		OlderBreakdown: `[{"key":"undefined/m","cost":0.5,"tokens":11},{"key":"p/m","cost":1.25,"tokens":2000000022},` +
			`{"key":"undefined/undefined","cost":0.125,"tokens":31}]`,
	})
}
