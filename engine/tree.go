package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/sessiontree/sessiontree"
)

var _ sessiontree.OutlineReader = (*Storage)(nil)

// The outline's queries: each reads what the folded tree names through
// an index, never the session's entries one by one.
const (
	// qOutlineLinks lists the children not appended right after their
	// parent (parent_pk <> pk - 1): entries_by_parent holds exactly those.
	qOutlineLinks = `SELECT pk, parent_pk FROM entries
WHERE parent_pk BETWEEN ?1 AND ?2 AND parent_pk <> pk - 1`
	// qOutlineRoots lists the entries without a parent (entries_roots).
	qOutlineRoots = `SELECT pk FROM entries WHERE session = ?1 AND parent_pk IS NULL`
	// qOutlineTypes lists the leaf entries and the entries a folded tree
	// always shows (entries_by_type).
	qOutlineTypes = `SELECT pk, type = 'leaf' FROM entries
WHERE session = ?1 AND type IN ('leaf', 'compaction', 'branch_summary', 'context_edit') AND type <> 'message'`
	// qOutlineLabelled lists the labelled entries (labels, then UNIQUE
	// (session, id)).
	qOutlineLabelled = `SELECT e.pk FROM labels l JOIN entries e ON e.session = l.session AND e.id = l.target_id
WHERE l.session = ?1`
	// qOutlineByID finds entries by id (UNIQUE (session, id)).
	qOutlineByID    = `SELECT pk FROM entries WHERE session = ?1 AND id IN (SELECT value FROM json_each(?2))`
	qOutlineSession = `SELECT coalesce(leaf_pk, 0), entry_count FROM sessions WHERE pk = ?1`
	// qOutlineEntries reads the outline's entries by key, each with its
	// parent's key and whether the branch row at its depth is itself.
	qOutlineEntries = `SELECT ` + entryCols + `, coalesce(e.parent_pk, 0), coalesce(b.entry = e.pk, 0)
FROM json_each(?1) j JOIN entries e ON e.pk = j.value
LEFT JOIN branch b ON b.session = e.session AND b.depth = e.depth
ORDER BY e.pk`
)

