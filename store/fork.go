package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/jsonx"
)

// ForkOptions say what a [Store.Fork] copies. At most one of At, Before
// and Tree may be set; the zero value forks the active branch up to the
// current leaf.
type ForkOptions struct {
	// At forks the path from the root to this entry, the entry included.
	At string
	// Before forks the path up to the parent of this entry, which must be
	// a user message: what pi does to re-edit a prompt. A root prompt
	// gives an empty fork.
	Before string
	// Tree forks the whole session: every entry, every branch, the same
	// leaf.
	Tree bool

	// ID is the new session's id; empty means a fresh UUID v7. An id pi
	// or the command could not name is refused
	// (sessiontree.CheckNewSessionID).
	ID string
	// Cwd is the new session's working directory; empty means the
	// source's.
	Cwd string
	// Metadata is the new session's metadata; nil means the source's.
	Metadata json.RawMessage
}

// forkPageSize is how many entries a whole-tree fork copies per batch.
const forkPageSize = 4096

// Fork makes a new session from part of session id (an exact id or a
// unique prefix) in one transaction, and returns it. The new session's
// header links back to the source (its parentSession is the source's id)
// and the source is not changed.
//
// A whole-tree fork copies the log as it is: the same entries byte for
// byte, so the same labels, name and leaf.
//
// A path fork (At, Before, or the default) does what pi 1.6.0's
// createBranchedSession does, so that the new session reads in pi as it
// does here:
//   - the path from the root to the fork point, without its label
//     entries (and leaf entries, which pi does not write), re-chained:
//     each kept entry's parentId becomes the kept entry before it, and a
//     compaction whose firstKeptEntryId named a dropped label names the
//     kept entry after it; those are the only changes to a copied entry,
//     which keeps its id and every other byte;
//   - then one label entry per kept entry that has a label in the
//     source, with a fresh id, the label as written and the timestamp of
//     the label entry that set it (so it may be older than its parent),
//     chained after the path in the order of pi's label map.
//
// The leaf is the last of these entries: the fork point itself when no
// label had to be written, else the last label entry, which adds nothing
// to the context. The context and state at the new leaf are the
// source's at the fork point. The name is the latest on the path, as pi
// reads a forked file: a name set later, or on another branch, is not
// carried over.
//
// Before refuses an entry that is not a user message with
// [ErrNotUserMessage]; an entry that does not exist is a
// sessiontree.EntryNotFoundError.
func (s *Store) Fork(ctx context.Context, id string, opts ForkOptions) (sessiontree.DatabaseSession, error) {
	set := 0
	for _, b := range []bool{opts.At != "", opts.Before != "", opts.Tree} {
		if b {
			set++
		}
	}
	if set > 1 {
		return nil, fmt.Errorf("fork %s: give one of At, Before and Tree: %w", id, ErrBadOptions)
	}
	if opts.Metadata != nil && !json.Valid(opts.Metadata) {
		return nil, fmt.Errorf("fork %s: metadata is not valid JSON: %w", id, ErrBadOptions)
	}
	if err := sessiontree.CheckNewSessionID(opts.ID); err != nil {
		return nil, fmt.Errorf("fork %s: %w", id, err)
	}
	srcID, err := s.Resolve(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("fork: %w", err)
	}
	var out sessiontree.DatabaseSession
	// The source is read through its own reads while the transaction
	// holds the write lock: no write can land between the read and the
	// copy, so the fork is of one state of the source.
	err = s.d.Update(ctx, func(tx sessiontree.DatabaseTx) error {
		src, err := tx.Session(srcID)
		if err != nil {
			return err
		}
		srcInfo, err := tx.SessionInfo(srcID)
		if err != nil {
			return err
		}
		md := opts.Metadata
		if md == nil {
			md = srcInfo.Metadata
		}
		cwd := opts.Cwd
		if cwd == "" {
			cwd = srcInfo.Cwd
		}
		var copyFn func(dst sessiontree.DatabaseSession) error
		if opts.Tree {
			copyFn = func(dst sessiontree.DatabaseSession) error { return copyTree(ctx, tx, src, dst) }
		} else {
			entries, err := forkPath(ctx, src, opts)
			if err != nil {
				return err
			}
			copyFn = func(dst sessiontree.DatabaseSession) error { return tx.AppendEntries(dst, entries) }
		}
		dst, err := tx.NewSession(sessiontree.SessionMeta{ID: opts.ID, Cwd: cwd, ParentSession: srcID}, md)
		if err != nil {
			return err
		}
		if err := copyFn(dst); err != nil {
			return err
		}
		out = dst
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fork %s: %w", srcID, err)
	}
	return out, nil
}

// logCopier is a transaction that copies a whole log in the database
// itself, without decoding an entry (the SQLite engine's
// [engine.Tx.CopyLog]); it stores what appending the log page by page
// would.
type logCopier interface {
	CopyLog(src, dst sessiontree.DatabaseSession) error
}

// copyTree copies src's whole log into dst: in the database when the
// engine can (logCopier), else a page at a time through AppendEntries.
func copyTree(ctx context.Context, tx sessiontree.DatabaseTx, src, dst sessiontree.DatabaseSession) error {
	if c, ok := tx.(logCopier); ok {
		return c.CopyLog(src, dst)
	}
	var after int64
	for {
		page, err := src.Log(ctx, after, forkPageSize)
		if err != nil {
			return err
		}
		if len(page) == 0 {
			return nil
		}
		if err := tx.AppendEntries(dst, page); err != nil {
			return err
		}
		after = page[len(page)-1].Seq
	}
}

// forkPath computes the entries of a path fork (see [Store.Fork]): the
// path to the fork point re-chained without its label entries, then one
// label entry per labelled entry kept.
func forkPath(ctx context.Context, src sessiontree.DatabaseSession, opts ForkOptions) ([]sessiontree.Entry, error) {
	at, err := forkPoint(ctx, src, opts)
	if err != nil {
		return nil, err
	}
	path, err := src.FullPath(ctx, at)
	if err != nil {
		return nil, err
	}
	kept, err := rechain(path)
	if err != nil {
		return nil, err
	}
	labels, err := pathLabels(ctx, src, kept)
	if err != nil {
		return nil, err
	}
	return appendLabels(kept, labels)
}

// forkPoint returns the entry a path fork ends at ("" for an empty fork).
func forkPoint(ctx context.Context, src sessiontree.DatabaseSession, opts ForkOptions) (string, error) {
	switch {
	case opts.Before != "":
		e, err := src.Entry(ctx, opts.Before)
		if err != nil {
			return "", err
		}
		if e.Type != sessiontree.TypeMessage || sessiontree.MessageInfoOf(e).Role != "user" {
			what := "a " + string(e.Type) + " entry"
			if e.Type == sessiontree.TypeMessage {
				what = "a message of role " + strconv.Quote(sessiontree.MessageInfoOf(e).Role)
			}
			return "", fmt.Errorf("fork before %s, %s: %w", e.ID, what, ErrNotUserMessage)
		}
		return e.ParentID, nil
	case opts.At == "":
		return src.Leaf(ctx)
	}
	if _, err := src.Entry(ctx, opts.At); err != nil {
		return "", err
	}
	return opts.At, nil
}

// rechain returns path (root first) without its label entries, as pi
// 1.6.0's createBranchedSession cuts it: each kept entry's parentId
// becomes the kept entry before it (null for the first), and a
// compaction whose firstKeptEntryId named a dropped label names the next
// kept entry instead. Leaf entries are dropped the same way: pi writes
// none, and one kept would move the new session's leaf. Nothing else of
// an entry changes.
func rechain(path []sessiontree.Entry) ([]sessiontree.Entry, error) {
	kept := make([]sessiontree.Entry, 0, len(path))
	next := map[string]string{} // dropped entry -> the kept entry after it
	var pending []string
	parent := ""
	for _, e := range path {
		if e.Type == sessiontree.TypeLabel || e.Type == sessiontree.TypeLeaf {
			pending = append(pending, e.ID)
			continue
		}
		for _, id := range pending {
			next[id] = e.ID
		}
		pending = pending[:0]
		if e.ParentID != parent {
			raw, err := setMember(e.Raw, "parentId", parent)
			if err != nil {
				return nil, err
			}
			e.Raw, e.ParentID = raw, parent
		}
		if e.Type == sessiontree.TypeCompaction {
			if r, ok := next[sessiontree.FirstKeptEntryID(e)]; ok {
				raw, err := setMember(e.Raw, "firstKeptEntryId", r)
				if err != nil {
					return nil, err
				}
				e.Raw = raw
			}
		}
		e.Seq = 0
		kept = append(kept, e)
		parent = e.ID
	}
	return kept, nil
}

// forkLabel is a label a path fork writes again: its value as the label
// entry that set it wrote it (a string, or any JSON pi takes as true).
type forkLabel struct {
	target    string
	label     json.RawMessage
	timestamp string
}

// pathLabels returns the source's current labels of the kept entries,
// each as the label entry that set it wrote it, with that entry's time
// (as [sessiontree.LabelTimestamps]), in the order of pi's label map
// (see labelOrder).
func pathLabels(ctx context.Context, src sessiontree.DatabaseSession, kept []sessiontree.Entry) ([]forkLabel, error) {
	entries, err := src.EntriesByType(ctx, sessiontree.TypeLabel)
	if err != nil {
		return nil, err
	}
	onPath := make(map[string]bool, len(kept))
	for _, e := range kept {
		onPath[e.ID] = true
	}
	order, setBy := labelOrder(entries)
	var out []forkLabel
	for _, target := range order {
		if onPath[target] {
			e := setBy[target]
			v, _ := e.Field("label")
			out = append(out, forkLabel{target, v, e.Timestamp})
		}
	}
	return out, nil
}

// labelOrder replays label entries into the order of the labelled
// targets in pi's label map, a JavaScript Map: a newly labelled target
// goes to the end, a relabelled one keeps its place, a cleared one is
// removed (and goes to the end when labelled again). setBy is the label
// entry that set each labelled target's current label.
func labelOrder(entries []sessiontree.Entry) (order []string, setBy map[string]sessiontree.Entry) {
	setBy = map[string]sessiontree.Entry{}
	for _, e := range entries {
		target := e.TargetID()
		i := slices.Index(order, target)
		switch {
		case sessiontree.LabelOf(e) == "":
			if i >= 0 {
				order = slices.Delete(order, i, i+1)
			}
			delete(setBy, target)
			continue
		case i < 0:
			order = append(order, target)
		}
		setBy[target] = e
	}
	return order, setBy
}

// appendLabels chains one label entry per label after kept, with fresh
// ids (unused among the fork's entries, as pi draws them) and the labels'
// own times, so a label entry may be older than its parent.
func appendLabels(kept []sessiontree.Entry, labels []forkLabel) ([]sessiontree.Entry, error) {
	used := make(map[string]bool, len(kept)+len(labels))
	for _, e := range kept {
		used[e.ID] = true
	}
	taken := func(id string) bool { return used[id] }
	parent := ""
	if len(kept) > 0 {
		parent = kept[len(kept)-1].ID
	}
	for _, l := range labels {
		f, err := sessiontree.Fields("targetId", l.target, "label", l.label)
		if err != nil {
			return nil, err
		}
		id := sessiontree.NewEntryID(taken)
		e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: sessiontree.TypeLabel, Fields: f}, id, parent, l.timestamp)
		if err != nil {
			return nil, err
		}
		kept = append(kept, e)
		used[id] = true
		parent = id
	}
	return kept, nil
}

// setMember returns a copy of the JSON object obj with member name set to
// the id value (null for ""), in its place; every other member is copied
// as raw text.
func setMember(obj []byte, name, value string) (json.RawMessage, error) {
	v := []byte("null")
	if value != "" {
		v = jsonx.AppendString(nil, value)
	}
	out := make([]byte, 0, len(obj)+len(v))
	out = append(out, '{')
	found := false
	err := jsonx.ObjectMembers(obj, func(k, val []byte) error {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, k...)
		out = append(out, ':')
		if jsonx.KeyEquals(k, name) {
			val, found = v, true
		}
		out = append(out, val...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rewrite %s: %w", name, err)
	}
	if !found {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = jsonx.AppendString(out, name)
		out = append(out, ':')
		out = append(out, v...)
	}
	return append(out, '}'), nil
}
