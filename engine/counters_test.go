package engine_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// TestSummaryCounts builds trees by every write path and compares the
// counts the sessions row keeps with the ones sessiontree.ShapeOf counts
// over the log, and with the counts worked out by hand.
func TestSummaryCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	msg := func(text string) sessiontree.Draft {
		return sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":` + string(userMsg(text)) + `}`)}
	}
	must := func(e sessiontree.Entry, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e.ID
	}
	none := sessiontree.AppendOptions{}
	label := func(st *engine.Storage, target, text string) {
		t.Helper()
		d := sessiontree.Draft{Type: sessiontree.TypeLabel, Fields: json.RawMessage(`{"targetId":"` + target + `","label":"` + text + `"}`)}
		must(st.Append(ctx, d, none))
	}
	compaction := func(keep string) sessiontree.Draft {
		return sessiontree.Draft{Type: sessiontree.TypeCompaction, Fields: json.RawMessage(`{"summary":"s","firstKeptEntryId":"` + keep + `","tokensBefore":1}`)}
	}
	for _, tc := range []struct {
		name  string
		build func(t *testing.T, st *engine.Storage)
		want  sessiontree.Shape
	}{
		{"empty", func(*testing.T, *engine.Storage) {}, sessiontree.Shape{}},
		{"linear", func(t *testing.T, st *engine.Storage) {
			for range 5 {
				must(st.Append(ctx, msg("m"), none))
			}
		}, sessiontree.Shape{Branches: 1, Roots: 1}},
		{"forks, a new root, labels set and cleared", func(t *testing.T, st *engine.Storage) {
			a := must(st.Append(ctx, msg("a"), none))
			b := must(st.Append(ctx, msg("b"), none))
			must(st.SetLeaf(ctx, a, none))
			c := must(st.Append(ctx, msg("c"), none)) // a forks: b and c
			must(st.SetLeaf(ctx, a, none))
			must(st.Append(ctx, msg("c2"), none)) // a third child
			must(st.SetLeaf(ctx, b, none))
			must(st.Append(ctx, msg("b2"), none)) // b's tip moves on
			must(st.SetLeaf(ctx, "", none))
			must(st.Append(ctx, msg("d"), none)) // a second root
			label(st, b, "x")
			label(st, c, "y")
			label(st, b, "")
			label(st, c, "z") // a change, not a new label
		}, sessiontree.Shape{Branches: 4, Roots: 2, Labels: 1}},
		{"moves that start no branch", func(t *testing.T, st *engine.Storage) {
			a := must(st.Append(ctx, msg("a"), none))
			must(st.SetLeaf(ctx, a, none)) // to where it is
			must(st.Append(ctx, msg("b"), none))
			must(st.SetLeaf(ctx, "", none))
			must(st.SetLeaf(ctx, a, none))
		}, sessiontree.Shape{Branches: 1, Roots: 1}},
		{"compactions", func(t *testing.T, st *engine.Storage) {
			a := must(st.Append(ctx, msg("a"), none))
			must(st.Append(ctx, compaction(a), none))
			b := must(st.Append(ctx, msg("b"), none))
			must(st.SetLeaf(ctx, a, none))
			must(st.Append(ctx, compaction(b), none)) // a compaction that forks
		}, sessiontree.Shape{Branches: 2, Roots: 1, Compactions: 2}},
		{"a batch with an entry under a leaf entry", func(t *testing.T, st *engine.Storage) {
			const ts = "2026-03-01T10:00:00.000Z"
			entry := func(typ sessiontree.EntryType, id, parent, fields string) sessiontree.Entry {
				d := sessiontree.Draft{Type: typ, Fields: json.RawMessage(fields)}
				e, err := sessiontree.BuildEntry(d, id, parent, ts)
				if err != nil {
					t.Fatal(err)
				}
				return e
			}
			batch := append(batchChain(t, "a", "", 3),
				entry(sessiontree.TypeLeaf, "l1", "a0002", `{"targetId":"a0000"}`),
				entry(sessiontree.TypeMessage, "x1", "l1", `{"message":`+string(userMsg("x"))+`}`),
				entry(sessiontree.TypeMessage, "x2", "a0000", `{"message":`+string(userMsg("x"))+`}`),
				entry(sessiontree.TypeLabel, "lb", "x2", `{"targetId":"a0001","label":"here"}`))
			if err := st.AppendBatch(ctx, batch); err != nil {
				t.Fatal(err)
			}
		}, sessiontree.Shape{Branches: 3, Roots: 2, Labels: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newSession(t, newDB(t))
			tc.build(t, st)
			sum, err := st.Summary(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Shape != tc.want {
				t.Errorf("Summary().Shape = %+v; want %+v", sum.Shape, tc.want)
			}
			log, err := st.Log(ctx, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			labels, err := st.Labels(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := sessiontree.ShapeOf(log, labels); got != tc.want {
				t.Errorf("ShapeOf(log) = %+v; want %+v", got, tc.want)
			}
			wantList := sessiontree.ListInfoOf(log)
			if sum.List != wantList {
				t.Errorf("Summary().List = %+v; want %+v", sum.List, wantList)
			}
			wantUpdated := ""
			if len(log) > 0 {
				wantUpdated = log[len(log)-1].Timestamp
			}
			if sum.UpdatedAt != wantUpdated {
				t.Errorf("Summary().UpdatedAt = %q; want %q", sum.UpdatedAt, wantUpdated)
			}
		})
	}
}
