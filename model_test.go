package sessiontree_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/storetest"
)

// TestModel drives random sequences of API calls against every backend
// and the root package's rules over the log (storetest.RunModel).
// SESSIONTREE_MODEL_SEEDS=5000 makes a long run.
func TestModel(t *testing.T) {
	seeds, steps := 40, 40
	if testing.Short() { // 10 took the engine 2.5 s at a load of 13, 6.4 s at 22
		seeds = 6
	}
	if storetest.RaceEnabled { // 4 took the engine 9.8 s under the race detector
		seeds = 2
	}
	for _, h := range []struct {
		name string
		h    storetest.ModelHarness
	}{{"memory", memoryModel()}, {"jsonl", jsonlModel()}, {"engine", engineModel()}} {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			storetest.RunModel(t, h.h, seeds, steps)
		})
	}
}

// modelOf drives through RunModel a backend without claims, whose
// conformance harness is h.
func modelOf(h storetest.Harness) storetest.ModelHarness {
	return storetest.ModelHarness{
		New: func(t testing.TB, _ func() time.Time) sessiontree.Storage { return h.New(t) },
		Reopen: func(t testing.TB, st sessiontree.Storage, _ func() time.Time) sessiontree.Storage {
			return h.Reopen(t, st)
		},
	}
}

func memoryModel() storetest.ModelHarness { return modelOf(memoryHarness()) }

// jsonlModel checks the file by reading it again strictly.
func jsonlModel() storetest.ModelHarness {
	h := modelOf(jsonlHarness())
	h.Check = func(ctx context.Context, st sessiontree.Storage) error {
		again, err := jsonl.Open(ctx, st.(*jsonl.Storage).File(), jsonl.Options{ReadOnly: true, Mode: jsonl.Strict})
		if err != nil {
			return err
		}
		return again.Close()
	}
	return h
}

// engineModel drives the SQLite engine: claims on the model's clock,
// delete and re-create, the database's check and usage report.
func engineModel() storetest.ModelHarness {
	return storetest.ModelHarness{
		New: func(t testing.TB, now func() time.Time) sessiontree.Storage {
			path := filepath.Join(t.TempDir(), "sessions.db")
			emptyEngine.CopyTo(t, path)
			st, err := openEngineAt(t, path, now).CreateSession(context.Background(), sessiontree.SessionMeta{Cwd: "/tmp/project"})
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
		Reopen: func(t testing.TB, st sessiontree.Storage, now func() time.Time) sessiontree.Storage {
			if err := st.(*engine.Storage).DB().Close(); err != nil {
				t.Fatal(err)
			}
			return openEngineAgain(t, st, now)
		},
		Other: openEngineAgain,
		DB:    func(st sessiontree.Storage) storetest.ModelDB { return st.(*engine.Storage).DB() },
		Recreate: func(t testing.TB, st sessiontree.Storage, meta sessiontree.SessionMeta) sessiontree.Storage {
			s, err := st.(*engine.Storage).DB().CreateSession(context.Background(), meta)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
}

// openEngineAgain opens st's session again through a new DB on its file,
// on the clock now.
func openEngineAgain(t testing.TB, st sessiontree.Storage, now func() time.Time) sessiontree.Storage {
	t.Helper()
	s := st.(*engine.Storage)
	again, err := openEngineAt(t, s.DB().Path(), now).OpenSession(context.Background(), s.ID())
	if err != nil {
		t.Fatal(err)
	}
	return again
}

// openEngineAt opens the database at path on the clock now, closed when
// t ends.
func openEngineAt(t testing.TB, path string, now func() time.Time) *engine.DB {
	t.Helper()
	db, err := engine.Open(context.Background(), path, engine.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}