// Outline returns the session's outline ([sessiontree.OutlineReader]):
// a few indexed queries that read the entries the folded tree names, a
// number of rows proportional to what it shows (its roots, forks and
// their children, tips, labels, leaf, compactions, branch summaries and
// context edits), whatever the session's size.
func (s *Storage) Outline(ctx context.Context) ([]sessiontree.OutlineEntry, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	var out []sessiontree.OutlineEntry
	err := s.db.read(ctx, func(r q) (err error) {
		out, err = s.outline(r)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read outline: %w", translate(err))
	}
	return out, nil
}

// outlineRow is an entry read for the outline.
type outlineRow struct {
	e        sessiontree.Entry
	parentPK int64 // 0 for none
	active   bool
}

func (s *Storage) outline(r q) ([]sessiontree.OutlineEntry, error) {
	lo, _ := pkRange(s.pk)
	var leafPK, count int64
	if err := r.row(qOutlineSession, args(s.pk), &leafPK, &count); err != nil {
		return nil, err
	}
	if count == 0 {
		return nil, nil
	}
	last := lo + count - 1
	keys, leaves, err := outlineKeys(r, s.pk, lo, last)
	if err != nil {
		return nil, err
	}
	keys[leafPK] = true
	keys[last] = true
	rows, err := outlineRows(r, keys)
	if err != nil {
		return nil, err
	}
	// The targets of context edits, which the edits' JSON names.
	if more, err := editTargets(r, s.pk, rows, keys); err != nil || len(more) > 0 {
		if err != nil {
			return nil, err
		}
		extra, err := outlineRows(r, more)
		if err != nil {
			return nil, err
		}
		rows = append(rows, extra...)
		slices.SortFunc(rows, func(a, b outlineRow) int { return cmp.Compare(a.e.Seq, b.e.Seq) })
	}
	out := make([]sessiontree.OutlineEntry, 0, len(rows))
	var prev *outlineRow // the previous entry of the outline
	for i := range rows {
		row := &rows[i]
		pk := entryPK(s.pk, row.e.Seq)
		o := sessiontree.OutlineEntry{Entry: row.e, Active: row.active}
		switch {
		case row.e.Type == sessiontree.TypeLeaf:
			o.Parent = row.e.ParentID
			out = append(out, o)
			continue // not part of the tree: not the parent of what follows
		case row.parentPK == 0 || leaves[row.parentPK]:
			// a root of the tree
		case row.parentPK != pk-1 || prev == nil:
			o.Parent = row.e.ParentID
		default:
			// Appended right after its parent: every entry between
			// the previous one of the outline and this one is the
			// parent of the next (see outlineKeys).
			o.Parent = prev.e.ID
			o.Skipped = row.e.Seq - prev.e.Seq - 1
		}
		out = append(out, o)
		prev = row
	}
	return out, nil
}

// outlineKeys returns the keys of the entries the outline needs, and the
// keys of the leaf entries. Besides what the folded tree always shows, a
// root and every child not appended right after its parent, and their
// parents, are kept, and the entry before each of them, and each leaf
// entry with the entries before and after it: so an entry left out is the child of the entry
// stored before it and has no other child, and a run of them between two
// kept entries is one chain.
func outlineKeys(r q, session, lo, last int64) (keys, leaves map[int64]bool, err error) {
	keys, leaves = map[int64]bool{}, map[int64]bool{}
	add := func(pks ...int64) {
		for _, pk := range pks {
			if pk >= lo && pk <= last {
				keys[pk] = true
			}
		}
	}
	err = scanInts(r, func(v []int64) {
		child, parent := v[0], v[1]
		add(child, child-1, parent, parent+1)
	}, qOutlineLinks, lo, last)
	if err == nil {
		err = scanInts(r, func(v []int64) { add(v[0], v[0]-1) }, qOutlineRoots, session)
	}
	if err == nil {
		err = scanInts(r, func(v []int64) {
			if pk, leaf := v[0], v[1] == 1; leaf {
				// The leaf entry itself too: stored right after its
				// parent, and the parent of what follows it, no other
				// rule keeps it.
				leaves[pk] = true
				add(pk-1, pk, pk+1)
			} else {
				add(pk)
			}
		}, qOutlineTypes, session)
	}
	if err == nil {
		err = scanInts(r, func(v []int64) { add(v[0]) }, qOutlineLabelled, session)
	}
	return keys, leaves, err
}

// editTargets returns the keys of the targets of the context edits among
// rows that keys does not hold yet.
func editTargets(r q, session int64, rows []outlineRow, keys map[int64]bool) (map[int64]bool, error) {
	var ids []string
	for _, row := range rows {
		if row.e.Type == sessiontree.TypeContextEdit {
			ids = append(ids, row.e.TargetID())
		}
	}
	more := map[int64]bool{}
	if len(ids) == 0 {
		return more, nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	err = scanInts(r, func(v []int64) {
		if !keys[v[0]] {
			more[v[0]] = true
		}
	}, qOutlineByID, session, string(list))
	return more, err
}

// outlineRows reads the entries of keys in append order.
func outlineRows(r q, keys map[int64]bool) ([]outlineRow, error) {
	list, err := json.Marshal(slices.Sorted(maps.Keys(keys)))
	if err != nil {
		return nil, err
	}
	rs, err := r.rows(qOutlineEntries, string(list))
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := make([]outlineRow, 0, len(keys))
	for rs.Next() {
		e, err := scanEntry(rs.dest)
		if err != nil {
			rs.Close()
			return nil, r.entryError(err)
		}
		parent, _ := rs.dest[4].(int64)
		active, _ := rs.dest[5].(int64)
		out = append(out, outlineRow{e: e, parentPK: parent, active: active == 1})
	}
	return out, rs.Err()
}

// scanInts runs a query of integer columns and calls fn with each row's
// values.
func scanInts(r q, fn func(v []int64), query string, a ...any) error {
	rs, err := r.rows(query, a...)
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		v := make([]int64, len(rs.dest))
		for i, d := range rs.dest {
			n, ok := d.(int64)
			if !ok {
				return fmt.Errorf("%s: column %d is %T, want an integer", query, i, d)
			}
			v[i] = n
		}
		fn(v)
	}
	return rs.Err()
}
