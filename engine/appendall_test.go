package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/sessiontree/sessiontree"
)

func message(text string) sessiontree.Draft {
	return sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":` + string(userMsg(text)) + `}`)}
}

// TestAppendAll checks that AppendAll chains its drafts under the leaf in
// one transaction: all stored, or none when one is refused or the guard
// fails, and the session's counters and leaf follow.
func TestAppendAll(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	st := newSession(t, db)
	first, err := st.Append(ctx, message("first"), sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := st.AppendAll(ctx, []sessiontree.Draft{message("a"), message("b"), {Type: "future_type", Fields: json.RawMessage(`{"x":1}`)}},
		sessiontree.IfLeaf(first.ID))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 || out[0].ParentID != first.ID || out[1].ParentID != out[0].ID || out[2].ParentID != out[1].ID ||
		out[0].Seq != 2 || out[2].Seq != 4 {
		t.Fatalf("AppendAll = %+v; want three entries chained under %s, seq 2 to 4", out, first.ID)
	}
	if leaf, _ := st.Leaf(ctx); leaf != out[2].ID {
		t.Errorf("Leaf() = %q; want %q", leaf, out[2].ID)
	}
	refused := []struct {
		name   string
		drafts []sessiontree.Draft
		opts   sessiontree.AppendOptions
		want   error
	}{
		{"stale guard", []sessiontree.Draft{message("c")}, sessiontree.IfLeaf(first.ID), sessiontree.ErrConflict},
		{"missing label target", []sessiontree.Draft{message("c"),
			{Type: sessiontree.TypeLabel, Fields: json.RawMessage(`{"targetId":"feedbeef","label":"x"}`)}}, sessiontree.AppendOptions{}, sessiontree.ErrNotFound},
		{"used id", []sessiontree.Draft{message("c"), {ID: first.ID, Type: "custom", Fields: json.RawMessage(`{"customType":"x"}`)}},
			sessiontree.AppendOptions{}, sessiontree.ErrConflict},
		{"leaf entry", []sessiontree.Draft{message("c"), {Type: sessiontree.TypeLeaf, Fields: json.RawMessage(`{"targetId":null}`)}},
			sessiontree.AppendOptions{}, sessiontree.ErrInvalidEntry},
	}
	for _, c := range refused {
		if _, err := st.AppendAll(ctx, c.drafts, c.opts); !errors.Is(err, c.want) {
			t.Errorf("AppendAll(%s) = %v; want %v", c.name, err, c.want)
		}
	}
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := st.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 4 || stats.Entries != 4 || stats.TotalMessages != 3 {
		t.Errorf("after refused appends: %d entries in the log, stats %d entries, %d messages; want 4, 4, 3", len(log), stats.Entries, stats.TotalMessages)
	}
	if out, err := st.AppendAll(ctx, nil, sessiontree.AppendOptions{}); err != nil || len(out) != 0 {
		t.Errorf("AppendAll(nil) = %v, %v; want nothing", out, err)
	}
}
