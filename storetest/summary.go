package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// CheckSummary compares st's Summary with what its log gives: the tree's
// counts (sessiontree.ShapeOf, and want when not nil), the list's and the
// last change.
func CheckSummary(t testing.TB, st sessiontree.Storage, what string, want *sessiontree.Shape) {
	t.Helper()
	ctx := context.Background()
	sr, ok := st.(sessiontree.SummaryReader)
	if !ok {
		t.Fatalf("%s: %T keeps no summary (sessiontree.SummaryReader)", what, st)
	}
	sum, err := sr.Summary(ctx)
	if err != nil {
		t.Fatalf("%s: Summary: %v", what, err)
	}
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	labels, err := st.Labels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if of := sessiontree.ShapeOf(log, labels); sum.Shape != of || want != nil && sum.Shape != *want {
		t.Errorf("%s: Summary().Shape = %+v; ShapeOf(log) gives %+v, want %+v", what, sum.Shape, of, want)
	}
	if wantList := sessiontree.ListInfoOf(log); sum.List != wantList {
		t.Errorf("%s: Summary().List = %+v; want %+v", what, sum.List, wantList)
	}
	wantUpdated := ""
	if len(log) > 0 {
		meta, err := st.Meta(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wantUpdated = sessiontree.LastChange(meta.CreatedAt, log[len(log)-1].Timestamp)
	}
	if sum.UpdatedAt != wantUpdated {
		t.Errorf("%s: Summary().UpdatedAt = %q; want %q", what, sum.UpdatedAt, wantUpdated)
	}
}

// RunSummaryCounts builds trees by the writes of the storage interface
// (appends, leaf moves, AppendUnder, batches whose parents are stored,
// in the batch or a leaf entry, labels set, changed and cleared,
// compactions), each in a session newSession makes, and compares the
// counts a [sessiontree.SummaryReader] keeps with ShapeOf over the log
// and with the counts worked out by hand (CheckSummary). Every database
// engine runs it.
func RunSummaryCounts(t *testing.T, newSession func(t *testing.T) sessiontree.Storage) {
	ctx := context.Background()
	none := sessiontree.AppendOptions{}
	must := func(e sessiontree.Entry, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e.ID
	}
	label := func(st sessiontree.Storage, target, text string) {
		t.Helper()
		must(st.Append(ctx, sessiontree.Draft{Type: sessiontree.TypeLabel, Fields: objectOf(t, "targetId", target, "label", text)}, none))
	}
	compaction := func(keep string) sessiontree.Draft {
		return sessiontree.Draft{Type: sessiontree.TypeCompaction, Fields: objectOf(t, "summary", "s", "firstKeptEntryId", keep, "tokensBefore", 1)}
	}
	const ts = "2026-03-01T10:00:00.000Z"
	entry := func(typ sessiontree.EntryType, id, parent string, fields ...any) sessiontree.Entry {
		t.Helper()
		e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: typ, Fields: objectOf(t, fields...)}, id, parent, ts)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	msg := func(id, parent string) sessiontree.Entry {
		return entry(sessiontree.TypeMessage, id, parent, "message", map[string]any{"role": "user", "content": id})
	}
	for _, tc := range []struct {
		name  string
		build func(st sessiontree.Storage)
		want  sessiontree.Shape
	}{
		{"empty", func(sessiontree.Storage) {}, sessiontree.Shape{}},
		{"linear", func(st sessiontree.Storage) {
			for range 5 {
				must(st.Append(ctx, userDraft("m"), none))
			}
		}, sessiontree.Shape{Branches: 1, Roots: 1}},
		{"forks, a new root, labels set and cleared", func(st sessiontree.Storage) {
			a := must(st.Append(ctx, userDraft("a"), none))
			b := must(st.Append(ctx, userDraft("b"), none))
			must(st.SetLeaf(ctx, a, none))
			c := must(st.Append(ctx, userDraft("c"), none)) // a forks: b and c
			must(st.SetLeaf(ctx, a, none))
			must(st.Append(ctx, userDraft("c2"), none)) // a third child
			must(st.SetLeaf(ctx, b, none))
			must(st.Append(ctx, userDraft("b2"), none)) // b's tip moves on
			must(st.SetLeaf(ctx, "", none))
			must(st.Append(ctx, userDraft("d"), none)) // a second root
			label(st, b, "x")
			label(st, c, "y")
			label(st, b, "")
			label(st, c, "z") // a change, not a new label
		}, sessiontree.Shape{Branches: 4, Roots: 2, Labels: 1}},
		{"moves that start no branch", func(st sessiontree.Storage) {
			a := must(st.Append(ctx, userDraft("a"), none))
			must(st.SetLeaf(ctx, a, none)) // to where it is
			must(st.Append(ctx, userDraft("b"), none))
			must(st.SetLeaf(ctx, "", none))
			must(st.SetLeaf(ctx, a, none))
		}, sessiontree.Shape{Branches: 1, Roots: 1}},
		{"compactions", func(st sessiontree.Storage) {
			a := must(st.Append(ctx, userDraft("a"), none))
			must(st.Append(ctx, compaction(a), none))
			b := must(st.Append(ctx, userDraft("b"), none))
			must(st.SetLeaf(ctx, a, none))
			must(st.Append(ctx, compaction(b), none)) // a compaction that forks
		}, sessiontree.Shape{Branches: 2, Roots: 1, Compactions: 2}},
		{"AppendUnder", func(st sessiontree.Storage) {
			a := must(st.Append(ctx, userDraft("a"), none))
			must(st.Append(ctx, userDraft("b"), none))
			must(st.AppendUnder(ctx, a, userDraft("c"), none)) // a forks
			must(st.Append(ctx, userDraft("d"), none))
			must(st.AppendUnder(ctx, a, userDraft("e"), none)) // a third child
		}, sessiontree.Shape{Branches: 3, Roots: 1}},
		{"batches under stored parents, in the batch and a leaf entry", func(st sessiontree.Storage) {
			first := []sessiontree.Entry{msg("a0", ""), msg("a1", "a0"), msg("a2", "a1")}
			if err := st.(sessiontree.BatchAppender).AppendBatch(ctx, first); err != nil {
				t.Fatal(err)
			}
			second := []sessiontree.Entry{
				msg("b0", "a2"), // under the entry stored last: no fork
				msg("b1", "a0"), // a0 forks (a stored parent, looked up)
				msg("b2", "a0"), // a third child, known in the batch
				msg("b3", "b1"), // b1's tip moves on
				msg("b4", "b1"), // b1 forks (a parent of the batch)
				entry(sessiontree.TypeLeaf, "l1", "b4", "targetId", "a1"),
				msg("x1", "l1"), // under a leaf entry: a root
				msg("x2", "a1"), // a1 forks
				entry(sessiontree.TypeLabel, "lb", "x2", "targetId", "a0", "label", "here"),
			}
			if err := st.(sessiontree.BatchAppender).AppendBatch(ctx, second); err != nil {
				t.Fatal(err)
			}
			// A pipelined append under the batch's leaf, lb (under x2).
			must(st.Append(ctx, userDraft("after"), none))
		}, sessiontree.Shape{Branches: 6, Roots: 2, Labels: 1}}, // tips b0, b2, b3, b4, x1, after
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newSession(t)
			tc.build(st)
			CheckSummary(t, st, tc.name, &tc.want)
		})
	}
}

