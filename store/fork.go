package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
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

	// ID is the new session's id; empty means a fresh UUID v7.
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
// A path fork (At, Before, or the default) does what pi's
// createBranchedSession does, so that the new session reads in pi as it
// does here:
//   - the path's entries keep their ids and every field, except label and
//     leaf entries, which are left out; an entry whose parent was one of
//     those gets the nearest kept ancestor as its parentId (and a
//     compaction that kept a dropped label keeps the entry after it), the
//     only change made to a copied entry;
//   - every kept entry that has a label in the source gets a new label
//     entry carrying it, with a fresh id and the timestamp of the label
//     entry that set it, chained after the path in the order pi's label
//     map holds them;
//   - when the latest name on the path is not the source's current name,
//     a session_info entry carrying the current name comes last (with the
//     timestamp of the source's latest session_info entry);
//   - the leaf is the last of these entries: the fork point itself when
//     no label or name had to be written, else the last label or name
//     entry under it, which adds nothing to the context. The context and
//     state at the new leaf are the source's at the fork point.
//
// Before refuses an entry that is not a user message with
// [ErrNotUserMessage]; an entry that does not exist is a
// sessiontree.EntryNotFoundError.
func (s *Store) Fork(ctx context.Context, id string, opts ForkOptions) (*engine.Storage, error) {
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
	srcID, err := s.Resolve(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("fork: %w", err)
	}
	var out *engine.Storage
	// The source is read through the read pool while the transaction
	// holds the write lock: no write can land between the read and the
	// copy, so the fork is of one state of the source.
	err = s.db.Update(ctx, func(tx *engine.Tx) error {
		src, err := tx.OpenSession(srcID)
		if err != nil {
			return err
		}
		srcInfo, err := s.Info(ctx, srcID)
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
		var copyFn func(dst *engine.Storage) error
		if opts.Tree {
			copyFn = func(dst *engine.Storage) error { return copyTree(ctx, tx, src, dst) }
		} else {
			entries, err := forkPath(ctx, src, opts)
			if err != nil {
				return err
			}
			copyFn = func(dst *engine.Storage) error { return tx.AppendBatch(dst, entries) }
		}
		dst, err := tx.CreateSession(sessiontree.SessionMeta{ID: opts.ID, Cwd: cwd, ParentSession: srcID})
		if err != nil {
			return err
		}
		if err := setMetadata(tx, dst, md); err != nil {
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

func copyTree(ctx context.Context, tx *engine.Tx, src, dst *engine.Storage) error {
	var after int64
	for {
		page, err := src.Log(ctx, after, forkPageSize)
		if err != nil {
			return err
		}
		if len(page) == 0 {
			return nil
		}
		if err := tx.AppendBatch(dst, page); err != nil {
			return err
		}
		after = page[len(page)-1].Seq
	}
}

// forkPath computes the entries of a path fork (see [Store.Fork]).
func forkPath(ctx context.Context, src *engine.Storage, opts ForkOptions) ([]sessiontree.Entry, error) {
	at := opts.At
	switch {
	case opts.Before != "":
		e, err := src.Entry(ctx, opts.Before)
		if err != nil {
			return nil, err
		}
		if e.Type != sessiontree.TypeMessage || sessiontree.MessageInfoOf(e).Role != "user" {
			what := string(e.Type)
			if e.Type == sessiontree.TypeMessage {
				what = sessiontree.MessageInfoOf(e).Role + " message"
			}
			return nil, fmt.Errorf("fork before %s: it is a %s entry: %w", e.ID, what, ErrNotUserMessage)
		}
		at = e.ParentID
	case at == "":
		leaf, err := src.Leaf(ctx)
		if err != nil {
			return nil, err
		}
		at = leaf
	default:
		if _, err := src.Entry(ctx, at); err != nil {
			return nil, err
		}
	}
	path, err := src.FullPath(ctx, at)
	if err != nil {
		return nil, err
	}

	// The path without label and leaf entries, re-chained.
	kept := make([]sessiontree.Entry, 0, len(path))
	used := make(map[string]bool, len(path))
	replacement := map[string]string{} // dropped label -> the kept entry after it
	var pending []string
	parent := ""
	name := ""
	for _, e := range path {
		if e.Type == sessiontree.TypeLabel || e.Type == sessiontree.TypeLeaf {
			pending = append(pending, e.ID)
			continue
		}
		for _, id := range pending {
			replacement[id] = e.ID
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
			keep := sessiontree.FirstKeptEntryID(e)
			if r, ok := replacement[keep]; ok && keep != e.ID {
				raw, err := setMember(e.Raw, "firstKeptEntryId", r)
				if err != nil {
					return nil, err
				}
				e.Raw = raw
			}
		}
		if e.Type == sessiontree.TypeSessionInfo {
			name = sessiontree.NameOf(e)
		}
		e.Seq = 0
		kept = append(kept, e)
		used[e.ID] = true
		parent = e.ID
	}

	labels, err := labelHistory(ctx, src)
	if err != nil {
		return nil, err
	}
	taken := func(id string) bool { return used[id] }
	for _, l := range labels {
		if !used[l.target] {
			continue
		}
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

	infos, err := src.EntriesByType(ctx, sessiontree.TypeSessionInfo)
	if err != nil {
		return nil, err
	}
	if len(infos) > 0 {
		last := infos[len(infos)-1]
		current := sessiontree.NameOf(last)
		if current != name {
			f, err := sessiontree.Fields("name", current)
			if err != nil {
				return nil, err
			}
			id := sessiontree.NewEntryID(taken)
			e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: sessiontree.TypeSessionInfo, Fields: f}, id, parent, last.Timestamp)
			if err != nil {
				return nil, err
			}
			kept = append(kept, e)
		}
	}
	return kept, nil
}

type labelState struct {
	target, label, timestamp string
}

// labelHistory replays the source's label entries into the current labels
// in the order of pi's label map (a JavaScript Map: a new target goes to
// the end, a changed one keeps its place, a cleared one is removed), each
// with the timestamp of the entry that set it.
func labelHistory(ctx context.Context, src *engine.Storage) ([]labelState, error) {
	entries, err := src.EntriesByType(ctx, sessiontree.TypeLabel)
	if err != nil {
		return nil, err
	}
	var order []labelState
	at := map[string]int{}
	for _, e := range entries {
		target, label := e.TargetID(), sessiontree.LabelOf(e)
		i, ok := at[target]
		switch {
		case label == "" && ok:
			order = append(order[:i], order[i+1:]...)
			delete(at, target)
			for j := i; j < len(order); j++ {
				at[order[j].target] = j
			}
		case label == "":
		case ok:
			order[i].label, order[i].timestamp = label, e.Timestamp
		default:
			at[target] = len(order)
			order = append(order, labelState{target, label, e.Timestamp})
		}
	}
	return order, nil
}

// setMember returns a copy of the JSON object obj with member name set to
// the id value (null for ""), in its place; every other member is copied
// as raw text.
func setMember(obj []byte, name, value string) (json.RawMessage, error) {
	v := []byte("null")
	if value != "" {
		v = appendString(nil, value)
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
		out = appendString(out, name)
		out = append(out, ':')
		out = append(out, v...)
	}
	return append(out, '}'), nil
}
