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
	if testing.Short() || storetest.RaceEnabled {
		seeds = 3
	}
	storetest.RunModel(t, storetest.ModelHarness{
		NoNUL: true,
		New: func(t testing.TB, now func() time.Time) sessiontree.Storage {
			return newSession(t, openWith(t, pgtest.Migrated.Database(t), pgengine.Options{Now: now}))
		},
		Reopen: func(t testing.TB, st sessiontree.Storage, now func() time.Time) sessiontree.Storage {
			s := st.(*pgengine.Storage)
			s.DB().Close()
			again, err := openWith(t, s.DB().URL(), pgengine.Options{Now: now}).OpenSession(context.Background(), s.ID())
			if err != nil {
				t.Fatal(err)
			}
			return again
		},
		Other: func(t testing.TB, st sessiontree.Storage, now func() time.Time) sessiontree.Storage {
			s := st.(*pgengine.Storage)
			other, err := openWith(t, s.DB().URL(), pgengine.Options{Now: now}).OpenSession(context.Background(), s.ID())
			if err != nil {
				t.Fatal(err)
			}
			return other
		},
		Delete: func(ctx context.Context, st sessiontree.Storage, opts sessiontree.DeleteOptions) error {
			s := st.(*pgengine.Storage)
			return s.DB().DeleteSession(ctx, s.ID(), opts)
		},
		Recreate: func(t testing.TB, st sessiontree.Storage, meta sessiontree.SessionMeta) sessiontree.Storage {
			s, err := st.(*pgengine.Storage).DB().CreateSession(context.Background(), meta)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		Check: func(ctx context.Context, st sessiontree.Storage) error {
			s := st.(*pgengine.Storage)
			return s.DB().Check(ctx, s.ID())
		},
		Usage: func(ctx context.Context, st sessiontree.Storage, q sessiontree.UsageQuery) (sessiontree.UsageReport, error) {
			return st.(*pgengine.Storage).DB().Usage(ctx, q)
		},
	}, seeds, 40)
}
