package pgengine

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
)

// The tree's counts in the sessions row (branch_count, root_count,
// compaction_count; migration 21) are kept by the writes, in Go, by
// sessiontree.Shape.AddEntry (ShapeOf's rule one entry at a time), as the
// SQLite engine keeps its own (engine/shape.go); label_count is a
// trigger's (migration 21). This file finds what the rule needs: whether
// the parent is in the tree (not a leaf entry: placement.Leaf) and
// whether it already had a child. Summary reads the row; Check compares
// it with ShapeOf over the log (checkShape).

var _ sessiontree.SummaryReader = (*Storage)(nil)

// treeCounts are the sessions row's tree counts.
type treeCounts struct {
	Branches    int64 `db:"branch_count"`
	Roots       int64 `db:"root_count"`
	Compactions int64 `db:"compaction_count"`
	Labels      int64 `db:"label_count"`
}

// shapeColumns are treeCounts' columns.
const shapeColumns = `branch_count, root_count, compaction_count, label_count`

func (c treeCounts) shape() sessiontree.Shape {
	return sessiontree.Shape{Branches: c.Branches, Roots: c.Roots, Compactions: c.Compactions, Labels: c.Labels}
}

// needsChildLookup reports whether counting an entry of type t, of
// sequence number seq, under parent (nil for none) needs to know whether
// the parent already had a child: only when the entry is in the tree
// under a parent in it, and the parent is not the entry stored right
// before (which has no child yet): most appends need none.
func needsChildLookup(t sessiontree.EntryType, parent *placement, seq int64) bool {
	return t != sessiontree.TypeLeaf && parent != nil && !parent.Leaf && parent.Seq != seq-1
}

// qHadChild says whether entry $2 of session $1 has a child other than a
// leaf entry: those stored right after their parent are not in
// entries_by_parent (migration 11), and are looked up by the next seq.
const qHadChild = `SELECT EXISTS (SELECT 1 FROM entries WHERE session = $1 AND parent_seq = $2
		AND parent_seq <> seq - 1 AND type <> 'leaf')
	OR EXISTS (SELECT 1 FROM entries WHERE session = $1 AND seq = $2 + 1 AND parent_seq = $2 AND type <> 'leaf')`

// hadChild reports whether the stored entry of sequence number parent
// has a child other than a leaf entry.
func hadChild(ctx context.Context, q sqlx.QueryerContext, session, parent int64) (bool, error) {
	var had bool
	err := sqlx.GetContext(ctx, q, &had, qHadChild, session, parent)
	return had, err
}

// countEntry counts into the row's shape an entry of type t and sequence
// number seq, not stored yet, under parent (nil for none), every entry
// before it stored: the parent's children are looked up in q when
// needsChildLookup says so.
func (st *session) countEntry(ctx context.Context, q sqlx.QueryerContext, t sessiontree.EntryType, parent *placement, seq int64) error {
	had := false
	if needsChildLookup(t, parent, seq) {
		var err error
		if had, err = hadChild(ctx, q, st.pk, parent.Seq); err != nil {
			return err
		}
	}
	st.shape.AddEntry(t, parent == nil || parent.Leaf, had)
	return nil
}

// qSummary reads what Summary returns from the sessions row.
const qSummary = `SELECT message_count, coalesce(first_user_text, '') AS first_user_text,
	CASE WHEN entry_count > 0 THEN updated_at ELSE '' END AS updated_at, ` + shapeColumns + `
	FROM sessions WHERE pk = $1`

// Summary returns the session's [sessiontree.Summary] from its sessions
// row: one row, whatever the session's size.
func (s *Storage) Summary(ctx context.Context) (sessiontree.Summary, error) {
	var r struct {
		Messages  int64  `db:"message_count"`
		First     string `db:"first_user_text"`
		UpdatedAt string `db:"updated_at"`
		treeCounts
	}
	if err := s.get(ctx, "read summary", &r, qSummary); err != nil {
		return sessiontree.Summary{}, err
	}
	sum := sessiontree.Summary{Shape: r.shape(), UpdatedAt: r.UpdatedAt}
	sum.List = sessiontree.ListInfo{MessageCount: r.Messages, FirstMessage: r.First}
	if sum.List.FirstMessage == "" {
		sum.List.FirstMessage = sessiontree.NoMessages
	}
	return sum, nil
}

// checkShape compares the tree's counts of the session's row (as
// Summary reads them) with the shape of its log, whose current labels
// are labels.
func (s *Storage) checkShape(ctx context.Context, log []sessiontree.Entry, labels map[string]string) error {
	stored, err := s.Summary(ctx)
	if err != nil {
		return err
	}
	if want := sessiontree.ShapeOf(log, labels); stored.Shape != want {
		return &sessiontree.CorruptError{Reason: fmt.Sprintf("stored tree counts %+v, log gives %+v", stored.Shape, want)}
	}
	return nil
}
