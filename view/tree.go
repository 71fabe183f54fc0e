package view

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/sessiontree/sessiontree"
)

// TreeOptions tune the text tree written by [WriteTree].
type TreeOptions struct {
	// All shows every entry: long linear runs are not folded and leaf
	// entries (moves of the leaf) are shown where they were appended.
	All bool
	// Width cuts each line to this many terminal columns; 0 means no cut.
	Width int
	// TextWidth caps the summary of each entry; 0 means 72 columns.
	TextWidth int
}

// Tree glyphs. An entry on the active path (the leaf's ancestors) is drawn
// with markActive, any other with markOther; a folded run with markFold.
const (
	markActive = "*"
	markOther  = "o"
	markFold   = "~"
	// foldMin is the shortest run of plain entries that is folded into
	// one line: folding fewer would not save a line worth the noise.
	foldMin = 3
	// defaultTextWidth caps an entry's summary in tree and branch views.
	defaultTextWidth = 72
)

// SessionData is what the tree view needs of a session, read once.
type SessionData struct {
	// Log is every entry in append order.
	Log []sessiontree.Entry
	// Labels are the current labels by entry id.
	Labels map[string]string
	// Leaf is the current leaf, "" when null.
	Leaf string
}

// LoadSessionData reads the log, labels and leaf of a session.
func LoadSessionData(ctx context.Context, st sessiontree.Storage) (SessionData, error) {
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		return SessionData{}, err // the storage names the read
	}
	return loadSessionDataOf(ctx, st, log)
}

// loadSessionDataOf reads the labels and leaf of a session whose log is
// read already.
func loadSessionDataOf(ctx context.Context, st sessiontree.Storage, log []sessiontree.Entry) (SessionData, error) {
	d := SessionData{Log: log}
	var err error
	if d.Labels, err = st.Labels(ctx); err != nil {
		return d, fmt.Errorf("read labels: %w", err)
	}
	if d.Leaf, err = st.Leaf(ctx); err != nil {
		return d, fmt.Errorf("read leaf: %w", err)
	}
	return d, nil
}

// ActiveSet returns the ids on the full path from the leaf to the root. It
// walks the log itself, stopping at a missing parent or a cycle, so a
// damaged session can still be drawn.
func (d SessionData) ActiveSet() map[string]bool {
	parents := make(map[string]string, len(d.Log))
	for _, e := range d.Log {
		parents[e.ID] = e.ParentID
	}
	set := map[string]bool{}
	for id := d.Leaf; id != "" && !set[id]; {
		parent, ok := parents[id]
		if !ok {
			break
		}
		set[id] = true
		id = parent
	}
	return set
}

// Edit marks: what a context edit in effect at the leaf does to an entry
// (see [SessionData.EditMarks]).
const (
	// MarkEdited marks an entry whose content the model sees replaced.
	MarkEdited = "(edited)"
	// MarkOmitted marks an entry the model does not see at all.
	MarkOmitted = "(omitted)"
)

// EditMarks returns, per entry that a context edit changes in the context
// at the leaf, its mark: [MarkOmitted] when the edit drops every message
// the entry contributes, [MarkEdited] when it swaps their content. Only
// the edits of the leaf's context count, as pi applies them: per target,
// the last context_edit on the active path after the compaction boundary.
// An edit that changes nothing (of an entry that contributes no message,
// or a replacement of a role it does not apply to) marks nothing; so does
// an edit on another branch. A session whose active path is damaged gets
// no marks, so that it can still be drawn.
func (d SessionData) EditMarks() map[string]string {
	if !slices.ContainsFunc(d.Log, isContextEdit) {
		return nil
	}
	byID := make(map[string]sessiontree.Entry, len(d.Log))
	for _, e := range d.Log {
		byID[e.ID] = e
	}
	lookup := func(id string) (sessiontree.Entry, bool) { e, ok := byID[id]; return e, ok }
	path, err := sessiontree.WalkPath(context.Background(), d.Leaf, false, len(d.Log), lookup)
	if err != nil {
		return nil
	}
	return editMarks(path)
}

