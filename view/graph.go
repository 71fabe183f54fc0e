package view

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/sessiontree/sessiontree"
)

// graphTextWidth caps an entry's summary in a graph row: the page shows one
// line per entry, and a longer text is read by opening the entry.
const graphTextWidth = 120

// FoldType is the Type of a [GraphRow] that stands for a folded run.
const FoldType = "fold"

// GraphRow is one row of a session's tree drawn as a graph, as the web page
// draws it: an entry, or a run of plain entries folded into one row.
type GraphRow struct {
	// ID is the entry's id; for a fold, the id of its first entry, which
	// names the fold when asking to expand it.
	ID string `json:"id"`
	// Type is the entry's type, or [FoldType].
	Type string `json:"type"`
	// Role is a message's role, "" for other entries; [Describe] fills it
	// in.
	Role string `json:"role,omitempty"`
	// Lane is the column the row is drawn in, 0 at the left.
	Lane int `json:"lane"`
	// Parent is the row of the entry's parent, -1 for a root.
	Parent int `json:"parent"`
	// Summary is the entry's one-line text ([EntrySummary], cut), or a
	// fold's size; [Describe] fills it in for entries.
	Summary string `json:"summary"`
	// Label is the entry's current label, "" when none.
	Label string `json:"label,omitempty"`
	// Mark is the entry's edit mark in the leaf's context
	// ([SessionData.EditMarks]), "" when none.
	Mark string `json:"mark,omitempty"`
	// Active is set for entries on the active path (the leaf's ancestors).
	Active bool `json:"active,omitempty"`
	// Leaf is set for the session's leaf.
	Leaf bool `json:"leaf,omitempty"`
	// Folded is the number of entries a fold stands for, 0 for an entry.
	Folded int `json:"folded,omitempty"`
}

// graphNode is what a graph keeps of an entry: its place and marks, not its
// payload or text, so that the graph of a large session stays small and
// quick to build; [Describe] reads the text of the rows on screen.
type graphNode struct {
	id, typ, label, mark string
	timestamp            string // orders siblings (see Graph.Extend)
	active, leaf         bool
	parent               int // index in Graph.nodes, -1 for a root
	kids                 []int
}

// Graph is a session's tree reduced to what its rows show, from which
// [Graph.Rows] lays out rows for any set of expanded folds. It is
// immutable once built and safe for concurrent use.
type Graph struct {
	nodes []graphNode
	roots []int
	index map[string]int
	leaf  int // the leaf's node, -1 when none
	// edits is set when the session has context edits: then the marks
	// depend on the whole active path, and Extend gives up.
	edits bool
}

// NewGraph reduces the session d to a graph: the tree of [sessiontree.BuildTree]
// (leaf entries left out, children oldest first), each entry's summary,
// label, edit mark, and whether it is on the active path.
func NewGraph(d SessionData) *Graph {
	marks := d.EditMarks()
	g := &Graph{nodes: make([]graphNode, 0, len(d.Log)), index: make(map[string]int, len(d.Log)), leaf: -1}
	type item struct {
		n      *node
		parent int
	}
	var stack []item
	for _, root := range sessiontree.BuildTree(d.Log, nil) {
		stack = append(stack, item{root, -1})
		g.roots = append(g.roots, len(g.nodes))
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			e := it.n.Entry
			i := len(g.nodes)
			g.nodes = append(g.nodes, graphNode{
				id: e.ID, typ: string(e.Type), label: d.Labels[e.ID], mark: marks[e.ID], timestamp: e.Timestamp,
				parent: it.parent,
			})
			g.index[e.ID] = i
			if it.parent >= 0 {
				g.nodes[it.parent].kids = append(g.nodes[it.parent].kids, i)
			}
			// Push the newest child first so that children are numbered,
			// and kept in kids, oldest first.
			for j := len(it.n.Children) - 1; j >= 0; j-- {
				stack = append(stack, item{it.n.Children[j], i})
			}
		}
	}
	g.markActive(d)
	g.edits = slices.ContainsFunc(d.Log, isContextEdit)
	return g
}

// markActive marks the leaf and the active path, [SessionData.ActiveSet].
// When every entry of the log is a node (each id once, no leaf entries,
// none cut off from the roots), the parents ActiveSet walks are the nodes'
// parents, and the walk needs no map of the log.
func (g *Graph) markActive(d SessionData) {
	if len(g.nodes) == len(d.Log) {
		g.setLeaf(d.Leaf)
		return
	}
	active := d.ActiveSet()
	for i := range g.nodes {
		g.nodes[i].active = active[g.nodes[i].id]
	}
	g.markLeaf(d.Leaf)
}

