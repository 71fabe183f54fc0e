package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
)

// compare reads the session through every read of the API and compares
// each answer with the model's.
func (r *modelRun) compare() error {
	r.reads++
	r.rd = r.st
	if r.other != nil && r.reads%2 == 0 {
		r.rd = r.other // what another process reads
	}
	checks := []func() error{r.compareHead, r.compareLog, r.compareEntries, r.compareSummary, r.compareOutline, r.compareUsage}
	for _, c := range checks {
		if err := c(); err != nil {
			return err
		}
	}
	// The leaf, and one entry more, varied from read to read.
	at := []string{r.m.r.Leaf}
	if len(r.m.log) > 0 {
		at = append(at, r.m.log[int(r.reads*7919)%len(r.m.log)].ID)
	}
	for _, id := range at {
		if err := r.compareAt(id); err != nil {
			return err
		}
	}
	check := r.h.Check
	if r.h.DB != nil {
		check = func(ctx context.Context, st sessiontree.Storage) error { return r.h.DB(st).Check(ctx, sessionID(st)) }
	}
	if check != nil {
		if err := check(r.ctx, r.rd); err != nil {
			return fmt.Errorf("Check: %w", err)
		}
	}
	return nil
}

// compareHead compares the leaf, name, labels and stats.
func (r *modelRun) compareHead() error {
	m, st := r.m, r.rd
	leaf, err := st.Leaf(r.ctx)
	if err != nil || leaf != m.r.Leaf {
		return fmt.Errorf("Leaf = %q, %v; the model's is %q", leaf, err, m.r.Leaf)
	}
	name, err := st.Name(r.ctx)
	if err != nil || name != m.r.Name {
		return fmt.Errorf("Name = %q, %v; the model's is %q", name, err, m.r.Name)
	}
	labels, err := st.Labels(r.ctx)
	if err != nil || len(labels)+len(m.r.Labels) > 0 && !maps.Equal(labels, m.r.Labels) {
		return fmt.Errorf("Labels = %v, %v; the model's are %v", labels, err, m.r.Labels)
	}
	for _, id := range append(slices.Collect(maps.Keys(m.r.Labels)), "0missing", r.someID()) {
		if got, err := st.Label(r.ctx, id); err != nil || got != m.r.Labels[id] {
			return fmt.Errorf("Label(%q) = %q, %v; the model's is %q", id, got, err, m.r.Labels[id])
		}
	}
	stats, err := st.Stats(r.ctx)
	if want := m.tally.Stats(); err != nil || !cmp.Equal(stats, want) {
		return fmt.Errorf("Stats = %+v, %v; the model's are %+v", stats, err, want)
	}
	meta, err := st.Meta(r.ctx)
	if err != nil || meta != r.meta {
		return fmt.Errorf("Meta = %+v, %v; want %+v", meta, err, r.meta)
	}
	return nil
}

// someID is an entry id of the log varied from read to read, "" when
// the log is empty.
func (r *modelRun) someID() string {
	if len(r.m.log) == 0 {
		return ""
	}
	return r.m.log[int(r.reads*104729)%len(r.m.log)].ID
}

// compareLog compares the log, a page of it from a seq (as Follow reads
// it), and its heads.
func (r *modelRun) compareLog() error {
	log, err := r.rd.Log(r.ctx, 0, 0)
	if err != nil {
		return fmt.Errorf("Log: %w", err)
	}
	if err := sameEntries("Log(0, 0)", log, r.m.log); err != nil {
		return err
	}
	n := len(r.m.log)
	after, limit := int(r.reads)%(n+3)-1, int(r.reads/3)%5-1 // from -1, and -1 for no limit
	page, err := r.rd.Log(r.ctx, int64(after), limit)
	if err != nil {
		return fmt.Errorf("Log(%d, %d): %w", after, limit, err)
	}
	want := r.m.log[min(max(after, 0), n):]
	if limit > 0 && len(want) > limit {
		want = want[:limit]
	}
	if err := sameEntries(fmt.Sprintf("Log(%d, %d)", after, limit), page, want); err != nil {
		return err
	}
	heads, err := sessiontree.LogHeads(r.ctx, r.rd)
	if err != nil {
		return fmt.Errorf("LogHeads: %w", err)
	}
	bare := make([]sessiontree.Entry, n)
	for i, e := range r.m.log {
		e.Raw = nil
		bare[i] = e
	}
	return sameEntries("LogHeads", heads, bare)
}

