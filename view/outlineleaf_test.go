package view_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/view"
)

// TestTreeFromOutlineUnderLeafEntry: a move to a leaf entry with a
// summary puts the summary under the leaf entry, which was stored right
// after its parent. The outline left that leaf entry out, so `tree --all`
// on the engine drew neither it nor the summary under it: the summary
// stood as a root of its own.
func TestTreeFromOutlineUnderLeafEntry(t *testing.T) {
	ctx := context.Background()
	db, err := engine.Open(ctx, filepath.Join(t.TempDir(), "tree.db"), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	st, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/tree"})
	if err != nil {
		t.Fatal(err)
	}
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	var ids []string
	for _, text := range []string{"a", "b"} {
		e, err := s.AppendMessage(ctx, []byte(`{"role":"user","content":"`+text+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	moved, err := st.SetLeaf(ctx, ids[0], sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.MoveTo(ctx, moved.ID, &sessiontree.BranchSummary{Summary: "left b"}); err != nil {
		t.Fatal(err)
	}
	d, err := view.LoadSessionData(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := view.WriteTreeData(&want, d, view.TreeOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.String(), treeText(t, st, true)); diff != "" {
		t.Errorf("tree --all from the outline differs from the tree of the log (-log +outline):\n%s", diff)
	}
}
