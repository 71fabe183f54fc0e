package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/sessiontree/sessiontree"
)

var _ sessiontree.SummaryReader = (*Storage)(nil)

// qSessionSummary reads what Summary returns: the session row's counters
// (the writes keep the tree's, shape.go; a trigger of migration 15 the
// labels'), its first user text and its last change.
const qSessionSummary = `SELECT entry_count, message_count, coalesce(first_user_text, ''),
       CASE WHEN entry_count > 0 THEN updated_at ELSE '' END,
       branch_count, root_count, compaction_count, label_count
FROM sessions WHERE pk = ?1`

// Summary returns the session's [sessiontree.Summary] from its sessions
// row: one row, whatever the session's size.
func (s *Storage) Summary(ctx context.Context) (sessiontree.Summary, error) {
	if err := s.check(ctx); err != nil {
		return sessiontree.Summary{}, err
	}
	var sum sessiontree.Summary
	err := s.db.read(ctx, func(r q) (err error) {
		sum, err = s.summary(r)
		return err
	})
	if err != nil {
		return sessiontree.Summary{}, fmt.Errorf("read summary: %w", translate(err))
	}
	return sum, nil
}

func (s *Storage) summary(r q) (sessiontree.Summary, error) {
	var sum sessiontree.Summary
	var entries int64
	sh := &sum.Shape
	err := r.row(qSessionSummary, args(s.pk), &entries, &sum.List.MessageCount, &sum.List.FirstMessage,
		&sum.UpdatedAt, &sh.Branches, &sh.Roots, &sh.Compactions, &sh.Labels)
	if errors.Is(err, sql.ErrNoRows) {
		return sum, &SessionNotFoundError{ID: s.meta.ID}
	}
	if sum.List.FirstMessage == "" {
		sum.List.FirstMessage = sessiontree.NoMessages
	}
	return sum, err
}

// checkShape compares the tree's counters of session pk's row with the
// shape its replayed log gives (replayed.shape).
func checkShape(r q, pk int64, want sessiontree.Shape) error {
	stored, err := (&Storage{db: r.db, pk: pk}).summary(r)
	if err != nil {
		return err
	}
	if stored.Shape != want {
		return &sessiontree.CorruptError{Reason: fmt.Sprintf("stored tree counts %+v, log gives %+v", stored.Shape, want)}
	}
	return nil
}
