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
	if p := a.prebuild(d, a.now()); p.at(0, leaf) == nil || p.at(1, p.entries[0].e.ID) == nil ||
		p.at(2, p.entries[1].e.ID) != nil {
		t.Fatalf("prebuilt after the Storage's own append: %+v; want 2 entries chained under %s", p, leaf)
	}
	moved, err := b.Append(ctx, userDraft("from b"), sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := a.prebuild(d, a.now()); p.at(0, moved.ID) != nil {
		t.Fatalf("prebuilt under %s, used under %s", p.entries[0].e.ParentID, moved.ID)
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

// TestPrebuildAfterIDCollision: when the fresh id an append's first entry
// was built with before the transaction is already used in the session,
// the transaction takes another id for it; the append's next entry, built
// under the first id, must then be built again under the id taken, or it
// is stored with a parentId naming the other entry (a wrong tree).
func TestPrebuildAfterIDCollision(t *testing.T) {
	ctx := context.Background()
	db := openGroupDB(t)
	st := groupSession(t, db)
	old, err := st.Append(ctx, sessiontree.Draft{ID: "0a0a0a0a", Type: sessiontree.TypeMessage,
		Fields: userDraft("old").Fields}, sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	drafts := []sessiontree.Draft{userDraft("one"), userDraft("two")}
	now := st.now()
	pre := st.prebuild(drafts, now)
	// The first entry's fresh id happens to be one the session holds.
	parent := old.ID
	for i, id := range []string{old.ID, "0b0b0b0b"} {
		e, sf, err := sessiontree.BuildEntryFacts(drafts[i], id, parent, now)
		if err != nil {
			t.Fatal(err)
		}
		pre.entries[i], parent = built{e: e, f: factsFrom(e, sf)}, id
	}
	r := &appendReq{ctx: ctx, s: st, drafts: drafts, now: now, pre: pre}
	db.appendGrouped(r)
	if r.err != nil {
		t.Fatal(r.err)
	}
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 3 {
		t.Fatalf("%d entries stored; want 3", len(log))
	}
	first, second := log[1], log[2]
	e, err := sessiontree.DecodeEntry(second.Raw)
	if err != nil {
		t.Fatal(err)
	}
	if first.ID == old.ID || first.ParentID != old.ID || second.ParentID != first.ID || e.ParentID != first.ID {
		t.Fatalf("stored %s under %s, then %s under %s (JSON's %s); want a fresh id under %s, then the next under it",
			first.ID, first.ParentID, second.ID, second.ParentID, e.ParentID, old.ID)
	}
}
