package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sessiontree/sessiontree"
)

// AppendBatch stores entries that carry their own ids, parents and
// timestamps, as an import does, in one transaction: thousands of entries
// cost one commit. Each entry is checked (valid fields, an id unused in
// the session and the batch, a parent that exists earlier in the session
// or the batch, a label or leaf target that exists), so the tree cannot
// get a cycle. The leaf then follows the leaf rule over the batch, and the
// materialized branch is rewritten once, at the end, below the point where
// the old and the new active paths meet. On error nothing is kept.
func (s *Storage) AppendBatch(ctx context.Context, entries []sessiontree.Entry) error {
	if len(entries) == 0 {
		return s.check(ctx)
	}
	return s.storeBatch(entries, func(fn func(w q, h head) error) error {
		return s.write(ctx, sessiontree.AppendOptions{}, false, fn)
	})
}

// storeBatch prepares entries (see batchPrep) and stores them with write,
// which runs its function in a write transaction with the session's
// head. An invalid entry is reported before any other error, as if the
// batch had been validated first.
func (s *Storage) storeBatch(entries []sessiontree.Entry, write func(fn func(w q, h head) error) error) error {
	p := prepareBatch(entries)
	if len(p.ready) <= 1 && p.err != nil {
		return p.err // prepared already: no transaction needed
	}
	err := write(func(w q, h head) error { return s.appendBatch(w, h, p) })
	if verr := p.wait(); verr != nil {
		return verr
	}
	if err != nil {
		return fmt.Errorf("append batch: %w", translate(err))
	}
	return nil
}

const (
	qSavepoint       = `SAVEPOINT batch`
	qRollbackToBatch = `ROLLBACK TO batch`
	qReleaseBatch    = `RELEASE batch`
)

// savepoint runs fn inside a savepoint of the transaction and undoes what
// it wrote if it fails, so that a batch in a caller's transaction keeps
// nothing on error either: its entries are validated while earlier ones
// are already written (see batchPrep).
func (w q) savepoint(fn func() error) error {
	if _, err := w.exec(qSavepoint); err != nil {
		return err
	}
	if err := fn(); err != nil {
		if _, rerr := w.exec(qRollbackToBatch); rerr != nil {
			if sqliteCode(err) == sqlite3.SQLITE_FULL || sqliteCode(err) == sqlite3.SQLITE_IOERR {
				// After a full disk or an I/O error SQLite may roll the
				// whole transaction back, savepoint and all: the
				// write's own error says what happened, and the caller
				// rolls back on it.
				return err
			}
			return errors.Join(err, fmt.Errorf("roll back batch: %w", rerr))
		}
		if _, rerr := w.exec(qReleaseBatch); rerr != nil {
			return errors.Join(err, fmt.Errorf("release batch: %w", rerr))
		}
		return err
	}
	_, err := w.exec(qReleaseBatch)
	return err
}

func (s *Storage) appendBatch(w q, h head, p *batchPrep) error {
	entries := p.entries
	delete(w.c.heads, s.pk) // not worth remembering: the next append reads it
	local := make(map[string]int, len(entries))
	nodes := make([]node, len(entries))
	// parentOf[i] is the parent node of entry i (nil for a root) and
	// parentIdx[i] its index in the batch, -1 when it is stored already.
	parentOf := make([]*node, len(entries))
	parentIdx := make([]int, len(entries))
	dl := newDelta(h, s.meta.CreatedAt)
	shape := batchShape{parented: make([]bool, len(entries))}

	// Rows wait in buf and go in by batchRows per statement; only stored
	// entries are ever looked up in the database, so the wait is safe.
	buf := make([]any, 0, entryParams*batchRows)
	flushed := 0 // entries[:flushed] are in the database
	insertRows := func(query string, n int) error {
		_, err := w.exec(query, buf[:entryParams*n]...)
		if isUniqueID(err) {
			// An id stored before the batch: find which one.
			for i, e := range entries[flushed : flushed+n] {
				if k, _ := w.node(s.pk, e.ID); k != nil {
					return fmt.Errorf("entry %d: %w", flushed+i+1, &sessiontree.IDTakenError{ID: e.ID})
				}
			}
		}
		if err != nil {
			return err
		}
		flushed += n
		buf = append(buf[:0], buf[entryParams*n:]...)
		return nil
	}
	flush := func(all bool) error {
		for len(buf) >= entryParams*batchRows {
			if err := insertRows(qInsertEntries, batchRows); err != nil {
				return err
			}
		}
		for all && len(buf) > 0 {
			if err := insertRows(qInsertEntry, 1); err != nil {
				return err
			}
		}
		return nil
	}

	earlier := &batchEarlier{stored: storedIDs{w: w, session: s.pk}, local: local, nodes: nodes}
	var replay sessiontree.Replayer
	for i, e := range entries {
		if i%1024 == 0 {
			if err := w.ctx.Err(); err != nil {
				return err
			}
		}
		f, err := p.entryFacts(i)
		if err != nil {
			return err
		}
		fail := func(err error) error { return fmt.Errorf("entry %d: %w", i+1, err) }
		if err := sessiontree.CheckBatchEntry(e, &f.Effects, earlier); err != nil {
			return fail(err)
		}
		replay.Apply(e, &f.Effects)
		parentIdx[i] = -1
		if e.ParentID != "" {
			if j, ok := local[e.ParentID]; ok {
				parentOf[i], parentIdx[i] = &nodes[j], j
			} else if parentOf[i], err = earlier.find(e.ParentID); err != nil {
				return fail(err)
			}
		}
		ancestorDepth := func(id string) (int64, error) {
			k, err := earlier.find(id)
			if k == nil || err != nil {
				return 0, err
			}
			cur, ci := parentOf[i], parentIdx[i]
			for cur != nil && cur.depth > k.depth {
				if ci < 0 {
					// Stored entries: let the database walk up.
					var pk int64
					err := w.row(qAncestorAt, args(cur.pk, k.depth), &pk)
					if errors.Is(err, sql.ErrNoRows) {
						return 0, nil
					}
					if err != nil || pk != k.pk {
						return 0, err
					}
					return k.depth, nil
				}
				cur, ci = parentOf[ci], parentIdx[ci]
			}
			if cur != nil && cur.pk == k.pk {
				return k.depth, nil
			}
			return 0, nil
		}
		seq := h.count + int64(i) + 1
		n, err := place(e, f, entryPK(s.pk, seq), parentOf[i], ancestorDepth)
		if err != nil {
			return fail(err)
		}
		n.isLeaf = e.Type == sessiontree.TypeLeaf
		nodes[i] = n
		local[e.ID] = i
		buf = entryArgs(buf, s.pk, seq, e, f, parentOf[i], n)
		if err := flush(false); err != nil {
			return err // of the rows sent, which the error names
		}
		if err := w.label(s.pk, e, f, n.pk); err != nil {
			return fail(err)
		}
		dl.count(seq, e, f, &h)
		if err := shape.add(w, &dl.shape, e.Type, parentOf[i], parentIdx[i], n.pk); err != nil {
			return fail(err)
		}
	}
	if err := flush(true); err != nil {
		return err
	}
	// The replay's leaf, as a node and, when in the batch, its index.
	leafIdx := -1
	leaf, err := earlier.find(replay.Leaf)
	if err != nil {
		return err
	}
	if j, ok := local[replay.Leaf]; ok {
		leafIdx = j
	}
	leafID := replay.Leaf
	if err := s.batchBranch(w, h.depth(), leaf, leafIdx, nodes, parentOf, parentIdx); err != nil {
		return err
	}
	dl.leaf, dl.leafID = leaf, leafID
	return w.apply(s.pk, &dl)
}

