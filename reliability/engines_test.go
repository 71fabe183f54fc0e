package reliability_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/store"
)

// The concurrency and crash tests run on both database engines (issue 15
// item 8): the same test bodies on a SQLite file and on a PostgreSQL
// database of the server internal/pgtest finds or starts. A database is
// named by a target, a file path or a postgres:// URL, which child
// processes get in childSpec.DB.

// dbEngine is a database engine the shared tests run on.
type dbEngine struct {
	name string
	// target returns a fresh, empty database for t.
	target func(t *testing.T) string
}

// dbEngines are the engines, SQLite first. Without a PostgreSQL server
// the postgres target skips its test (fails it under CI=true).
var dbEngines = []dbEngine{
	{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "sessions.db") }},
	{"postgres", func(t *testing.T) string { return pgtest.Migrated.Database(t) }},
}

// openTarget opens the store on the database target names
// (store.OpenURL: a SQLite file or a PostgreSQL URL). sync asks SQLite for
// synchronous=FULL (PostgreSQL's durability is the server's).
func openTarget(ctx context.Context, target string, sync bool) (*store.Store, error) {
	opts := store.Options{Engine: engine.Options{Synchronous: engine.SyncNormal}}
	if sync {
		opts.Engine.Synchronous = engine.SyncFull
	}
	return store.OpenURL(ctx, target, opts)
}

// openTargetStore opens target for a test, like openStore.
func openTargetStore(tb testing.TB, target string) *store.Store {
	tb.Helper()
	s, err := openTarget(context.Background(), target, false)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Check(context.Background(), ""); err != nil && !errors.Is(err, sessiontree.ErrClosed) {
			tb.Errorf("Check() = %v", err)
		}
		s.Close()
	})
	return s
}

// checkTarget opens the store on target and runs every check there is on
// session id (every session when id is ""; one that does not exist
// passes): PRAGMA integrity_check on SQLite, then the store's Check, the
// engine's replay of the session against its materialized branch,
// counters, labels and leaf, and the search index. It returns the store,
// open, for more checks.
func checkTarget(tb testing.TB, target, id string) *store.Store {
	tb.Helper()
	ctx := context.Background()
	s, err := openTarget(ctx, target, false)
	if err != nil {
		tb.Fatalf("reopen %s: %v", target, err)
	}
	if db := s.DB(); db != nil {
		var ic string
		if err := db.QueryPragma(ctx, "integrity_check", &ic); err != nil || ic != "ok" {
			s.Close()
			tb.Fatalf("PRAGMA integrity_check = %q, %v; want ok", ic, err)
		}
	}
	if err := s.Check(ctx, id); err != nil && (id == "" || !errors.Is(err, sessiontree.ErrNotFound)) {
		s.Close()
		tb.Fatalf("Check(%q) = %v", id, err)
	}
	return s
}