// sameEntries compares entries got with want: seq, id, parent, type,
// timestamp and bytes.
func sameEntries(what string, got, want []sessiontree.Entry) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s has %d entries; the model's %d", what, len(got), len(want))
	}
	for i, g := range got {
		w := want[i]
		if g.Seq != w.Seq || g.ID != w.ID || g.ParentID != w.ParentID || g.Type != w.Type || g.Timestamp != w.Timestamp ||
			string(g.Raw) != string(w.Raw) {
			return fmt.Errorf("%s[%d] = #%d %s under %q %s %s %s; the model's #%d %s under %q %s %s %s", what, i,
				g.Seq, g.ID, g.ParentID, g.Type, g.Timestamp, g.Raw, w.Seq, w.ID, w.ParentID, w.Type, w.Timestamp, w.Raw)
		}
	}
	return nil
}

// compareEntries compares Entry of an id the log has and one it has not,
// and EntriesByType of the type of the one it has.
func (r *modelRun) compareEntries() error {
	for _, missing := range []string{"0missing", ""} {
		if _, err := r.rd.Entry(r.ctx, missing); !isEntryNotFound(err, missing) {
			return fmt.Errorf("Entry(%q) = %v; want an EntryNotFoundError", missing, err)
		}
	}
	_, err1 := r.rd.Path(r.ctx, "0missing")
	_, err2 := r.rd.FullPath(r.ctx, "0missing")
	if !isEntryNotFound(err1, "0missing") || !isEntryNotFound(err2, "0missing") {
		return fmt.Errorf("Path(0missing) = %v, FullPath = %v; want EntryNotFoundErrors", err1, err2)
	}
	for _, t := range []sessiontree.EntryType{"", "nope"} {
		if got, err := r.rd.EntriesByType(r.ctx, t); err != nil || len(got) != 0 {
			return fmt.Errorf("EntriesByType(%q) = %d entries, %v; want none", t, len(got), err)
		}
	}
	id := r.someID()
	if id == "" {
		return nil
	}
	want, _ := r.m.lookup(id)
	got, err := r.rd.Entry(r.ctx, id)
	if err != nil {
		return fmt.Errorf("Entry(%s): %w", id, err)
	}
	if err := sameEntries("Entry", []sessiontree.Entry{got}, []sessiontree.Entry{want}); err != nil {
		return err
	}
	byType, err := r.rd.EntriesByType(r.ctx, want.Type)
	if err != nil {
		return fmt.Errorf("EntriesByType(%s): %w", want.Type, err)
	}
	var all []sessiontree.Entry
	for _, e := range r.m.log {
		if e.Type == want.Type {
			all = append(all, e)
		}
	}
	return sameEntries(fmt.Sprintf("EntriesByType(%s)", want.Type), byType, all)
}

func isEntryNotFound(err error, id string) bool {
	var nf *sessiontree.EntryNotFoundError
	return errors.As(err, &nf) && nf.ID == id && errors.Is(err, sessiontree.ErrNotFound)
}

// compareAt compares the paths, the state, the context and the
// projection at entry id ("" for before the first entry) with what the
// root package's rules give over the model's log.
func (r *modelRun) compareAt(id string) error {
	m := r.m
	for _, full := range []bool{false, true} {
		want, err := sessiontree.WalkPath(r.ctx, id, full, len(m.log)+1, m.lookup)
		if err != nil {
			return fmt.Errorf("the model's path at %q: %w", id, err)
		}
		read, name := r.rd.Path, "Path"
		if full {
			read, name = r.rd.FullPath, "FullPath"
		}
		got, err := read(r.ctx, id)
		if err != nil {
			return fmt.Errorf("%s(%q): %w", name, id, err)
		}
		if err := sameEntries(fmt.Sprintf("%s(%q)", name, id), got, want); err != nil {
			return err
		}
	}
	return r.compareContext(id)
}