// LoadGraph builds the graph of the session st holds ([NewGraph]) and
// returns the seq of the last entry it has, 0 for an empty session. It
// reads where each entry hangs ([sessiontree.LogHeads]), not the entries'
// JSON, which only a session with context edits needs (for their marks):
// the graph of a large session is then read in a fraction of its log's
// time.
func LoadGraph(ctx context.Context, st sessiontree.Storage) (*Graph, int64, error) {
	heads, err := sessiontree.LogHeads(ctx, st)
	if err != nil {
		return nil, 0, fmt.Errorf("read log heads: %w", err)
	}
	var last int64
	if n := len(heads); n > 0 {
		last = heads[n-1].Seq
	}
	var d SessionData
	if slices.ContainsFunc(heads, isContextEdit) {
		d, err = LoadSessionData(ctx, st)
		if n := len(d.Log); n > 0 {
			last = d.Log[n-1].Seq
		}
	} else {
		d, err = loadSessionDataOf(ctx, st, heads)
	}
	if err != nil {
		return nil, 0, err
	}
	return NewGraph(d), last, nil
}

func isContextEdit(e sessiontree.Entry) bool { return e.Type == sessiontree.TypeContextEdit }

// Extend returns the graph of the session after the entries log were
// appended to it (in append order), given the session's labels and leaf
// after them; g is left as it was. It gives up, returning false, when
// extending could differ from building the graph anew: when the session
// has context edits (their marks depend on the whole active path) or an
// entry's parent is not in the graph. A page open on a session an agent
// writes to then costs what the new entries cost, not the whole log.
func (g *Graph) Extend(log []sessiontree.Entry, labels map[string]string, leaf string) (*Graph, bool) {
	if g.edits {
		return nil, false
	}
	n := &Graph{
		nodes: slices.Grow(slices.Clone(g.nodes), len(log)),
		roots: slices.Clone(g.roots),
		index: maps.Clone(g.index),
		leaf:  g.leaf,
	}
	owned := map[int]bool{} // parents whose kids n no longer shares with g
	for _, e := range log {
		switch _, dup := n.index[e.ID]; {
		case e.Type == sessiontree.TypeContextEdit:
			return nil, false
		case e.Type == sessiontree.TypeLeaf || dup:
			continue // BuildTree leaves these out
		}
		parent, ok := n.index[e.ParentID]
		if e.ParentID != "" && !ok {
			return nil, false
		}
		i := len(n.nodes)
		n.nodes = append(n.nodes, graphNode{id: e.ID, typ: string(e.Type), timestamp: e.Timestamp, label: labels[e.ID], parent: -1})
		n.index[e.ID] = i
		if e.ParentID == "" {
			n.roots = append(n.roots, i)
			continue
		}
		n.nodes[i].parent = parent
		if !owned[parent] {
			n.nodes[parent].kids = slices.Clone(n.nodes[parent].kids)
			owned[parent] = true
		}
		n.nodes[parent].kids = n.insertKid(n.nodes[parent].kids, i)
		if e.Type == sessiontree.TypeLabel {
			if t, ok := n.index[e.TargetID()]; ok {
				n.nodes[t].label = labels[e.TargetID()]
			}
		}
	}
	n.setLeaf(leaf)
	return n, true
}

// insertKid puts node i among kids where a stable sort by time puts the
// newest entry: after every sibling not later than it.
func (g *Graph) insertKid(kids []int, i int) []int {
	pos := len(kids)
	for pos > 0 && sessiontree.CompareTimestamps(g.nodes[kids[pos-1]].timestamp, g.nodes[i].timestamp) > 0 {
		pos--
	}
	return slices.Insert(kids, pos, i)
}

// setLeaf moves the leaf mark and the active path to leaf.
func (g *Graph) setLeaf(leaf string) {
	g.walkUp(g.leaf, func(n *graphNode) { n.active = false })
	if g.leaf >= 0 {
		g.nodes[g.leaf].leaf = false
	}
	g.markLeaf(leaf)
	g.walkUp(g.leaf, func(n *graphNode) { n.active = true })
}

// markLeaf makes the node of leaf the leaf, none when leaf is "" or not
// in the graph.
func (g *Graph) markLeaf(leaf string) {
	g.leaf = -1
	if i, ok := g.index[leaf]; ok && leaf != "" {
		g.leaf = i
		g.nodes[i].leaf = true
	}
}

// walkUp calls fn on node i and each of its ancestors. A node's parent
// always comes before it in nodes (they are added root first), so the walk
// ends.
func (g *Graph) walkUp(i int, fn func(n *graphNode)) {
	for ; i >= 0; i = g.nodes[i].parent {
		fn(&g.nodes[i])
	}
}

