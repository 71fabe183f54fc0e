package engine

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/sessiontree/sessiontree"
)

// Rewriting the materialized branch when the leaf moves.
//
// The rows that change are those below the point where the old and the
// new path meet, found by walking up from the new leaf until the walk
// meets an entry on the branch. Walking one parent at a time, even inside
// SQLite with a recursive query, costs several microseconds a step; but
// the entries of a conversation come in runs, each the child of the entry
// appended just before it (parent_pk = pk - 1, depth one more), and along
// a run the ancestor at any depth is known by arithmetic. So the walk goes
// a run at a time: the run's first entry is found by scanning the run's
// keys backwards (cheap, no recursion), whether the meeting point lies in
// the run is one branch lookup at its top, and where in the run it lies is
// a binary search (an ancestor of the new leaf is on the branch exactly
// when every ancestor above it is). Each run's rows are then written with
// one statement: an UPDATE of the rows that exist, an INSERT of the rows
// past the old leaf's depth.

// segment is a run of branch rows: depths depth..depth+n-1 hold the
// entries pk..pk+n-1.
type segment struct{ depth, pk, n int64 }

const (
	qBranchEntry = `SELECT entry FROM branch WHERE session = ? AND depth = ?`
	// qRunStart finds the first entry of the run that ends at key ?2: the
	// last entry at or before it that is not the child of the entry before
	// it.
	qRunStart = `SELECT pk, parent_pk, depth FROM entries
WHERE pk BETWEEN ?1 AND ?2 AND parent_pk IS NOT pk - 1 ORDER BY pk DESC LIMIT 1`
	qEntryDepth = `SELECT depth FROM entries WHERE pk = ?`
	// qUpdateRun and qInsertRun write depths ?2..?3 of session ?1 with the
	// entries depth + ?4.
	qUpdateRun = `UPDATE branch SET entry = depth + ?4 WHERE session = ?1 AND depth BETWEEN ?2 AND ?3`
	qInsertRun = `WITH RECURSIVE d(depth) AS (SELECT ?2 UNION ALL SELECT depth + 1 FROM d WHERE depth < ?3)
INSERT INTO branch (session, depth, entry) SELECT ?1, depth, depth + ?4 FROM d`
	qTrimBranch = `DELETE FROM branch WHERE session = ?1 AND depth > ?2`
)

// isNoRows reports sql.ErrNoRows.
func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// onBranch reports whether the branch row at depth holds entry pk.
func (w q) onBranch(session, depth, pk int64) (bool, error) {
	var entry int64
	err := w.row(qBranchEntry, args(session, depth), &entry)
	if isNoRows(err) {
		return false, nil
	}
	return err == nil && entry == pk, err
}

// pathSegments returns, deepest first, the segments of the path of the
// entry at key pk and depth that are not on the branch: from that entry up
// to the point where it meets the branch.
func (w q) pathSegments(session, pk, depth int64) ([]segment, error) {
	lo, _ := pkRange(session)
	var segs []segment
	corrupt := func(reason string) error {
		return &sessiontree.CorruptError{Reason: fmt.Sprintf("entry key %d: %s", pk, reason)}
	}
	for {
		if on, err := w.onBranch(session, depth, pk); err != nil || on {
			return segs, err
		}
		var start, startDepth int64
		var parent sql.NullInt64
		err := w.row(qRunStart, args(lo, pk), &start, &parent, &startDepth)
		if isNoRows(err) {
			return nil, corrupt("no first entry of its run")
		}
		if err != nil {
			return nil, err
		}
		if startDepth < 1 || depth-startDepth != pk-start {
			return nil, corrupt("depths disagree with parent keys")
		}
		// The deepest entry of the run on the branch: none when its top
		// is not on it; otherwise search, knowing top is and pk is not.
		top := startDepth - 1
		if on, err := w.onBranch(session, startDepth, start); err != nil {
			return nil, err
		} else if on {
			a, b := startDepth, depth
			for b-a > 1 {
				m := a + (b-a)/2
				on, err := w.onBranch(session, m, pk-(depth-m))
				if err != nil {
					return nil, err
				}
				if on {
					a = m
				} else {
					b = m
				}
			}
			top = a
		}
		segs = append(segs, segment{depth: top + 1, pk: pk - (depth - top - 1), n: depth - top})
		if top >= startDepth || !parent.Valid {
			return segs, nil // met inside the run, or at the root
		}
		if parent.Int64 >= start {
			return nil, corrupt("a parent key not before its child")
		}
		var parentDepth int64
		if err := w.row(qEntryDepth, args(parent.Int64), &parentDepth); err != nil {
			if isNoRows(err) {
				return nil, corrupt("a parent key that does not exist")
			}
			return nil, err
		}
		if parentDepth != startDepth-1 {
			return nil, corrupt("depths disagree with parent keys")
		}
		pk, depth = parent.Int64, parentDepth
	}
}

// writeBranch writes segments into the branch, which held rows
// 1..oldDepth, and trims it to newDepth rows.
func (w q) writeBranch(session, oldDepth, newDepth int64, segs []segment) error {
	for k := len(segs) - 1; k >= 0; k-- { // shallowest first: rows go in in key order
		s := segs[k]
		end := s.depth + s.n - 1
		off := s.pk - s.depth
		if s.depth <= oldDepth {
			if _, err := w.exec(qUpdateRun, session, s.depth, min(end, oldDepth), off); err != nil {
				return fmt.Errorf("write branch: %w", err)
			}
		}
		if end > oldDepth {
			if _, err := w.exec(qInsertRun, session, max(s.depth, oldDepth+1), end, off); err != nil {
				return fmt.Errorf("write branch: %w", err)
			}
		}
	}
	if newDepth < oldDepth {
		if _, err := w.exec(qTrimBranch, session, newDepth); err != nil {
			return fmt.Errorf("trim branch: %w", err)
		}
	}
	return nil
}

// moveBranch makes the materialized branch, which held oldDepth rows, the
// path of to (nil: empty).
func (w q) moveBranch(session, oldDepth int64, to *node) error {
	var segs []segment
	var depth int64
	if to != nil {
		var err error
		if segs, err = w.pathSegments(session, to.pk, to.depth); err != nil {
			return fmt.Errorf("move branch: %w", err)
		}
		depth = to.depth
	}
	return w.writeBranch(session, oldDepth, depth, segs)
}
