package engine_test

import (
	"context"
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
	db := newDB(t)
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

// TestReadsSurviveDamagedEntryCount damages the entry count of a session's
// row (Check reports it): the reads that size their lists by it, the
// heads and the import's list of ids, must still answer what the entries
// table holds. A huge count panicked them (makeslice: cap out of range)
// or had them allocate that much.
func TestReadsSurviveDamagedEntryCount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, count := range []string{"1 << 50"} {
		db := openDamaged(t)
		st := newSession(t, db)
		appendLines(t, st,
			`{"type":"message","id":"a","parentId":null,"timestamp":"2026-03-01T10:00:00.000Z","message":{"role":"user","content":"a"}}`,
			`{"type":"message","id":"b","parentId":"a","timestamp":"2026-03-01T10:00:01.000Z","message":{"role":"user","content":"b"}}`)
		damage(t, db, `UPDATE sessions SET entry_count = `+count)
		heads, err := st.LogHeads(ctx)
		if err != nil || len(heads) != 2 {
			t.Errorf("entry_count %s: LogHeads = %d heads, %v; want 2", count, len(heads), err)
		}
		var ids []string
		err = engine.NewDatabase(db).View(ctx, func(tx sessiontree.DatabaseTx) (err error) {
			ids, err = tx.SessionEntryIDs(st.ID())
			return err
		})
		if err != nil || !cmp.Equal(ids, []string{"a", "b"}) {
			t.Errorf("entry_count %s: SessionEntryIDs = %v, %v; want [a b]", count, ids, err)
		}
	}
}
