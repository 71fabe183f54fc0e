package engine

import (
	"context"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestPrebuildFollowsTheLeaf: an append's entries are built before its
// transaction under the leaf its Storage last left, and used when the
// transaction finds that leaf; when another handle has moved the leaf
// since, the transaction builds them again under the leaf it finds.
func TestPrebuildFollowsTheLeaf(t *testing.T) {
	ctx := context.Background()
	db := openGroupDB(t)
	a := groupSession(t, db)
	b, err := db.OpenSession(ctx, a.ID())
	if err != nil {
		t.Fatal(err)
	}
	d := []sessiontree.Draft{userDraft("one"), userDraft("two")}
	first, err := a.AppendAll(ctx, d, sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leaf := first[1].ID
	if p := a.prebuild(d, a.now()); len(p.under(leaf)) != 2 || p.entries[0].e.ParentID != leaf ||
		p.entries[1].e.ParentID != p.entries[0].e.ID {
		t.Fatalf("prebuilt after the Storage's own append: %+v; want 2 entries chained under %s", p, leaf)
	}
	moved, err := b.Append(ctx, userDraft("from b"), sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := a.prebuild(d, a.now()); p.under(moved.ID) != nil {
		t.Fatalf("prebuilt under %s, used under %s", p.parent, moved.ID)
	}
	got, err := a.Append(ctx, userDraft("after b"), sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := sessiontree.DecodeEntry(got.Raw)
	if err != nil {
		t.Fatal(err)
	}
	if got.ParentID != moved.ID || e.ParentID != moved.ID {
		t.Fatalf("append after another handle's: parent %q, JSON's %q; want %q", got.ParentID, e.ParentID, moved.ID)
	}
}
