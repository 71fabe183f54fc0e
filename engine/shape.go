package engine

import "github.com/sessiontree/sessiontree"

// The tree's counts in the sessions row (branch_count, root_count,
// compaction_count; migration 15) are kept by the writes, in Go, by
// sessiontree.Shape.AddEntry (ShapeOf's rule one entry at a time); this
// file finds what it needs: whether the parent is in the tree and whether
// it already had a child. engine.Check compares the counts with ShapeOf
// over the log (checkShape).

// addShape counts entry e, of type t, under parent (nil for none) into s;
// hadChild says whether parent already had a child other than a leaf
// entry.
func addShape(s *sessiontree.Shape, t sessiontree.EntryType, parent *node, hadChild bool) {
	s.AddEntry(t, parent == nil || parent.isLeaf, hadChild)
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
func (w q) countShape(s *sessiontree.Shape, t sessiontree.EntryType, parent *node, pk int64) error {
	had := false
	if counts(t, parent) {
		var err error
		if had, err = w.hadChild(parent, pk); err != nil {
			return err
		}
	}
	addShape(s, t, parent, had)
	return nil
}
