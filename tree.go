package sessiontree

import "slices"

// TreeNode is one entry of a session tree with its children.
type TreeNode struct {
	Entry Entry `json:"entry"`
	// Label is the entry's current label, "" when none.
	Label string `json:"label,omitempty"`
	// LabelTimestamp is the timestamp of the label entry that set the
	// current label, "" when unlabelled.
	LabelTimestamp string      `json:"labelTimestamp,omitempty"`
	Children       []*TreeNode `json:"children"`
}

// LabelTimestamps returns, per labelled entry, the timestamp of the label
// entry that set its current label: replaying the log, each label entry
// with a label sets its target's time and one that clears removes it, as
// pi 1.6.0 does.
func LabelTimestamps(log []Entry) map[string]string {
	times := map[string]string{}
	for _, e := range log {
		if e.Type != TypeLabel {
			continue
		}
		if LabelOf(e) != "" {
			times[e.TargetID()] = e.Timestamp
		} else {
			delete(times, e.TargetID())
		}
	}
	return times
}

// BuildTree arranges a session's log as pi's tree view does: roots in
// append order, each node's children ordered by timestamp with ties in
// append order, an entry whose parent is missing shown as a root, and leaf
// entries left out. labels gives each node's label (may be nil); a
// labelled node also gets its [LabelTimestamps] time. The walk
// is iterative, so a deep session cannot exhaust the stack, and a cycle in
// parent ids cannot make it loop: each entry is placed once.
func BuildTree(log []Entry, labels map[string]string) []*TreeNode {
	return buildTree(log, labels, false)
}

// BuildTreeWithLeaves is [BuildTree] keeping leaf entries: each hangs under
// the leaf it moved away from, as the log records it.
func BuildTreeWithLeaves(log []Entry, labels map[string]string) []*TreeNode {
	return buildTree(log, labels, true)
}

func buildTree(log []Entry, labels map[string]string, keepLeaves bool) []*TreeNode {
	nodes := make(map[string]*TreeNode, len(log))
	order := make([]*TreeNode, 0, len(log))
	var times map[string]string
	if len(labels) > 0 {
		times = LabelTimestamps(log)
	}
	for _, e := range log {
		if e.Type == TypeLeaf && !keepLeaves {
			continue
		}
		if _, dup := nodes[e.ID]; dup {
			continue
		}
		n := &TreeNode{Entry: e, Label: labels[e.ID], Children: []*TreeNode{}}
		if n.Label != "" {
			n.LabelTimestamp = times[e.ID]
		}
		nodes[e.ID] = n
		order = append(order, n)
	}
	var roots []*TreeNode
	for _, n := range order {
		p, ok := nodes[n.Entry.ParentID]
		if n.Entry.ParentID == "" || !ok || p == n {
			roots = append(roots, n)
			continue
		}
		p.Children = append(p.Children, n)
	}
	for _, n := range order {
		sortByTime(n.Children)
	}
	return roots
}

// sortByTime orders nodes by timestamp, keeping append order for ties.
func sortByTime(nodes []*TreeNode) {
	slices.SortStableFunc(nodes, func(a, b *TreeNode) int {
		return CompareTimestamps(a.Entry.Timestamp, b.Entry.Timestamp)
	})
}

// CompareTimestamps orders two entry timestamps as pi's tree orders
// siblings: by their times ([ParseTime], to the millisecond). It returns
// -1, 0 or +1. A timestamp that does not parse ties with any other: pi
// subtracts Dates, gets NaN, and its sort takes NaN for 0.
func CompareTimestamps(a, b string) int {
	ta, errA := ParseTime(a)
	tb, errB := ParseTime(b)
	if errA != nil || errB != nil {
		return 0
	}
	return ta.Compare(tb)
}
