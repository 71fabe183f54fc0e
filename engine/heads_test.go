package engine_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// withoutRaw is log with each entry's JSON dropped: what LogHeads answers.
func withoutRaw(log []sessiontree.Entry) []sessiontree.Entry {
	out := make([]sessiontree.Entry, len(log))
	for i, e := range log {
		e.Raw = nil
		out[i] = e
	}
	return out
}

// TestLogHeads checks that the engine's narrow read of a session's heads
// is its log without the JSON: for an empty session, a branched one with
// a move of the leaf, and one whose ids hold a NUL (which once had its
// own way of being read).
func TestLogHeads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t, filepath.Join(t.TempDir(), "s.db"), engine.Options{})
	appendBatch := func(t *testing.T, st *engine.Storage, entries []sessiontree.Entry) {
		t.Helper()
		if err := st.AppendBatch(ctx, entries); err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string]func(t *testing.T, st *engine.Storage){
		"empty": func(t *testing.T, st *engine.Storage) {},
		"branched": func(t *testing.T, st *engine.Storage) {
			appendBatch(t, st, batchChain(t, "a", "", 5))
			appendBatch(t, st, batchChain(t, "b", "a0002", 2))
			if _, err := st.SetLeaf(ctx, "a0004", sessiontree.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		"NUL in ids": func(t *testing.T, st *engine.Storage) {
			appendBatch(t, st, batchChain(t, "a\x00", "", 3))
		},
	}
	for name, fill := range cases {
		t.Run(name, func(t *testing.T) {
			st := newSession(t, db)
			fill(t, st)
			log, err := st.Log(ctx, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			heads, err := st.LogHeads(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(withoutRaw(log), heads); diff != "" {
				t.Errorf("LogHeads differs from the log without its JSON (-log +heads):\n%s", diff)
			}
		})
	}
}
