package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/canceltest"
)

// RunWriteCancel cancels st's writes at every point they check their
// context (a spread of at most points of them): an append of many drafts
// in one transaction (a [sessiontree.DatabaseSession]'s AppendAll), a
// batch of built entries (a [sessiontree.BatchAppender]'s), a move of
// the leaf onto an old branch. Each stores all of its entries or none, as its error
// says (a write cancelled while its commit was on its way, which matches
// sessiontree.ErrCommitUnknown, either), and check (the engine's check
// of the session) passes after each.
func RunWriteCancel(t *testing.T, st sessiontree.Storage, check func(ctx context.Context) error, points int) {
	t.Helper()
	drafts := make([]sessiontree.Draft, 40)
	for i := range drafts {
		f, err := sessiontree.Fields("message", map[string]string{"role": "user", "content": fmt.Sprintf("m%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		drafts[i] = sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: f}
	}
	first := AppendStep(t, st, 0)
	type write struct {
		name string
		n    int // entries a run stores
		op   func(ctx context.Context) error
	}
	var writes []write
	if ds, ok := st.(sessiontree.DatabaseSession); ok {
		writes = append(writes, write{"append all", len(drafts), func(ctx context.Context) error {
			_, err := ds.AppendAll(ctx, drafts, sessiontree.AppendOptions{})
			return err
		}})
	}
	if ba, ok := st.(sessiontree.BatchAppender); ok {
		writes = append(writes, write{"append batch", len(drafts), func(ctx context.Context) error {
			return ba.AppendBatch(ctx, builtEntries(t, st, drafts))
		}})
	}
	for _, tc := range append(writes, []write{
		{"set leaf", 1, func(ctx context.Context) error {
			_, err := st.SetLeaf(ctx, first.ID, sessiontree.AppendOptions{})
			return err
		}},
	}...) {
		t.Run(tc.name, func(t *testing.T) {
			canceltest.Sweep(t, points, func(ctx context.Context) error {
				before := logLen(t, st)
				err := tc.op(ctx)
				got := logLen(t, st)
				stored := err == nil || errors.Is(err, sessiontree.ErrCommitUnknown) && got == before+tc.n
				if want := before + map[bool]int{true: tc.n}[stored]; got != want {
					t.Errorf("%s that returned %v: %d entries; want %d", tc.name, err, got, want)
				}
				if cerr := check(context.Background()); cerr != nil {
					t.Errorf("check after a %s that returned %v: %v", tc.name, err, cerr)
				}
				return err
			}, func(int64, error) {})
		})
	}
}

// builtEntries builds entries of drafts chained under st's leaf, with
// fresh ids.
func builtEntries(t *testing.T, st sessiontree.Storage, drafts []sessiontree.Draft) []sessiontree.Entry {
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
