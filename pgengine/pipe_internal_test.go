package pgengine

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
)

// TestAppendPipelines: ordinary appends, an empty session's first
// included, take the two-round-trip path. A guard or an id refused there rolls
// the transaction back and leaves the pool's one connection usable; so
// does another holder's claim.
func TestAppendPipelines(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStorage(t, openTestDB(t, Options{MaxConns: 1}))
	none := sessiontree.AppendOptions{}
	first, err := st.appendPiped(ctx, customDraft(0), none)
	if err != nil || first.ParentID != "" || first.Seq != 1 {
		t.Fatalf("first append = %+v, %v; want a root, seq 1", first, err)
	}
	second, err := st.appendPiped(ctx, customDraft(1), none)
	if err != nil || second.ParentID != first.ID || second.Seq != 2 {
		t.Fatalf("pipelined append = %+v, %v; want the leaf's child, seq 2", second, err)
	}
	stale := first.ID
	if _, err := st.appendPiped(ctx, customDraft(2), sessiontree.AppendOptions{IfLeaf: &stale}); !errors.Is(err, sessiontree.ErrConflict) {
		t.Errorf("append guarded by a stale leaf: %v, want ErrConflict", err)
	}
	d := customDraft(3)
	d.ID = first.ID
	if _, err := st.appendPiped(ctx, d, none); !errors.Is(err, sessiontree.ErrConflict) {
		t.Errorf("append of a taken id: %v, want ErrConflict", err)
	}
	third, err := st.appendPiped(ctx, customDraft(4), none)
	if err != nil || third.ParentID != second.ID || third.Seq != 3 {
		t.Fatalf("append after the refusals = %+v, %v; want the leaf's child, seq 3", third, err)
	}
	if stats, err := st.Stats(ctx); err != nil || stats.Entries != 3 {
		t.Errorf("Stats = %+v, %v; want 3 entries", stats, err)
	}
	if leaf, err := st.Leaf(ctx); err != nil || leaf != third.ID {
		t.Errorf("Leaf = %q, %v; want %s", leaf, err, third.ID)
	}
	// Another handle's claim refuses it, from the row's write-back, and
	// nothing is kept.
	other, err := st.db.OpenStorage(ctx, st.ID())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Claim(ctx, "agent", time.Minute); err != nil {
		t.Fatal(err)
	}
	var ce *sessiontree.ClaimedError
	if _, err := st.appendPiped(ctx, customDraft(5), none); !errors.As(err, &ce) || ce.Holder != "agent" {
		t.Errorf("append past another's claim: %v, want a ClaimedError naming agent", err)
	}
	if stats, err := st.Stats(ctx); err != nil || stats.Entries != 3 {
		t.Errorf("Stats after the refusal = %+v, %v; want 3 entries", stats, err)
	}
}

// TestPipedAppendNeedsTheLeafRead: a lock that waited for another writer
// read the row as that writer left it but the leaf's entry in the
// snapshot from before (none found): the pipelined path leaves such an
// append to the general path, which reads the leaf again.
func TestPipedAppendNeedsTheLeafRead(t *testing.T) {
	t.Parallel()
	st := &session{leafID: sql.NullString{String: "0000abcd", Valid: true}}
	if _, _, err := st.pipedAppend(customDraft(0), sessiontree.AppendOptions{}); !errors.Is(err, errNotPiped) {
		t.Errorf("pipedAppend under a leaf not read = %v, want errNotPiped", err)
	}
}