// batchBranch makes the branch, which held oldDepth rows, the path of the
// batch's final leaf. The part of the path inside the batch is known in
// memory, as runs of consecutive keys; where it reaches stored entries,
// the walk of pathSegments finds the meeting point with the old branch.
func (s *Storage) batchBranch(w q, oldDepth int64, leaf *node, leafIdx int, nodes []node, parentOf []*node, parentIdx []int) error {
	if leafIdx < 0 {
		return w.moveBranch(s.pk, oldDepth, leaf)
	}
	var segs []segment // deepest first
	i := leafIdx
	for {
		n := &nodes[i]
		if k := len(segs) - 1; k >= 0 && segs[k].depth == n.depth+1 && segs[k].pk == n.pk+1 {
			segs[k] = segment{depth: n.depth, pk: n.pk, n: segs[k].n + 1}
		} else {
			segs = append(segs, segment{depth: n.depth, pk: n.pk, n: 1})
		}
		if parentIdx[i] < 0 {
			break
		}
		i = parentIdx[i]
	}
	if p := parentOf[i]; p != nil {
		stored, err := w.pathSegments(s.pk, p.pk, p.depth)
		if err != nil {
			return fmt.Errorf("move branch: %w", err)
		}
		segs = append(segs, stored...)
	}
	return w.writeBranch(s.pk, oldDepth, leaf.depth, segs)
}

// batchEarlier is what a batch's replay sees before each entry: the
// batch's entries so far, in memory, and the session's stored ones, in the
// database. It answers Taken for the batch only: the entries table's
// unique index refuses an id stored before the batch (see insertRows).
type batchEarlier struct {
	stored storedIDs
	local  map[string]int // id -> index in the batch
	nodes  []node
	// foundID and found are the stored entry find last read, asked for
	// again right after Exists found it.
	foundID string
	found   *node
}

func (b *batchEarlier) Taken(id string) bool {
	_, ok := b.local[id]
	return ok
}

func (b *batchEarlier) Exists(id string) (bool, error) {
	n, err := b.find(id)
	return n != nil, err
}

// find returns the node of id, in the batch or the database; nil when
// neither has it, or id is "".
func (b *batchEarlier) find(id string) (*node, error) {
	if id == "" {
		return nil, nil
	}
	if j, ok := b.local[id]; ok {
		return &b.nodes[j], nil
	}
	if b.found != nil && id == b.foundID {
		return b.found, nil
	}
	n, err := b.stored.w.node(b.stored.session, id)
	if n != nil {
		b.foundID, b.found = id, n
	}
	return n, err
}

// batchShape counts a batch's entries into the tree's counts (shape.go),
// knowing which parents already had a child other than a leaf entry: in
// the batch, in memory; stored before it, by one query the first time
// one of them gets a child in the batch away from the entry just before.
type batchShape struct {
	parented []bool         // by index in the batch
	stored   map[int64]bool // by key, stored parents given a child in the batch
}

// add counts entry pk, of type t, under parent, whose index in the batch
// is parentIdx (-1 when stored).
func (b *batchShape) add(w q, s *sessiontree.Shape, t sessiontree.EntryType, parent *node, parentIdx int, pk int64) error {
	if !counts(t, parent) {
		addShape(s, t, parent, false)
		return nil
	}
	var had bool
	if parentIdx >= 0 {
		had, b.parented[parentIdx] = b.parented[parentIdx], true
	} else if had = b.stored[parent.pk]; !had {
		var err error
		if had, err = w.hadChild(parent, pk); err != nil {
			return err
		}
		if b.stored == nil {
			b.stored = make(map[int64]bool)
		}
		b.stored[parent.pk] = true
	}
	addShape(s, t, parent, had)
	return nil
}