// Len returns the number of entries in the graph.
func (g *Graph) Len() int { return len(g.nodes) }

// Rows lays the graph out as rows, as the text tree ([WriteTree]) draws
// it: roots one after another in lane 0; at a fork the newest child keeps
// its parent's lane and older ones open lanes to its right, the oldest
// rightmost and drawn first, so no two edges cross; runs of plain entries
// are folded into one row unless expanded holds the id of their first
// entry.
func (g *Graph) Rows(expanded map[string]bool) []GraphRow {
	rows := make([]GraphRow, 0, min(len(g.nodes), 1024))
	type item struct{ node, lane, parent int }
	var stack []item
	for _, root := range g.roots {
		stack = append(stack, item{root, 0, -1})
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			chain := []int{it.node}
			for last := it.node; len(g.nodes[last].kids) == 1; last = g.nodes[last].kids[0] {
				chain = append(chain, g.nodes[last].kids[0])
			}
			rows = g.chainRows(rows, chain, it.lane, it.parent, expanded)
			kids := g.nodes[chain[len(chain)-1]].kids
			parent := len(rows) - 1
			for j := len(kids) - 1; j >= 0; j-- {
				stack = append(stack, item{kids[j], it.lane + len(kids) - 1 - j, parent})
			}
		}
	}
	return rows
}

// chainRows appends the rows of a chain of entries, each the only child of
// the one before, folding runs of plain entries as the text tree does.
func (g *Graph) chainRows(rows []GraphRow, chain []int, lane, parent int, expanded map[string]bool) []GraphRow {
	last := len(chain) - 1
	shown := func(i int) bool {
		n := &g.nodes[chain[i]]
		return unfolded(sessiontree.EntryType(n.typ), i == 0 || i == last, n.leaf, n.label, n.mark)
	}
	for i := 0; i <= last; {
		if shown(i) {
			rows, parent = g.appendRow(rows, chain[i], lane, parent), len(rows)
			i++
			continue
		}
		j := i
		for j < last && !shown(j) {
			j++
		}
		first := &g.nodes[chain[i]]
		if j-i >= foldMin && !expanded[first.id] {
			rows = append(rows, GraphRow{
				ID: first.id, Type: FoldType, Lane: lane, Parent: parent,
				Summary: Count(int64(j-i)) + " entries", Active: first.active, Folded: j - i,
			})
			parent = len(rows) - 1
		} else {
			for _, n := range chain[i:j] {
				rows, parent = g.appendRow(rows, n, lane, parent), len(rows)
			}
		}
		i = j
	}
	return rows
}

func (g *Graph) appendRow(rows []GraphRow, i, lane, parent int) []GraphRow {
	n := &g.nodes[i]
	return append(rows, GraphRow{
		ID: n.id, Type: n.typ, Lane: lane, Parent: parent,
		Label: n.label, Mark: n.mark, Active: n.active, Leaf: n.leaf,
	})
}

// FoldOf returns the id that names the fold holding entry id in rows (the
// id of the fold's first entry), and false when the entry is not folded
// away there or not in the graph.
func (g *Graph) FoldOf(id string, rows []GraphRow) (string, bool) {
	folds := map[string]int{}
	for _, r := range rows {
		if r.Type == FoldType {
			folds[r.ID] = r.Folded
		}
	}
	i, ok := g.index[id]
	// Folds lie inside chains: walk up while each entry is its parent's
	// only child, counting how far above the entry a fold would start.
	for up := 0; ok; up++ {
		if n, isFold := folds[g.nodes[i].id]; isFold {
			if up < n {
				return g.nodes[i].id, true
			}
			return "", false
		}
		p := g.nodes[i].parent
		if p < 0 || len(g.nodes[p].kids) != 1 {
			break
		}
		i = p
	}
	return "", false
}

// Describe fills in the summary and role of the entry rows among rows,
// reading each entry from st: a page asks for the rows on screen, so a
// session's text is read a screen at a time.
func Describe(ctx context.Context, st sessiontree.Storage, rows []GraphRow) error {
	for i := range rows {
		r := &rows[i]
		if r.Type == FoldType {
			continue
		}
		e, err := st.Entry(ctx, r.ID)
		if err != nil {
			return fmt.Errorf("describe row %d: %w", i, err)
		}
		r.Summary = Truncate(EntrySummary(e), graphTextWidth)
		r.Role = sessiontree.MessageInfoOf(e).Role
	}
	return nil
}