// editMarks returns the edit marks of [SessionData.EditMarks] given the
// active path, cut at the compaction boundary.
func editMarks(path []sessiontree.Entry) map[string]string {
	entries := sessiontree.ContextEntries(path)
	edits := sessiontree.ContextEdits(entries)
	if len(edits) == 0 {
		return nil
	}
	// What each target contributes with its edit and without any.
	plain := make([]sessiontree.Entry, 0, len(entries))
	for _, e := range entries {
		if e.Type != sessiontree.TypeContextEdit {
			plain = append(plain, e)
		}
	}
	edited, err1 := sessiontree.Projection(entries, nil)
	unedited, err2 := sessiontree.Projection(plain, nil)
	if err1 != nil || err2 != nil {
		return nil
	}
	before := make(map[string][]json.RawMessage, len(edits))
	for _, pe := range unedited {
		if _, ok := edits[pe.SourceID]; ok {
			before[pe.SourceID] = pe.Messages
		}
	}
	marks := map[string]string{}
	for _, pe := range edited {
		edit, ok := edits[pe.SourceID]
		was := before[pe.SourceID]
		switch {
		case !ok || len(was) == 0:
		case edit.Omit:
			marks[pe.SourceID] = MarkOmitted
		case !slices.EqualFunc(was, pe.Messages, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }):
			marks[pe.SourceID] = MarkEdited
		}
	}
	return marks
}

// node is one entry of the drawn tree.
type node = sessiontree.TreeNode

// buildNodes arranges the log as [sessiontree.BuildTree] does, keeping leaf
// entries when withLeaves is set (they hang under the leaf they moved from).
func buildNodes(log []sessiontree.Entry, withLeaves bool) []*node {
	if withLeaves {
		return sessiontree.BuildTreeWithLeaves(log, nil)
	}
	return sessiontree.BuildTree(log, nil)
}

// treeWriter draws nodes as a graph in lanes. Lanes 0..lane-1 always hold
// a branch still to be drawn (a "|"), so a node at lane L is drawn after
// L pipes. At a fork, the newest child keeps the parent's lane and the
// older ones open lanes to its right, oldest rightmost; the oldest is drawn
// first, so each branch ends before the next one to its left continues,
// and the drawing needs no crossing lines.
type treeWriter struct {
	w      *bufio.Writer
	opts   TreeOptions
	labels map[string]string
	marks  map[string]string // edit marks, see SessionData.EditMarks
	leaf   string
	active map[string]bool
	// skipped counts, per node of an outline, the entries left out right
	// before it (sessiontree.OutlineEntry.Skipped); gap reads them.
	skipped map[*node]int64
	gap     func(after int64, n int64) ([]sessiontree.Entry, error)
	err     error  // the first error of gap
	buf     []byte // line's and fork's scratch, reused line to line
}

// WriteTree writes the session's tree as text, one line per entry, in the
// manner of `git log --graph`: roots in append order, branches in lanes,
// "*" for entries on the active path and "o" for the others, the leaf
// marked "(leaf)", entries a context edit changes in the leaf's context
// marked "(edited)" or "(omitted)" ([SessionData.EditMarks]), and labels
// in brackets. Unless opts.All, runs of plain entries inside a branch are
// folded into one "~" line and leaf entries are hidden. A
// [sessiontree.OutlineReader] (the engine) draws from its outline: folded,
// it reads only the entries the tree shows and the few a short run
// needs, not the session's log; with opts.All it reads the runs between
// them a page at a time as it writes them, so its memory does not grow
// with the session.
func WriteTree(ctx context.Context, w io.Writer, st sessiontree.Storage, opts TreeOptions) error {
	if o, ok := st.(sessiontree.OutlineReader); ok {
		return writeOutline(ctx, w, st, o, opts)
	}
	d, err := LoadSessionData(ctx, st)
	if err != nil {
		return err
	}
	return WriteTreeData(w, d, opts)
}

