package engine

import (
	"context"
	"database/sql/driver"
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
	err := s.db.read(ctx, func(r q) (err error) {
		list, err = r.heads(qLogHeads, lo, hi)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read log heads: %w", translate(err))
	}
	return list, nil
}

// heads runs a query of head rows (see qLogHeads).
func (x q) heads(query string, args ...any) ([]sessiontree.Entry, error) {
	r, err := x.rows(query, args...)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	list := []sessiontree.Entry{}
	for r.Next() {
		e, err := scanHead(r.dest)
		if err != nil {
			r.Close()
			return nil, err
		}
		list = append(list, e)
	}
	return list, r.Err()
}

// scanHead reads one head row: the key (the seq is its low 32 bits), type,
// id, parent id ("" for null) and timestamp.
func scanHead(vals []driver.Value) (sessiontree.Entry, error) {
	pk, ok0 := vals[0].(int64)
	typ, ok1 := vals[1].(string)
	id, ok2 := vals[2].(string)
	parent, ok3 := vals[3].(string)
	ts, ok4 := vals[4].(string)
	if !ok0 || !ok1 || !ok2 || !ok3 || !ok4 {
		return sessiontree.Entry{}, &sessiontree.CorruptError{Reason: fmt.Sprintf("entry head row of %T, %T, %T, %T, %T", vals[0], vals[1], vals[2], vals[3], vals[4])}
	}
	return sessiontree.Entry{Seq: pk & 0xffffffff, Type: sessiontree.EntryType(typ), ID: id, ParentID: parent, Timestamp: ts}, nil
}
