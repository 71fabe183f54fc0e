package reliability_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/pgengine"
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
	{"postgres", func(t *testing.T) string { return pgMigrated.Database(t) }},
}

// pgMigrated is an empty, migrated PostgreSQL database, once per binary.
var pgMigrated = pgtest.NewTemplate(func(ctx context.Context, url string) error {
	db, err := pgengine.Open(ctx, url, pgengine.Options{})
	if err != nil {
		return err
	}
	return db.Close()
})

// isPostgres reports whether target names a PostgreSQL database.
func isPostgres(target string) bool {
	return strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://")
}

// sessionDB is what the shared tests do with a database: make and open
// sessions, run every check the engine has, close.
type sessionDB interface {
	create(ctx context.Context, id, cwd string) (sessiontree.Storage, error)
	open(ctx context.Context, id string) (sessiontree.Storage, error)
	// check runs every check there is on session id (every session when
	// id is ""); a session that does not exist is ErrNotFound.
	check(ctx context.Context, id string) error
	close() error
}

// openTarget opens the database target names. sync asks SQLite for
// synchronous=FULL (PostgreSQL's durability is the server's).
func openTarget(ctx context.Context, target string, sync bool) (sessionDB, error) {
	if isPostgres(target) {
		db, err := pgengine.Open(ctx, target, pgengine.Options{})
		if err != nil {
			return nil, err
		}
		return pgDB{db}, nil
	}
	opts := store.Options{Engine: engine.Options{Synchronous: engine.SyncNormal}}
	if sync {
		opts.Engine.Synchronous = engine.SyncFull
	}
	s, err := store.Open(ctx, target, opts)
	if err != nil {
		return nil, err
	}
	return sqliteDB{s}, nil
}

// openDB opens target for a test; the cleanup checks every session and
// closes it.
func openDB(tb testing.TB, target string) sessionDB {
	tb.Helper()
	db, err := openTarget(context.Background(), target, false)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := db.check(context.Background(), ""); err != nil && !errors.Is(err, sessiontree.ErrClosed) {
			tb.Errorf("check = %v", err)
		}
		db.close()
	})
	return db
}

// checkTarget opens target and runs every check of session id (every
// session when id is ""; one that does not exist passes); it returns the
// database, open, for more checks.
func checkTarget(tb testing.TB, target, id string) sessionDB {
	tb.Helper()
	db, err := openTarget(context.Background(), target, false)
	if err != nil {
		tb.Fatalf("reopen %s: %v", target, err)
	}
	if err := db.check(context.Background(), id); err != nil && (id == "" || !errors.Is(err, sessiontree.ErrNotFound)) {
		db.close()
		tb.Fatalf("check(%q) = %v", id, err)
	}
	return db
}

// sqliteDB is a store on a SQLite file.
type sqliteDB struct{ s *store.Store }

func (d sqliteDB) create(ctx context.Context, id, cwd string) (sessiontree.Storage, error) {
	return d.s.Create(ctx, store.CreateOptions{ID: id, Cwd: cwd})
}

func (d sqliteDB) open(ctx context.Context, id string) (sessiontree.Storage, error) {
	return d.s.OpenSession(ctx, id)
}

// check runs PRAGMA integrity_check, then the store's Check: the
// engine's replay of each session against its materialized branch,
// counters and labels, and the search index.
func (d sqliteDB) check(ctx context.Context, id string) error {
	var ic string
	if err := d.s.DB().QueryPragma(ctx, "integrity_check", &ic); err != nil || ic != "ok" {
		return fmt.Errorf("PRAGMA integrity_check = %q, %v; want ok", ic, err)
	}
	return d.s.Check(ctx, id)
}

func (d sqliteDB) close() error { return d.s.Close() }

// pgDB is a PostgreSQL database.
// TODO(merge): a store.OpenURL store once helper-pgstore lands, so that
// the search index is checked too.
type pgDB struct{ db *pgengine.DB }

func (d pgDB) create(ctx context.Context, id, cwd string) (sessiontree.Storage, error) {
	return d.db.CreateSession(ctx, sessiontree.SessionMeta{ID: id, Cwd: cwd})
}

func (d pgDB) open(ctx context.Context, id string) (sessiontree.Storage, error) {
	return d.db.OpenSession(ctx, id)
}

// check replays each session against its materialized branch, counters,
// labels and leaf (pgengine.DB.Check).
func (d pgDB) check(ctx context.Context, id string) error { return d.db.Check(ctx, id) }

func (d pgDB) close() error { return d.db.Close() }
