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
// a run at a time: it scans the run's keys backwards (cheap, no recursion)
// in steps that double, looking up the branch at the end of each step,
// until a step reaches the run's first entry or an entry on the branch;
// where in the last step the meeting point lies is a binary search (an
// ancestor of the new leaf is on the branch exactly when every ancestor
// above it is). Each run's rows are then written with one statement: an
// UPDATE of the rows that exist, an INSERT of the rows past the old leaf's
// depth.

// segment is a run of branch rows: depths depth..depth+n-1 hold the
// entries pk..pk+n-1.
type segment struct{ depth, pk, n int64 }

const (
	qBranchEntry = `SELECT entry FROM branch WHERE session = ? AND depth = ?`
	// qRunBreak finds the last entry with a key in ?1..?2 that is not
	// the child of the entry before it: where a run that reaches ?2 starts.
	qRunBreak = `SELECT pk, parent_pk, depth FROM entries
WHERE pk BETWEEN ?1 AND ?2 AND parent_pk IS NOT pk - 1 ORDER BY pk DESC LIMIT 1`
	qEntryDepth = `SELECT depth FROM entries WHERE pk = ?`
	// qUpdateRun and qInsertRun write depths ?2..?3 of session ?1 with the
	// entries depth + ?4. qInsertRun takes the keys from a range scan of
	// the entries table, which reads only keys (several times cheaper
	// than counting the depths with a recursive query), and writes a row
	// only for an entry that exists: the caller compares the count.
	qUpdateRun = `UPDATE branch SET entry = depth + ?4 WHERE session = ?1 AND depth BETWEEN ?2 AND ?3`
	qInsertRun = `INSERT INTO branch (session, depth, entry)
SELECT ?1, pk - ?4, pk FROM entries WHERE pk BETWEEN ?2 + ?4 AND ?3 + ?4`
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
// to the point where it meets the branch. Its cost is proportional to the
// length of those segments, not to the depth: along a run it scans back
// in steps that double, and stops at the first step that reaches an entry
// on the branch or the run's first entry.
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
		// cur, at dcur, is in pk's run and not on the branch; so is every
		// entry between it and pk.
		cur, dcur := pk, depth
		top := int64(-1) // the deepest depth of the run on the branch, once known
		var start, startDepth int64
		var parent sql.NullInt64
		for step := int64(1); top < 0 && start == 0; step *= 2 {
			low := max(cur-step, lo)
			from := low + 1
			if low == lo {
				from = lo // the session's first entry always starts a run
			}
			var b, bd int64
			var bp sql.NullInt64
			err := w.row(qRunBreak, args(from, cur), &b, &bp, &bd)
			switch {
			case err == nil: // the run starts at b
				if bd != dcur-(cur-b) {
					return nil, corrupt("depths disagree with parent keys")
				}
				start, startDepth, parent = b, bd, bp
				if b == cur {
					break
				}
				if on, err := w.onBranch(session, bd, b); err != nil {
					return nil, err
				} else if on {
					if top, err = w.deepestOnBranch(session, bd, dcur, cur); err != nil {
						return nil, err
					}
				}
			case !isNoRows(err):
				return nil, err
			case low == lo:
				return nil, corrupt("no first entry of its run")
			default: // low..cur is part of the run
				d := dcur - (cur - low)
				on, err := w.onBranch(session, d, low)
				if err != nil {
					return nil, err
				}
				if on {
					if top, err = w.deepestOnBranch(session, d, dcur, cur); err != nil {
						return nil, err
					}
				} else {
					cur, dcur = low, d
				}
			}
		}
		if top >= 0 {
			// Met inside the run.
			return append(segs, segment{depth: top + 1, pk: pk - (depth - top - 1), n: depth - top}), nil
		}
		segs = append(segs, segment{depth: startDepth, pk: start, n: depth - startDepth + 1})
		if !parent.Valid {
			return segs, nil // met at the root
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

// deepestOnBranch returns the deepest depth in [a, b) whose entry is on the
// branch, given a run holding the entry ref at depth b, the one at a on the
// branch and the one at b not: an ancestor is on the branch exactly when
// every ancestor above it is, so a binary search finds it.
func (w q) deepestOnBranch(session, a, b, ref int64) (int64, error) {
	for b-a > 1 {
		m := a + (b-a)/2
		on, err := w.onBranch(session, m, ref-(b-m))
		if err != nil {
			return 0, err
		}
		if on {
			a = m
		} else {
			b = m
		}
	}
	return a, nil
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
			if err := w.insertRun(session, max(s.depth, oldDepth+1), end, off); err != nil {
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

// insertRun adds the branch rows from depth to depth end, holding the
// entries depth + off; a missing entry is a corrupt run.
func (w q) insertRun(session, from, end, off int64) error {
	res, err := w.exec(qInsertRun, session, from, end, off)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != end-from+1 {
		return &sessiontree.CorruptError{Reason: fmt.Sprintf("entry keys %d..%d: %d of %d entries exist", from+off, end+off, n, end-from+1)}
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
