package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/internal/canceltest"
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

// TestCancelWrites cancels a session's writes at every point they check
// their context: an append of many drafts (a group commit's), a batch of
// built entries, a move of the leaf onto an old branch. Each stores all
// of its entries or none (its error says which), and the session passes
// Check.
func TestCancelWrites(t *testing.T) {
	db := newDB(t)
	st := newSession(t, db)
	ctx := context.Background()
	drafts := make([]sessiontree.Draft, 40)
	for i := range drafts {
		f, err := sessiontree.Fields("message", userMsg(fmt.Sprintf("m%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		drafts[i] = sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: f}
	}
	first, err := st.AppendAll(ctx, drafts[:2], sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	points := 400
	if testing.Short() {
		points = 12
	}
	for _, tc := range []struct {
		name string
		n    int // entries a run stores
		op   func(ctx context.Context) error
	}{
		{"append all", len(drafts), func(ctx context.Context) error {
			_, err := st.AppendAll(ctx, drafts, sessiontree.AppendOptions{})
			return err
		}},
		{"append batch", len(drafts), func(ctx context.Context) error {
			return st.AppendBatch(ctx, builtEntries(t, st, drafts))
		}},
		{"set leaf", 1, func(ctx context.Context) error {
			_, err := st.SetLeaf(ctx, first[0].ID, sessiontree.AppendOptions{})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := canceltest.Sweep(t, points, func(ctx context.Context) error {
				before := logLen(t, st)
				err := tc.op(ctx)
				want := before
				if err == nil {
					want += tc.n
				}
				if got := logLen(t, st); got != want {
					t.Errorf("%s that returned %v: %d entries; want %d", tc.name, err, got, want)
				}
				if cerr := db.Check(context.Background(), st.ID()); cerr != nil {
					t.Errorf("Check after a %s that returned %v: %v", tc.name, err, cerr)
				}
				return err
			}, func(int64, error) {})
			t.Logf("%s: %d checks", tc.name, n)
		})
	}
}

// builtEntries builds entries of drafts chained under st's leaf, with
// fresh ids.
func builtEntries(t *testing.T, st *engine.Storage, drafts []sessiontree.Draft) []sessiontree.Entry {
	t.Helper()
	parent, err := st.Leaf(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := make([]sessiontree.Entry, len(drafts))
	for i, d := range drafts {
		e, err := sessiontree.BuildEntry(d, sessiontree.NewEntryID(nil), parent, "2026-01-01T00:00:00.000Z")
		if err != nil {
			t.Fatal(err)
		}
		out[i], parent = e, e.ID
	}
	return out
}

// logLen is how many entries st's log holds.
func logLen(t *testing.T, st *engine.Storage) int {
	t.Helper()
	log, err := st.Log(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(log)
}
