package pgengine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
)

// onBranch is true when the entry aliased e is the branch row at its depth.
const onBranch = `EXISTS (SELECT 1 FROM branch b WHERE b.session = e.session AND b.depth = e.depth AND b.seq = e.seq)`

// upQuery walks from entry $2 up through parent ids, one depth at a time,
// until an entry on the active branch (included), depth $3 (included), or
// a parent that is missing or out of place (the walk then ends early,
// which the caller reports as damage). Depth falls by one each step, so
// the walk ends even on a cycle. Columns: the walk's step n, and the
// entry's placement, whether it is on the branch, and its JSON.
const upQuery = `WITH RECURSIVE up (n, seq, id, parent_id, depth, start_depth, on_branch, raw, checksum) AS (
    SELECT 1, e.seq, e.id, e.parent_id, e.depth, e.start_depth, ` + onBranch + `, e.raw, e.checksum
    FROM entries e WHERE e.session = $1 AND e.seq = $2
  UNION ALL
    SELECT up.n + 1, e.seq, e.id, e.parent_id, e.depth, e.start_depth, ` + onBranch + `, e.raw, e.checksum
    FROM up JOIN entries e ON e.session = $1 AND e.id = up.parent_id AND e.depth = up.depth - 1
    WHERE NOT up.on_branch AND up.depth > $3
)
SELECT n, seq, id, parent_id, depth, start_depth, on_branch, raw, checksum FROM up ORDER BY n`

// branchRange reads the branch rows from depth $2 to $3 with their
// entries, root first. It looks the entries up by primary key from the
// array of the range's seqs: written as a join, the planner hashes every
// entry of the session to meet a few hundred branch rows (EXPLAIN ANALYZE
// on a 20k session: a 14 ms seq scan, against well under 1 ms). Along a
// path seq grows with depth (a parent is stored before its children), so
// seq order is root first.
const branchRange = `SELECT ` + rowCols + ` FROM entries e WHERE e.session = $1
	AND e.seq = ANY (ARRAY(SELECT b.seq FROM branch b WHERE b.session = $1 AND b.depth BETWEEN $2 AND $3))
	ORDER BY e.seq`

// upRow is one step of upQuery.
type upRow struct {
	N          int64          `db:"n"`
	Seq        int64          `db:"seq"`
	ID         string         `db:"id"`
	ParentID   sql.NullString `db:"parent_id"`
	Depth      int            `db:"depth"`
	StartDepth int            `db:"start_depth"`
	OnBranch   bool           `db:"on_branch"`
	Raw        []byte         `db:"raw"`
	Sum        sql.NullInt64  `db:"checksum"`
}

// placement is where an entry sits, as stored with it.
type placement struct {
	Seq        int64         `db:"seq"`
	Depth      int           `db:"depth"`
	StartDepth int           `db:"start_depth"`
	Thinking   sql.NullInt64 `db:"thinking_seq"`
	Model      sql.NullInt64 `db:"model_seq"`
	Tools      sql.NullInt64 `db:"tools_seq"`
	// Leaf says the entry is a leaf entry, which is not in the tree: an
	// entry under it is a root (sessiontree.Shape.AddEntry). Read where
	// a write's parent is read (placementOf, the locked row's leaf).
	Leaf bool `db:"is_leaf"`
}

// nullPlacement is a placement read through an outer join (the leaf's,
// with the sessions row), every column NULL when there is none.
type nullPlacement struct {
	Seq        sql.NullInt64 `db:"leaf_seq"`
	Depth      sql.NullInt64 `db:"leaf_depth"`
	StartDepth sql.NullInt64 `db:"leaf_start_depth"`
	Thinking   sql.NullInt64 `db:"leaf_thinking_seq"`
	Model      sql.NullInt64 `db:"leaf_model_seq"`
	Tools      sql.NullInt64 `db:"leaf_tools_seq"`
	Leaf       sql.NullBool  `db:"leaf_is_leaf"`
}

