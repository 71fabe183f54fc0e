package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/internal/canceltest"
	"github.com/sessiontree/sessiontree/storetest"
)

// TestCancelWrites runs storetest.RunWriteCancel: AppendAll,
// AppendBatch and SetLeaf cancelled at each point they check their
// context store all or nothing.
func TestCancelWrites(t *testing.T) {
	db := newDB(t)
	st := newSession(t, db)
	points := 400
	if testing.Short() {
		points = 12
	}
	storetest.RunWriteCancel(t, st, func(ctx context.Context) error { return db.Check(ctx, st.ID()) }, points)
}

// TestCancelOpen cancels Open at every point it checks its context, on a
// new file (its migrations) and on an existing database: a cancelled
// Open returns the context's error and leaves no connection, file or
// goroutine behind, and the database opens afterwards and checks clean.
func TestCancelOpen(t *testing.T) {
	points := 400
	switch {
	case testing.Short():
		points = 12
	case storetest.RaceEnabled:
		points = 60 // spread over the run's checks; 400 took 63 s in CI's run
	}
	for _, fresh := range []bool{true, false} {
		t.Run(fmt.Sprintf("fresh=%v", fresh), func(t *testing.T) {
			canceltest.Sweep(t, points, func(ctx context.Context) error {
				path := filepath.Join(t.TempDir(), "s.db")
				if !fresh {
					emptyDB.CopyTo(t, path)
				}
				before := canceltest.Take()
				db, err := engine.Open(ctx, path, engine.Options{})
				if err == nil {
					err = db.Close()
				}
				before.Settled(t, "after Open and Close")
				again, oerr := engine.Open(context.Background(), path, engine.Options{})
				if oerr != nil {
					t.Fatalf("Open after an Open that returned %v: %v", err, oerr)
				}
				if cerr := again.Check(context.Background(), ""); cerr != nil {
					t.Errorf("Check after an Open that returned %v: %v", err, cerr)
				}
				if cerr := again.Close(); cerr != nil {
					t.Fatal(cerr)
				}
				return err
			}, func(int64, error) {})
		})
	}
}