// writeOutline writes the folded tree of st from its outline.
func writeOutline(ctx context.Context, w io.Writer, st sessiontree.Storage, o sessiontree.OutlineReader, opts TreeOptions) error {
	outline, err := o.Outline(ctx)
	if err != nil {
		return err
	}
	d, err := loadSessionDataOf(ctx, st, nil)
	if err != nil {
		return err
	}
	tw := newTreeWriter(w, d, opts)
	tw.active = map[string]bool{}
	tw.skipped = map[*node]int64{}
	tw.gap = func(after, n int64) ([]sessiontree.Entry, error) { return st.Log(ctx, after, int(n)) }
	nodes := make(map[string]*node, len(outline))
	var roots []*node
	editsOnPath := false
	for _, oe := range outline {
		if oe.Entry.Type == sessiontree.TypeLeaf && !opts.All {
			continue
		}
		n := &node{Entry: oe.Entry, Children: []*node{}}
		nodes[oe.Entry.ID] = n
		tw.skipped[n] = oe.Skipped
		tw.active[oe.Entry.ID] = oe.Active
		editsOnPath = editsOnPath || oe.Active && isContextEdit(oe.Entry)
		if oe.Parent == "" && opts.All {
			// Shown, a leaf entry is the parent of an entry under it.
			if p := nodes[oe.Entry.ParentID]; p != nil && p.Entry.Type == sessiontree.TypeLeaf {
				oe.Parent = p.Entry.ID
			}
		}
		if p := nodes[oe.Parent]; p != nil && oe.Parent != "" {
			p.Children = append(p.Children, n)
		} else {
			roots = append(roots, n)
		}
	}
	for _, n := range nodes {
		slices.SortStableFunc(n.Children, func(a, b *node) int {
			return sessiontree.CompareTimestamps(a.Entry.Timestamp, b.Entry.Timestamp)
		})
	}
	if editsOnPath {
		// The context's path, what `context` reads: a damaged one
		// marks nothing, as in EditMarks.
		if path, err := st.Path(ctx, d.Leaf); err == nil {
			tw.marks = editMarks(path)
		}
	}
	return tw.write(roots, len(outline) > 0)
}

// WriteTreeData writes the tree of d as [WriteTree] does.
func WriteTreeData(w io.Writer, d SessionData, opts TreeOptions) error {
	tw := newTreeWriter(w, d, opts)
	tw.marks, tw.active = d.EditMarks(), d.ActiveSet()
	return tw.write(buildNodes(d.Log, opts.All), len(d.Log) > 0)
}

func newTreeWriter(w io.Writer, d SessionData, opts TreeOptions) *treeWriter {
	if opts.TextWidth <= 0 {
		opts.TextWidth = defaultTextWidth
	}
	return &treeWriter{w: bufio.NewWriter(w), opts: opts, labels: d.Labels, leaf: d.Leaf}
}

// write draws the trees of roots. With none, it says why: the session
// has no entries ([NoEntries]), or, when logged says it has some, only
// leaf entries, which are not drawn without opts.All.
func (tw *treeWriter) write(roots []*node, logged bool) error {
	type item struct {
		n    *node
		lane int
	}
	switch {
	case len(roots) > 0:
	case logged:
		tw.w.WriteString(onlyLeafMoves + "\n")
	default:
		tw.w.WriteString(NoEntries + "\n")
	}
	var stack []item
	for i, root := range roots {
		if i > 0 {
			tw.line(0, "")
		}
		stack = append(stack, item{root, 0})
		for len(stack) > 0 && tw.err == nil {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			chain := []*node{it.n}
			for last := it.n; len(last.Children) == 1; last = last.Children[0] {
				chain = append(chain, last.Children[0])
			}
			tw.chain(chain, it.lane)
			kids := chain[len(chain)-1].Children
			if len(kids) < 2 {
				continue
			}
			tw.fork(it.lane, len(kids))
			// Push the newest first so the oldest, in the rightmost lane,
			// is drawn first.
			for j := len(kids) - 1; j >= 0; j-- {
				stack = append(stack, item{kids[j], it.lane + len(kids) - 1 - j})
			}
		}
	}
	if tw.err != nil {
		return tw.err
	}
	if err := tw.w.Flush(); err != nil {
		return fmt.Errorf("write tree: %w", err)
	}
	return nil
}