// userDraft is a user message with content text.
func userDraft(text string) sessiontree.Draft {
	return sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: mustJSON(map[string]any{"message": map[string]any{"role": "user", "content": text}})}
}

// objectOf is the JSON object of key/value pairs.
func objectOf(t testing.TB, pairs ...any) json.RawMessage {
	t.Helper()
	m := map[string]any{}
	for i := 0; i+1 < len(pairs); i += 2 {
		m[pairs[i].(string)] = pairs[i+1]
	}
	return mustJSON(m)
}

// SummaryStorage is a database session that keeps its summary and its
// row's metadata (both engines' sessions).
type SummaryStorage interface {
	sessiontree.Storage
	sessiontree.SummaryReader
	sessiontree.InfoReader
}

// NoLog is a database session whose log, heads and labels cannot be
// read (each read fails T): info must answer from its rows alone.
type NoLog struct {
	SummaryStorage
	T testing.TB
}

// Log fails the test: info read the log.
func (s NoLog) Log(context.Context, int64, int) ([]sessiontree.Entry, error) {
	s.T.Error("LoadInfo read the log")
	return nil, errors.New("no log")
}

// LogHeads fails the test: info read the log's heads.
func (s NoLog) LogHeads(context.Context) ([]sessiontree.Entry, error) {
	s.T.Error("LoadInfo read the log's heads")
	return nil, errors.New("no log")
}

// Labels fails the test: info read every label.
func (s NoLog) Labels(context.Context) (map[string]string, error) {
	s.T.Error("LoadInfo read every label")
	return nil, errors.New("no labels")
}
