package view

import (
	"fmt"
	"slices"

	"github.com/sessiontree/sessiontree"
)

// shareTree is a session's tree as a shared page shows it: every entry in
// tree order and every branch, numbered from 1 in that order.
type shareTree struct {
	roots []*node
	// order is every entry of the tree, depth first, oldest child first:
	// the entries of any one branch come in it root first.
	order    []*node
	branches []shareBranch
	// member lists, per entry id, the branches (indexes) holding it.
	member map[string][]int
	// active is the index of the active branch, -1 when the leaf is null.
	active int
	// tipOf is the branch ending at an entry, by entry id.
	tipOf map[string]int
}

// shareBranch is one branch: the path from a root to a tip (an entry
// nothing was appended under) or to the leaf.
type shareBranch struct {
	path   []*node // root first
	active bool
	// forkAt is the index in path of the last entry the branch shares
	// with an earlier branch, -1 when it shares none (its own root).
	forkAt int
	// forkFrom is that earlier branch, -1 when forkAt is.
	forkFrom int
}

// tip is the branch's last entry.
func (b shareBranch) tip() *node { return b.path[len(b.path)-1] }

// own is the part of the branch after it forks off an earlier one.
func (b shareBranch) own() []*node { return b.path[b.forkAt+1:] }

// newShareTree arranges d's log (leaf entries left out) into branches.
// The leaf's path is a branch even when the leaf has children (it was
// moved back and nothing was appended since).
func newShareTree(d SessionData) *shareTree {
	t := &shareTree{roots: buildNodes(d.Log, false), member: map[string][]int{}, active: -1, tipOf: map[string]int{}}
	first := map[string]int{} // entry id -> first branch holding it
	type item struct {
		n     *node
		depth int
	}
	var stack []item
	for i := len(t.roots) - 1; i >= 0; i-- {
		stack = append(stack, item{t.roots[i], 0})
	}
	var cur []*node
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		cur = append(cur[:it.depth], it.n)
		t.order = append(t.order, it.n)
		isLeaf := d.Leaf != "" && it.n.Entry.ID == d.Leaf
		if len(it.n.Children) == 0 || isLeaf {
			t.addBranch(slices.Clone(cur), isLeaf, first)
		}
		for i := len(it.n.Children) - 1; i >= 0; i-- {
			stack = append(stack, item{it.n.Children[i], it.depth + 1})
		}
	}
	return t
}

// addBranch records a branch and where it forks off the ones before it.
func (t *shareTree) addBranch(path []*node, active bool, first map[string]int) {
	k := len(t.branches)
	b := shareBranch{path: path, active: active, forkAt: -1, forkFrom: -1}
	for i, n := range path {
		if from, ok := first[n.Entry.ID]; ok {
			b.forkAt, b.forkFrom = i, from
		} else {
			first[n.Entry.ID] = k
		}
		t.member[n.Entry.ID] = append(t.member[n.Entry.ID], k)
	}
	if active {
		t.active = k
	}
	t.tipOf[b.tip().Entry.ID] = k
	t.branches = append(t.branches, b)
}

// activePath is the active branch's entries, none when the leaf is null.
func (t *shareTree) activePath() []sessiontree.Entry {
	if t.active < 0 {
		return nil
	}
	path := t.branches[t.active].path
	out := make([]sessiontree.Entry, len(path))
	for i, n := range path {
		out[i] = n.Entry
	}
	return out
}

// outlineUsers is how many user messages an outline shows at each end of
// a branch's own part; those between are counted, not listed.
const outlineUsers = 2

// milestones are the entries of a branch's own part that outline it:
// labelled entries, compactions, branch summaries, its tip, and its
// first and last user messages. A nil in the list stands for skipped
// user messages; skipped counts them, one per nil, in order.
func (t *shareTree) milestones(b shareBranch, labels map[string]string) (out []*node, skipped []int) {
	own := b.own()
	users := 0
	for _, n := range own {
		if isUserMessage(n.Entry) {
			users++
		}
	}
	user := 0
	for i, n := range own {
		e := n.Entry
		isUser := isUserMessage(e)
		keep := i == len(own)-1 || labels[e.ID] != "" ||
			e.Type == sessiontree.TypeCompaction || e.Type == sessiontree.TypeBranchSummary ||
			isUser && (user < outlineUsers || user >= users-outlineUsers)
		if isUser {
			user++
		}
		switch {
		case keep:
			out = append(out, n)
		case isUser && len(out) > 0 && out[len(out)-1] == nil:
			skipped[len(skipped)-1]++
		case isUser:
			out = append(out, nil)
			skipped = append(skipped, 1)
		}
	}
	return out, skipped
}

// chain is a run of entries between forks, as the HTML page's tree lists
// it: each entry the only child of the one before, ending at a fork, a
// tip or the leaf.
type chain struct {
	Nodes    []*node
	Branch   int // the branch ending at the chain's last entry, -1 if none
	Children []chain
}

// chains groups the tree into runs between forks.
func (t *shareTree) chains(leaf string) []chain {
	var build func(n *node) chain
	build = func(n *node) chain {
		c := chain{Nodes: []*node{n}}
		for last := n; len(last.Children) == 1 && last.Entry.ID != leaf; last = last.Children[0] {
			c.Nodes = append(c.Nodes, last.Children[0])
		}
		last := c.Nodes[len(c.Nodes)-1]
		c.Branch = -1
		if k, ok := t.tipOf[last.Entry.ID]; ok {
			c.Branch = k
		}
		for _, kid := range last.Children {
			c.Children = append(c.Children, build(kid))
		}
		return c
	}
	out := make([]chain, 0, len(t.roots))
	for _, r := range t.roots {
		out = append(out, build(r))
	}
	return out
}

// isUserMessage reports whether e is a message entry with role user.
func isUserMessage(e sessiontree.Entry) bool {
	return e.Type == sessiontree.TypeMessage && sessiontree.MessageInfoOf(e).Role == "user"
}

// describe says where branch k starts (the root, or the branch and entry
// it forks off after) and how many entries it has, in all and its own.
func (t *shareTree) describe(k int) (where, size string) {
	b := t.branches[k]
	switch {
	case b.forkAt >= 0:
		where = fmt.Sprintf("forks off branch %d after %s", b.forkFrom+1, ShortID(b.path[b.forkAt].Entry.ID))
	case k == 0:
		where = "from the root"
	default:
		where = "from a root of its own"
	}
	size = entries(len(b.path))
	if b.forkAt >= 0 {
		size += fmt.Sprintf(", %d after the fork", len(b.own()))
	}
	return where, size
}