// chain draws a run of entries, each the only child of the one before,
// folding runs of plain entries unless opts.All. In an outline, the
// entries left out before a node (tw.skipped) are plain ones of the run;
// they are read (tw.gap) only when their run is too short to fold.
func (tw *treeWriter) chain(chain []*node, lane int) {
	last := len(chain) - 1
	for i := 0; i <= last; {
		j := i
		if !tw.opts.All && !tw.shown(chain[i], i == 0 || i == last) {
			for j < last && !tw.shown(chain[j], false) {
				j++
			}
		}
		tw.hidden(chain, i, j, lane)
		tw.entry(chain[j].Entry, lane)
		i = j + 1
	}
}

// hidden draws the run of plain entries before chain[j], which is shown:
// chain[i:j] and the entries an outline left out before each of
// chain[i..j], folded into one line when they are foldMin or more.
func (tw *treeWriter) hidden(chain []*node, i, j, lane int) {
	n := int64(j - i)
	for k := i; k <= j; k++ {
		n += tw.skipped[chain[k]]
	}
	if n >= foldMin && !tw.opts.All {
		tw.line(lane, fmt.Sprintf("%s %d entries", markFold, n))
		return
	}
	for k := i; k <= j; k++ {
		tw.gapEntries(chain, k, lane)
		if k < j {
			tw.entry(chain[k].Entry, lane)
		}
	}
}

// gapPage is how many left-out entries gapEntries reads at a time.
const gapPage = 256

// gapEntries draws the entries an outline left out before chain[k], on
// the active path when chain[k] is, reading them a page at a time.
func (tw *treeWriter) gapEntries(chain []*node, k, lane int) {
	n := tw.skipped[chain[k]]
	if n == 0 || k == 0 {
		return
	}
	active := tw.active[chain[k].Entry.ID]
	for after, end := chain[k-1].Entry.Seq, chain[k].Entry.Seq-1; after < end && tw.err == nil; {
		want := min(end-after, gapPage)
		entries, err := tw.gap(after, want)
		if err == nil && int64(len(entries)) != want {
			err = fmt.Errorf("read %d entries after %s: got %d", want, chain[k-1].Entry.ID, len(entries))
		}
		if err != nil {
			tw.err = err
			return
		}
		for _, e := range entries {
			tw.draw(e, lane, active)
		}
		after = entries[len(entries)-1].Seq
	}
}

// shown reports whether an entry stays visible when its run is folded:
// the ends of a run, the leaf, labelled and edit-marked entries, and the
// entries that change what the model sees of the past.
func (tw *treeWriter) shown(n *node, end bool) bool {
	return unfolded(n.Entry.Type, end, n.Entry.ID == tw.leaf, tw.labels[n.Entry.ID], tw.marks[n.Entry.ID])
}

// unfolded is the folding rule of every tree view (text and graph): an
// entry of type t stays visible in a folded run when it ends the run, is
// the leaf, has a label or an edit mark, or changes what the model sees of
// the past (compactions, branch summaries, context edits).
func unfolded(t sessiontree.EntryType, end, leaf bool, label, mark string) bool {
	switch t {
	case sessiontree.TypeCompaction, sessiontree.TypeBranchSummary, sessiontree.TypeContextEdit:
		return true
	}
	return end || leaf || label != "" || mark != ""
}

