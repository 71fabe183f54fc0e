package store_test

import (
	"context"
	"os"
	"testing"

	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/pgengine"
	"github.com/sessiontree/sessiontree/store"
)

// TestMain finds a PostgreSQL server for the tests that run on both
// engines (see internal/pgtest: without one they skip, except under
// CI=true).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// pgEmpty is a new store's PostgreSQL database, made once per test binary.
var pgEmpty = pgtest.NewTemplate(func(ctx context.Context, url string) error {
	db, err := pgengine.Open(ctx, url, pgengine.Options{})
	if err != nil {
		return err
	}
	return db.Close()
})

// openPostgres opens a store on a fresh PostgreSQL database; its cleanup
// checks and closes it as openStoreAt's does.
func openPostgres(t testing.TB) *store.Store {
	t.Helper()
	db, err := pgengine.Open(context.Background(), pgEmpty.Database(t), pgengine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := store.New(db)
	checkAtCleanup(t, s)
	return s
}

// engineCase names an engine and opens a fresh store on it.
type engineCase struct {
	name string
	open func(t testing.TB) *store.Store
}

// engines are the engines the store's engine-neutral tests run on.
var engines = []engineCase{{"sqlite", openStore}, {"postgres", openPostgres}}

// onEngines runs test once per engine, as a subtest named after it.
func onEngines(t *testing.T, test func(t *testing.T, open func(t testing.TB) *store.Store)) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) { test(t, e.open) })
	}
}
