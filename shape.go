package sessiontree

import "context"

// Shape counts what a session's tree looks like, as `sessiontree info`
// shows it. Leaf entries (moves of the leaf) are not part of the tree.
type Shape struct {
	// Branches counts the tips of the tree: entries nothing was appended
	// under, leaf entries aside. A linear session has one.
	Branches int64
	// Roots counts entries without a parent in the tree: a null parent (a
	// move to before the first entry starts a new root), or one that is
	// not in the tree.
	Roots int64
	// Compactions counts compaction entries.
	Compactions int64
	// Labels counts the entries that carry a label now.
	Labels int64
}

// Summary is what a session's list row and `sessiontree info` show of
// its log beyond [Stats]: counts a [SummaryReader] keeps as entries are
// written instead of counting them over the log.
type Summary struct {
	Shape
	// List is what pi's session list computes from the log.
	List ListInfo
	// UpdatedAt is when the session last changed ([LastChange] of its
	// creation and its last entry's timestamp), "" when it has no entry.
	UpdatedAt string
}

// SummaryReader is implemented by a [Storage] that keeps its [Summary] as
// it is written, as package engine does in its sessions row: reading it
// then costs the same whatever the session's size.
type SummaryReader interface {
	// Summary returns the session's summary.
	Summary(ctx context.Context) (Summary, error)
}

// AddEntry counts into s an entry of type t as it is appended, by
// [ShapeOf]'s rule one entry at a time, for a backend that keeps the
// counts as it writes: rooted says the entry's parent is not in the tree
// (null, or a leaf entry); hadChild, that its parent already had a child
// other than a leaf entry. A leaf entry counts nothing; an entry adds a
// root when rooted, and a branch when rooted or when its parent had a
// child (the parent was a tip before, and is not now, unless it already
// was not). Labels are counted apart.
func (s *Shape) AddEntry(t EntryType, rooted, hadChild bool) {
	if t == TypeLeaf {
		return
	}
	if t == TypeCompaction {
		s.Compactions++
	}
	if rooted {
		s.Roots++
		s.Branches++
	} else if hadChild {
		s.Branches++
	}
}

// ShapeOf counts the shape of a log whose current labels are labels.
// It is the one rule; [ShapeReader]s keep the same counts.
func ShapeOf(log []Entry, labels map[string]string) Shape {
	ids := make(map[string]bool, len(log))
	parents := make(map[string]bool, len(log))
	s := Shape{Labels: int64(len(labels))}
	for _, e := range log {
		if e.Type == TypeLeaf {
			continue
		}
		ids[e.ID] = true
		parents[e.ParentID] = true
		if e.Type == TypeCompaction {
			s.Compactions++
		}
	}
	for _, e := range log {
		if e.Type == TypeLeaf {
			continue
		}
		if !parents[e.ID] {
			s.Branches++
		}
		if e.ParentID == "" || !ids[e.ParentID] {
			s.Roots++
		}
	}
	return s
}
