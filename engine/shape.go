package engine

import "github.com/sessiontree/sessiontree"

// The tree's counts in the sessions row (branch_count, root_count,
// compaction_count; migration 15) are kept by the writes, in Go, by
// sessiontree.ShapeOf's rules in incremental form: an entry other than a
// leaf entry adds a root when its parent is null or a leaf entry, and a
// branch when it adds a root or its parent already had a child other than
// a leaf entry (the parent was a tip and is not now, unless it already
// was not); a compaction adds a compaction. engine.Check compares them
// with ShapeOf over the log (checkShape).

// shape is what a write adds to the tree's counts.
type shape struct {
	branches, roots, compactions int64
}

// add counts entry e, of type t, under parent (nil for none); hadChild
// says whether parent already had a child other than a leaf entry.
func (s *shape) add(t sessiontree.EntryType, parent *node, hadChild bool) {
	if t == sessiontree.TypeLeaf {
		return
	}
	if t == sessiontree.TypeCompaction {
		s.compactions++
	}
	if parent == nil || parent.isLeaf {
		s.roots++
		s.branches++
	} else if hadChild {
		s.branches++
	}
}

// counts reports whether an entry of type t under parent changes the
// branch count depending on the parent's earlier children: only then
// need they be looked up.
func counts(t sessiontree.EntryType, parent *node) bool {
	return t != sessiontree.TypeLeaf && parent != nil && !parent.isLeaf
}

// hadChild tells whether the stored entry parent has a child other than
// a leaf entry with a key below pk. The entry stored right before pk has
// none, which needs no query: most appends.
func (w q) hadChild(parent *node, pk int64) (bool, error) {
	if parent.pk == pk-1 {
		return false, nil
	}
	var had bool
	err := w.row(qHadChild, args(parent.pk, pk), &had)
	return had, err
}

// countShape adds to s entry pk, of type t, under the stored entry parent.
func (w q) countShape(s *shape, t sessiontree.EntryType, parent *node, pk int64) error {
	had := false
	if counts(t, parent) {
		var err error
		if had, err = w.hadChild(parent, pk); err != nil {
			return err
		}
	}
	s.add(t, parent, had)
	return nil
}
