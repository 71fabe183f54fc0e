package engine

import (
	"context"
	"fmt"

	"github.com/sessiontree/sessiontree"
)

// LogHeads returns every entry of the session in append order with its
// Seq, Type, ID, ParentID and Timestamp from the entries table's columns,
// and Raw nil: one range scan that neither fetches nor checks the JSON
// (Check does), for the callers that draw the tree
// ([sessiontree.HeadReader]).
func (s *Storage) LogHeads(ctx context.Context) ([]sessiontree.Entry, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	lo, hi := pkRange(s.pk)
	var list []sessiontree.Entry
	err := s.db.read(ctx, func(r q) error {
		var n int64 // the list's size, so that it is allocated once (sizeHint)
		if err := r.row(qEntryCount, args(s.pk), &n); err != nil {
			return err
		}
		var err error
		list, err = r.heads(sizeHint(n), lo, hi)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read log heads: %w", translate(err))
	}
	return list, nil
}

// heads reads the head rows of keys lo..hi (see qLogHeads), about n.
func (x q) heads(n int, lo, hi int64) ([]sessiontree.Entry, error) {
	r, err := x.rows(qLogHeads, lo, hi)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	list := make([]sessiontree.Entry, 0, n)
	for r.Next() {
		var e sessiontree.Entry
		var typ string
		if err := r.Scan(&e.Seq, &typ, &e.ID, &e.ParentID, &e.Timestamp); err != nil {
			r.Close()
			return nil, &sessiontree.CorruptError{Reason: "entry head row: " + err.Error()}
		}
		e.Seq &= 0xffffffff
		e.Type = sessiontree.EntryType(typ)
		list = append(list, e)
	}
	return list, r.Err()
}
