package store_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/store"
)

// TestMain finds a PostgreSQL server for the tests that run on both
// engines (internal/pgtest: one started for the binary when PostgreSQL is
// installed; none skips them, except under CI=true, where it fails them).
// Its parallel tests, half of them waiting for the server, run 4 per CPU
// (pgtest.MainWaiting). Under -short the PostgreSQL cases are skipped
// (pgtest.SkipPostgresUnderShort): the quick loop runs the store's tests
// on SQLite alone.
func TestMain(m *testing.M) {
	pgtest.SkipPostgresUnderShort()
	os.Exit(pgtest.MainWaiting(m))
}

// opener opens a new, empty store of one engine for a test; its cleanup
// checks the whole database and closes it.
type opener func(t testing.TB) *store.Store

// engines are the engines the store's tests run on.
var engines = []struct {
	name string
	open opener
}{
	{"sqlite", openStore},
	{"postgres", openPostgresStore},
}

// onEngines runs test once per engine, as a subtest named after it, with
// the engine's opener in place of openStore. The subtests run in parallel:
// each has a database of its own, and the PostgreSQL one mostly waits for
// the server while the SQLite one computes.
func onEngines(t *testing.T, test func(t *testing.T, openStore opener)) {
	t.Helper()
	forEngines(t, true, test)
}

// onEnginesInTurn is onEngines for a test that sets environment variables
// (t.Setenv), which are the process's: its subtests run one at a time.
func onEnginesInTurn(t *testing.T, test func(t *testing.T, openStore opener)) {
	t.Helper()
	forEngines(t, false, test)
}

func forEngines(t *testing.T, parallel bool, test func(t *testing.T, openStore opener)) {
	t.Helper()
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			if parallel {
				t.Parallel()
			}
			test(t, e.open)
		})
	}
}

// openPostgresStore opens a store on a fresh PostgreSQL database (a copy
// of pgtest.Migrated, reset or dropped when t ends).
func openPostgresStore(t testing.TB) *store.Store {
	t.Helper()
	return openPostgresAt(t, pgtest.Migrated.Database(t))
}

// openPostgresAt opens the store at a PostgreSQL URL; its cleanup checks
// the whole database and closes it.
func openPostgresAt(t testing.TB, url string) *store.Store {
	t.Helper()
	s, err := store.OpenURL(context.Background(), url, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { checkAndClose(t, s) })
	return s
}

// checkAndClose checks the whole database of s and closes it.
func checkAndClose(t testing.TB, s *store.Store) {
	t.Helper()
	if err := s.Check(context.Background(), ""); err != nil && !errors.Is(err, sessiontree.ErrClosed) {
		t.Errorf("Check: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
