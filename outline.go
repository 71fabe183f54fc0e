package sessiontree

import "context"

// OutlineEntry is one entry of a session's outline: the entries a folded
// tree view names, each hung under the nearest of them above it.
type OutlineEntry struct {
	// Entry is the entry, Raw included.
	Entry Entry
	// Parent is the id of the entry's nearest ancestor in the outline, ""
	// for a root of the tree (no parent, or a leaf entry as parent). A
	// leaf entry's is its ParentID.
	Parent string
	// Skipped counts the entries between Parent and Entry that the
	// outline leaves out. They are the Skipped entries stored right before
	// Entry, each the only child of the one before it: Log(Seq of Parent,
	// Skipped) reads them. None of them is a root, a fork or the child of
	// one, a tip, the leaf, labelled, a leaf entry or an entry of another
	// type than message, custom, custom_message, thinking_level_change,
	// model_change, active_tools_change, session_info, usage or a type
	// this package does not know; none is the target of a context edit.
	Skipped int64
	// Active reports whether the entry is on the full path from the leaf.
	Active bool
}

// OutlineReader is implemented by a [Storage] that can list a session's
// outline without reading its log, as package engine does from its
// indexes: a folded tree then costs what it shows, not the session's size.
type OutlineReader interface {
	// Outline returns the session's outline in append order: every root,
	// fork and child of a fork, tip, compaction, branch summary, context
	// edit and its target, labelled entry, leaf entry and its parent, and
	// the leaf, and possibly a few more.
	Outline(ctx context.Context) ([]OutlineEntry, error)
}
