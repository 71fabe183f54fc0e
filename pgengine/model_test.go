package pgengine_test

import (
	"context"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/pgengine"
	"github.com/sessiontree/sessiontree/storetest"
)

// TestModel drives random sequences of API calls against the engine and
// the root package's rules over the log (storetest.RunModel), as the
// root package's TestModel does for the other backends: claims on the
// model's clock, a second pool of connections, delete and re-create,
// Check and the usage report.
// SESSIONTREE_MODEL_SEEDS=2000 makes a long run.
func TestModel(t *testing.T) {
	t.Parallel()
	seeds := 6
	if testing.Short() || storetest.RaceEnabled { // 2 took 4.3 s at a load of 22
		seeds = 1
	}
	storetest.RunModel(t, storetest.ModelHarness{
		NoNUL: true,
		New: func(t testing.TB, now func() time.Time) sessiontree.Storage {
			return newSession(t, openWith(t, pgtest.Migrated.Database(t), pgengine.Options{Now: now}))
		},
		Reopen: func(t testing.TB, st sessiontree.Storage, now func() time.Time) sessiontree.Storage {
			st.(*pgengine.Storage).DB().Close()
			return openAgain(t, st, now)
		},
		Other: openAgain,
		DB:    func(st sessiontree.Storage) storetest.ModelDB { return st.(*pgengine.Storage).DB() },
		Recreate: func(t testing.TB, st sessiontree.Storage, meta sessiontree.SessionMeta) sessiontree.Storage {
			s, err := st.(*pgengine.Storage).DB().CreateSession(context.Background(), meta)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}, seeds, 40)
}

// openAgain opens st's session again through a new pool of connections
// on its database, on the clock now.
func openAgain(t testing.TB, st sessiontree.Storage, now func() time.Time) sessiontree.Storage {
	t.Helper()
	s := st.(*pgengine.Storage)
	again, err := openWith(t, s.DB().URL(), pgengine.Options{Now: now}).OpenSession(context.Background(), s.ID())
	if err != nil {
		t.Fatal(err)
	}
	return again
}
