package engine_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/internal/canceltest"
	"github.com/sessiontree/sessiontree/storetest"
)

// waitRolledBack returns once database/sql has rolled back the write
// transaction whose context was cancelled (it does so on a goroutine of
// its own): another connection then gets the write lock.
func waitRolledBack(t *testing.T, db *engine.DB) {
	t.Helper()
	ctx := context.Background()
	c, err := rawDB(t, db.Path()).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(ctx, `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
}

// TestUpdateCancelledMidway cancels an Update's context while its
// function runs, between two calls of its transaction (a fork between
// creating its session and appending to it), and after its last call:
// the transaction is rolled back, and every call after the cancellation,
// and Update, answer the context's error. A call used to run its
// statements after that rollback, outside any transaction, where the
// session just created was "not found", and Update answered "commit:
// sql: transaction has already been committed or rolled back", a
// storage failure.
func TestUpdateCancelledMidway(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after func(tx *engine.Tx) error
	}{
		{"between calls", func(tx *engine.Tx) error {
			_, err := tx.OpenSession("made")
			if !errors.Is(err, context.Canceled) {
				t.Errorf("OpenSession(made) after the cancel = %v; want context.Canceled", err)
			}
			return err
		}},
		{"after the last call", func(*engine.Tx) error { return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := newDB(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			err := db.Update(ctx, func(tx *engine.Tx) error {
				if _, err := tx.CreateSession(sessiontree.SessionMeta{ID: "made", Cwd: "/w"}); err != nil {
					return err
				}
				cancel()
				waitRolledBack(t, db)
				return tc.after(tx)
			})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Update = %v; want context.Canceled", err)
			}
			if _, err := db.OpenSession(context.Background(), "made"); !errors.Is(err, sessiontree.ErrNotFound) {
				t.Errorf("OpenSession(made) after the cancelled Update = %v; want ErrNotFound", err)
			}
		})
	}
}

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
	if testing.Short() {
		points = 12
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
