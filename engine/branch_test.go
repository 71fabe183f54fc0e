package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestMoveOntoRunWithMissingEntry checks that moving the leaf onto a run
// of entries with one missing (a damaged file) is refused as corrupt and
// leaves the branch as it was, instead of writing a branch with a gap.
func TestMoveOntoRunWithMissingEntry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDamaged(t)
	st := newSession(t, db)
	// a0000..a0009 (keys 1..10), then b0000 under a0004 (key 11): the
	// branch is a0000..a0004, b0000, 6 rows deep.
	appendChains(t, st, batchChain(t, "a", "", 10), batchChain(t, "b", "a0004", 1))
	damage(t, db, `DROP TRIGGER entries_no_delete`, `DELETE FROM entries WHERE id = 'a0007'`)
	// The move to a0009 rewrites depth 6 and adds depths 7..10, the keys
	// 7..10 of one run, of which 8 is gone.
	if _, err := st.SetLeaf(ctx, "a0009", sessiontree.AppendOptions{}); !errors.Is(err, sessiontree.ErrCorrupt) {
		t.Fatalf("SetLeaf(a0009) = %v; want %v", err, sessiontree.ErrCorrupt)
	}
	p, err := st.Path(ctx, "b0000")
	if err != nil || len(p) != 6 {
		t.Fatalf("after the refused move, Path(b0000) = %d entries, %v; want 6", len(p), err)
	}
	if leaf, err := st.Leaf(ctx); err != nil || leaf != "b0000" {
		t.Errorf("after the refused move the leaf is %q, %v; want b0000", leaf, err)
	}
}