// compareContext compares the state, the context and the projection at
// entry id.
func (r *modelRun) compareContext(id string) error {
	m := r.m
	full, _ := sessiontree.WalkPath(r.ctx, id, true, len(m.log)+1, m.lookup)
	path, _ := sessiontree.WalkPath(r.ctx, id, false, len(m.log)+1, m.lookup)
	state := sessiontree.DefaultState()
	for _, e := range full {
		state.Apply(e)
	}
	if got, err := sessiontree.StateAt(r.ctx, r.rd, id); err != nil || !cmp.Equal(got, state) {
		return fmt.Errorf("StateAt(%q) = %+v, %v; the model's is %+v", id, got, err, state)
	}
	if id == "" {
		return nil // Session reads "" as the leaf
	}
	want, err := sessiontree.BuildContext(r.ctx, path, state, sessiontree.ContextOptions{})
	if err != nil {
		return fmt.Errorf("the model's context at %q: %w", id, err)
	}
	s := sessiontree.NewSession(r.rd, sessiontree.SessionOptions{})
	got, err := s.Context(r.ctx, sessiontree.ContextOptions{From: id})
	if err != nil {
		return fmt.Errorf("Context at %q: %w", id, err)
	}
	if a, b := mustJSON(got), mustJSON(want); string(a) != string(b) {
		return fmt.Errorf("Context at %q = %s; the model's is %s", id, a, b)
	}
	proj, err := s.Projection(r.ctx, sessiontree.ContextOptions{From: id})
	if err != nil {
		return fmt.Errorf("Projection at %q: %w", id, err)
	}
	wantProj, err := sessiontree.Projection(sessiontree.ContextEntries(path), nil)
	if err != nil {
		return fmt.Errorf("the model's projection at %q: %w", id, err)
	}
	if a, b := mustJSON(proj), mustJSON(wantProj); string(a) != string(b) {
		return fmt.Errorf("Projection at %q = %s; the model's is %s", id, a, b)
	}
	return nil
}

// compareSummary compares a backend's kept summary with what the root
// package's rules give over the log.
func (r *modelRun) compareSummary() error {
	sr, ok := r.rd.(sessiontree.SummaryReader)
	if !ok {
		return nil
	}
	got, err := sr.Summary(r.ctx)
	if err != nil {
		return fmt.Errorf("Summary: %w", err)
	}
	want := sessiontree.Summary{Shape: sessiontree.ShapeOf(r.m.log, r.m.r.Labels), List: sessiontree.ListInfoOf(r.m.log)}
	if n := len(r.m.log); n > 0 {
		meta, err := r.rd.Meta(r.ctx)
		if err != nil {
			return fmt.Errorf("Meta: %w", err)
		}
		want.UpdatedAt = sessiontree.LastChange(meta.CreatedAt, r.m.log[n-1].Timestamp)
	}
	if !cmp.Equal(got, want) {
		return fmt.Errorf("Summary = %+v; the model's is %+v", got, want)
	}
	return nil
}

// compareUsage compares the database's usage reports by model and by
// day with the log's usage records summed by the root package's rules.
func (r *modelRun) compareUsage() error {
	if r.h.DB == nil {
		return nil
	}
	for _, by := range []sessiontree.UsageBy{sessiontree.UsageByModel, sessiontree.UsageByDay} {
		got, err := r.h.DB(r.rd).Usage(r.ctx, sessiontree.UsageQuery{By: by})
		if err != nil {
			return fmt.Errorf("Usage by %s: %w", by, err)
		}
		want := r.m.usageRows(by)
		rows := map[string]sessiontree.UsageRow{}
		for _, row := range got.Rows {
			rows[row.Key] = row
		}
		for k, w := range want {
			g, ok := rows[k]
			if !ok || g.Tokens != w.Tokens || g.Sessions != 1 || math.Abs(g.Cost-w.Cost) > 1e-9 {
				return fmt.Errorf("Usage by %s, %q = %+v; the model's is %+v (report %s)", by, k, g, w, mustJSON(got))
			}
		}
		if len(rows) != len(want) {
			return fmt.Errorf("Usage by %s has %d rows; the model's %d (report %s)", by, len(rows), len(want), mustJSON(got))
		}
	}
	return nil
}

// usageRows sums the log's usage records by model or by day, each
// entry's as StatsOf reads it, on its UsageDay; groups with neither
// tokens nor cost are left out.
func (m *model) usageRows(by sessiontree.UsageBy) map[string]sessiontree.UsageRow {
	want := map[string]sessiontree.UsageRow{}
	for _, e := range m.log {
		es := sessiontree.StatsOf(e)
		if !es.HasUsage {
			continue
		}
		key := es.Bucket
		if by == sessiontree.UsageByDay {
			key = sessiontree.UsageDay(e.Timestamp)
		}
		row := want[key]
		row.Key, row.Sessions = key, 1
		var s sessiontree.Stats
		s.Tokens, s.Cost = row.Tokens, row.Cost
		s.AddUsage(es.Usage)
		row.Tokens, row.Cost = s.Tokens, s.Cost
		want[key] = row
	}
	for k, w := range want {
		if w.Tokens.Total == 0 && w.Cost == 0 {
			delete(want, k)
		}
	}
	return want
}

