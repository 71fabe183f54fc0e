package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/storetest"
)

// TestSummaryCounts runs the shared cases of the tree's counts
// (storetest.RunSummaryCounts) on the engine.
func TestSummaryCounts(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	storetest.RunSummaryCounts(t, func(t *testing.T) sessiontree.Storage { return newSession(t, db) })
}

// TestShapeCountsEveryWrite builds one tree by every write path (appends,
// leaf moves, a move to a leaf entry, compactions, batches whose parents
// are stored or in the batch, forked or not, concurrent appends that
// commit as a group, a whole-log copy) and compares, after each write,
// the counts the engine keeps in the sessions row with
// sessiontree.ShapeOf over the log.
func TestShapeCountsEveryWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	st := newSession(t, db)
	none := sessiontree.AppendOptions{}
	step := 0
	check := func(st *engine.Storage, what string) {
		t.Helper()
		step++
		checkShape(t, st, fmt.Sprintf("step %d (%s)", step, what))
	}
	must := must2[sessiontree.Entry](t)
	msg := func(text string) sessiontree.Draft {
		return sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":` + string(userMsg(text)) + `}`)}
	}
	compaction := func(keep string) sessiontree.Draft {
		return sessiontree.Draft{Type: sessiontree.TypeCompaction, Fields: json.RawMessage(`{"summary":"s","firstKeptEntryId":"` + keep + `","tokensBefore":1}`)}
	}

	a := must(st.Append(ctx, msg("a"), none)).ID
	check(st, "a root")
	b := must(st.Append(ctx, msg("b"), none)).ID
	check(st, "an append under the entry before")
	must(st.SetLeaf(ctx, a, none))
	check(st, "a leaf move")
	must(st.Append(ctx, msg("c"), none))
	check(st, "a fork: the parent's child is the entry after it")
	must(st.SetLeaf(ctx, a, none))
	must(st.Append(ctx, msg("d"), none))
	check(st, "a third child, the second away from its parent")
	must(st.SetLeaf(ctx, b, none))
	cp := must(st.Append(ctx, compaction(a), none)).ID
	check(st, "a compaction under a tip")
	must(st.SetLeaf(ctx, a, none))
	must(st.Append(ctx, compaction(a), none))
	check(st, "a compaction that forks")
	move := must(st.SetLeaf(ctx, "", none)).ID
	must(st.Append(ctx, msg("r"), none))
	check(st, "a second root")
	if _, err := st.SetLeaf(ctx, move, none); err != nil {
		t.Fatal(err)
	}
	must(st.Append(ctx, msg("under a leaf entry"), none))
	check(st, "an append under a leaf entry")

	// A batch: under the entry stored last, under a stored entry that has
	// a child (twice), under a leaf entry of the batch and a stored one,
	// and forks of its own entries.
	log := must2[[]sessiontree.Entry](t)(st.Log(ctx, 0, 0))
	last := log[len(log)-1].ID
	entry := func(typ sessiontree.EntryType, id, parent, fields string) sessiontree.Entry {
		e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: typ, Fields: json.RawMessage(fields)}, id, parent, "2026-03-01T10:00:00.000Z")
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	m := func(text string) string { return `{"message":` + string(userMsg(text)) + `}` }
	batch := append(batchChain(t, "p", last, 3),
		entry(sessiontree.TypeMessage, "s1", b, m("s1")),
		entry(sessiontree.TypeMessage, "s2", b, m("s2")),
		entry(sessiontree.TypeCompaction, "s3", cp, `{"summary":"s","firstKeptEntryId":"`+a+`","tokensBefore":1}`),
		entry(sessiontree.TypeMessage, "q1", "p0000", m("q1")),
		entry(sessiontree.TypeMessage, "q2", "p0000", m("q2")),
		entry(sessiontree.TypeLeaf, "l1", "q2", `{"targetId":"s1"}`),
		entry(sessiontree.TypeMessage, "u1", "l1", m("u1")),
		entry(sessiontree.TypeMessage, "u2", move, m("u2")),
		entry(sessiontree.TypeMessage, "u3", "u1", m("u3")))
	if err := st.AppendBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	check(st, "a batch")
	if err := st.AppendBatch(ctx, batchChain(t, "v", "s1", 2)); err != nil {
		t.Fatal(err)
	}
	check(st, "a batch under a stored entry the batch before forked")

	// Concurrent appends, which share a transaction (group.go), on this
	// session, moved to a stored entry with a child first, and others.
	must(st.SetLeaf(ctx, "q1", none))
	others := []*engine.Storage{newSession(t, db), newSession(t, db)}
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for _, s := range append(others, st) {
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.AppendAll(ctx, []sessiontree.Draft{msg("g1"), compaction(a), msg("g2")}, none)
				if s != st {
					_, err = s.Append(ctx, msg("g"), none)
				}
				errs <- err
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	check(st, "grouped appends")
	for _, s := range others {
		checkShape(t, s, "grouped appends on another session")
	}

	// A whole-log copy (a tree fork).
	var dst *engine.Storage
	err := db.Update(ctx, func(tx *engine.Tx) error {
		var err error
		if dst, err = tx.CreateSession(sessiontree.SessionMeta{Cwd: "/work/test"}); err != nil {
			return err
		}
		return tx.CopyLog(st, dst)
	})
	if err != nil {
		t.Fatal(err)
	}
	check(dst, "a copy")
	want := must2[sessiontree.Summary](t)(st.Summary(ctx)).Shape
	if want.Branches < 8 || want.Roots < 4 || want.Compactions < 3 {
		t.Errorf("the tree's shape is %+v; want a tree with branches, roots and compactions", want)
	}
}

// must2 fails t on an error and returns the value.
func must2[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// checkShape compares the shape the engine keeps for st with ShapeOf
// over its log.
func checkShape(t *testing.T, st *engine.Storage, what string) {
	t.Helper()
	ctx := context.Background()
	sum := must2[sessiontree.Summary](t)(st.Summary(ctx))
	log := must2[[]sessiontree.Entry](t)(st.Log(ctx, 0, 0))
	labels := must2[map[string]string](t)(st.Labels(ctx))
	if want := sessiontree.ShapeOf(log, labels); sum.Shape != want {
		t.Errorf("%s: Summary().Shape = %+v; ShapeOf(log) = %+v", what, sum.Shape, want)
	}
}