func (tw *treeWriter) entry(e sessiontree.Entry, lane int) { tw.draw(e, lane, tw.active[e.ID]) }

// draw writes the line of entry e, marked on the active path or not.
func (tw *treeWriter) draw(e sessiontree.Entry, lane int, active bool) {
	mark := markOther
	if active {
		mark = markActive
	}
	tw.line(lane, mark+" "+entryLine(e, tw.labels, tw.marks, tw.leaf, tw.opts.TextWidth))
}

// fork writes the line that opens the lanes of a fork of n branches at
// lane: "|\ \ \" with n-1 arms.
func (tw *treeWriter) fork(lane, n int) {
	tw.buf = append(tw.buf[:0], '|')
	shown := tw.visible(n - 1)
	for i := range shown {
		if i > 0 {
			tw.buf = append(tw.buf, ' ')
		}
		tw.buf = append(tw.buf, '\\')
	}
	tw.buf = appendMore(tw.buf, n-1-shown)
	tw.line(lane, string(tw.buf))
}

// maxLanes is the most lane pipes, or fork arms, a line drawn without a
// width shows: past it the line shows maxLanes and the count of the
// others ("+N"), so the tree's output follows its entries, not its lanes
// (a fork of 200,000 branches would put that many pipes on every line
// after it: about 40 GB).
const maxLanes = 64

// appendMore appends the count of the lanes or arms a line does not
// show, " +N", when there are any.
func appendMore(b []byte, n int) []byte {
	if n <= 0 {
		return b
	}
	return fmt.Appendf(b, " +%d", n)
}

// lanePipes is a run of lane pipes written at once.
const lanePipes = "| | | | | | | | | | | | | | | | | | | | | | | | | | | | | | | | "

// line writes one line: lane pipes ("| " each), then rest, cut to
// opts.Width. It costs what it writes: pipes go straight to the output,
// and past the width only those that still show are drawn, so a line deep
// in lanes (a fork of thousands of branches opens as many) costs no more
// than the width, not its lane.
func (tw *treeWriter) line(lane int, rest string) {
	if tw.opts.Width > 0 {
		tw.buf = tw.buf[:0]
		for range tw.visible(lane) {
			tw.buf = append(tw.buf, "| "...)
		}
		tw.w.WriteString(Truncate(string(append(tw.buf, rest...)), tw.opts.Width))
		tw.w.WriteByte('\n')
		return
	}
	shown := tw.visible(lane)
	for n := shown; n > 0; n -= len(lanePipes) / 2 {
		tw.w.WriteString(lanePipes[:2*min(n, len(lanePipes)/2)])
	}
	if lane > shown {
		fmt.Fprintf(tw.w, "+%d ", lane-shown)
	}
	tw.w.WriteString(rest)
	tw.w.WriteByte('\n')
}

// visible caps a count of two-column marks (lane pipes, fork arms) to the
// number that can still show in opts.Width, plus one so that a line that
// overflows still does and is cut at the same column; without a width, to
// maxLanes.
func (tw *treeWriter) visible(n int) int {
	if tw.opts.Width > 0 {
		return min(n, tw.opts.Width/2+2)
	}
	return min(n, maxLanes)
}

// entryLine is an entry's text in the tree and branch views: short id, the
// leaf mark, its edit mark (marks may be nil), its label, and its summary
// cut to textWidth columns.
func entryLine(e sessiontree.Entry, labels, marks map[string]string, leaf string, textWidth int) string {
	var b strings.Builder
	b.WriteString(ShortID(e.ID))
	if e.ID == leaf && leaf != "" {
		b.WriteString(" (leaf)")
	}
	if m := marks[e.ID]; m != "" {
		b.WriteString(" " + m)
	}
	if l := labels[e.ID]; l != "" {
		b.WriteString(" [" + OneLine(l) + "]")
	}
	b.WriteByte(' ')
	b.WriteString(Truncate(EntrySummary(e), textWidth))
	return b.String()
}