// compareOutline checks a backend's outline against its documented
// properties over the model's log: its entries are the log's, in append
// order; it holds every entry a folded tree must name; each entry's
// Parent and Skipped are the nearest ancestor it holds and the entries
// between, each left out only as the only child of an only child; Active
// is whether the entry is on the full path from the leaf.
func (r *modelRun) compareOutline() error {
	or, ok := r.rd.(sessiontree.OutlineReader)
	if !ok {
		return nil
	}
	got, err := or.Outline(r.ctx)
	if err != nil {
		return fmt.Errorf("Outline: %w", err)
	}
	m := r.m
	in := map[string]bool{}
	var entries []sessiontree.Entry
	for _, o := range got {
		in[o.Entry.ID] = true
		entries = append(entries, o.Entry)
	}
	var want []sessiontree.Entry
	for _, e := range m.log {
		if in[e.ID] {
			want = append(want, e)
		}
	}
	if err := sameEntries("Outline", entries, want); err != nil {
		return err
	}
	for _, id := range m.outlineNeeds() {
		if !in[id] {
			return fmt.Errorf("Outline leaves out %s, which a folded tree names", id)
		}
	}
	active := map[string]bool{}
	full, _ := sessiontree.WalkPath(r.ctx, m.r.Leaf, true, len(m.log)+1, m.lookup)
	for _, e := range full {
		active[e.ID] = true
	}
	children := map[string]int{}
	for _, e := range m.log {
		children[e.ParentID]++
	}
	for _, o := range got {
		if o.Active != active[o.Entry.ID] {
			return fmt.Errorf("Outline: %s Active = %v; want %v", o.Entry.ID, o.Active, active[o.Entry.ID])
		}
		if err := m.checkOutlineParent(o, in, children); err != nil {
			return err
		}
	}
	return nil
}

// outlineNeeds lists the entries an outline must hold: roots,
// compactions, branch summaries, context edits and their targets,
// labelled entries, leaf entries and their parents, the leaf and the last
// entry.
func (m *model) outlineNeeds() []string {
	var ids []string
	for _, e := range m.log {
		switch e.Type {
		case sessiontree.TypeCompaction, sessiontree.TypeBranchSummary:
			ids = append(ids, e.ID)
		case sessiontree.TypeContextEdit:
			ids = append(ids, e.ID)
			if m.taken(e.TargetID()) {
				ids = append(ids, e.TargetID())
			}
		case sessiontree.TypeLeaf:
			ids = append(ids, e.ID)
			if e.ParentID != "" {
				ids = append(ids, e.ParentID)
			}
		}
		if m.isRoot(e) {
			ids = append(ids, e.ID)
		}
	}
	for id := range m.r.Labels {
		ids = append(ids, id)
	}
	if m.r.Leaf != "" {
		ids = append(ids, m.r.Leaf)
	}
	if n := len(m.log); n > 0 {
		ids = append(ids, m.log[n-1].ID)
	}
	return ids
}

// isRoot reports whether e is a root of the tree: no parent, or a leaf
// entry as its parent.
func (m *model) isRoot(e sessiontree.Entry) bool {
	p, ok := m.lookup(e.ParentID)
	return e.ParentID == "" || ok && p.Type == sessiontree.TypeLeaf
}

// checkOutlineParent checks o's Parent and Skipped: the nearest ancestor
// the outline holds (in), and the entries before it, each the only child
// (children counts them) of an only child.
func (m *model) checkOutlineParent(o sessiontree.OutlineEntry, in map[string]bool, children map[string]int) error {
	e := o.Entry
	wantParent, skipped := e.ParentID, int64(0)
	switch {
	case e.Type == sessiontree.TypeLeaf:
	case m.isRoot(e):
		wantParent = ""
	default:
		for !in[wantParent] {
			s, _ := m.lookup(wantParent)
			if m.isRoot(s) || children[s.ID] != 1 || children[s.ParentID] != 1 || s.ID == m.r.Leaf {
				return fmt.Errorf("Outline leaves out %s, above %s, which is not the only child of an only child", s.ID, e.ID)
			}
			wantParent, skipped = s.ParentID, skipped+1
		}
	}
	if o.Parent != wantParent || o.Skipped != skipped {
		return fmt.Errorf("Outline: %s under %q skipping %d; want under %q skipping %d", e.ID, o.Parent, o.Skipped,
			wantParent, skipped)
	}
	return nil
}