func (n nullPlacement) placement() *placement {
	if !n.Seq.Valid {
		return nil
	}
	return &placement{Seq: n.Seq.Int64, Depth: int(n.Depth.Int64), StartDepth: int(n.StartDepth.Int64),
		Thinking: n.Thinking, Model: n.Model, Tools: n.Tools, Leaf: n.Leaf.Bool}
}

// placementOf reads entry id's placement; ok is false when it does not
// exist.
func placementOf(ctx context.Context, q sqlx.QueryerContext, session int64, id string) (p placement, ok bool, err error) {
	if !storableText(id) {
		return p, false, nil
	}
	err = sqlx.GetContext(ctx, q, &p, `SELECT seq, depth, start_depth, thinking_seq, model_seq, tools_seq,
		type = 'leaf' AS is_leaf FROM entries WHERE session = $1 AND id = $2`, session, id)
	if errors.Is(err, sql.ErrNoRows) {
		return p, false, nil
	}
	return p, err == nil, err
}

// Path returns the path from entry from up to the root or the compaction
// boundary, root first.
func (s *Storage) Path(ctx context.Context, from string) ([]sessiontree.Entry, error) {
	return s.walk(ctx, from, false)
}

// FullPath returns the path from entry from to the root, root first.
func (s *Storage) FullPath(ctx context.Context, from string) ([]sessiontree.Entry, error) {
	return s.walk(ctx, from, true)
}

// walk reads a path in one snapshot: the part off the active branch by
// upQuery, the rest as one range of the branch table.
func (s *Storage) walk(ctx context.Context, from string, full bool) ([]sessiontree.Entry, error) {
	if err := s.check(ctx); err != nil || from == "" {
		return nil, err
	}
	var path []sessiontree.Entry
	err := s.db.view(ctx, "path from "+from, func(tx *sqlx.Tx) error {
		p, ok, err := placementOf(ctx, tx, s.pk, from)
		if err != nil {
			return err
		}
		if !ok {
			return &sessiontree.EntryNotFoundError{ID: from}
		}
		start := p.StartDepth
		if full {
			start = 1
		}
		path, err = readPath(ctx, tx, s.pk, p, start)
		return err
	})
	return path, err
}

// readPath reads the path from the entry placed at p up to depth start and
// checks that it is one chain from there.
func readPath(ctx context.Context, tx *sqlx.Tx, session int64, p placement, start int) ([]sessiontree.Entry, error) {
	var up []upRow
	if err := tx.SelectContext(ctx, &up, upQuery, session, p.Seq, start); err != nil {
		return nil, err
	}
	var rows []row
	if last := up[len(up)-1]; last.OnBranch {
		err := tx.SelectContext(ctx, &rows, branchRange, session, start, last.Depth)
		if err != nil {
			return nil, err
		}
		up = up[:len(up)-1]
	}
	for i := len(up) - 1; i >= 0; i-- {
		rows = append(rows, row{Seq: up[i].Seq, ID: up[i].ID, Raw: up[i].Raw, Sum: up[i].Sum})
	}
	path, err := entriesOf(rows)
	if err != nil {
		return nil, err
	}
	return path, checkChain(path, p.Depth-start+1, start)
}

// checkChain checks that path is want entries long, each the child of the
// one before, starting at a root when start is 1.
func checkChain(path []sessiontree.Entry, want, start int) error {
	if len(path) == 0 {
		return &sessiontree.CorruptError{Reason: "empty path"}
	}
	first := path[0]
	if start == 1 && first.ParentID != "" {
		return &sessiontree.CorruptError{EntryID: first.ID, Reason: "parent " + first.ParentID + " does not exist where the tree needs it (a missing parent or a cycle)"}
	}
	for i := 1; i < len(path); i++ {
		if path[i].ParentID != path[i-1].ID {
			return &sessiontree.CorruptError{EntryID: path[i].ID, Reason: fmt.Sprintf("parent is %s, the path holds %s", path[i].ParentID, path[i-1].ID)}
		}
	}
	if len(path) != want {
		return &sessiontree.CorruptError{EntryID: path[len(path)-1].ID, Reason: fmt.Sprintf("path has %d entries, its depth says %d", len(path), want)}
	}
	return nil
}
