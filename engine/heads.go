package engine

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/sessiontree/sessiontree"
)

// errHeadNUL reports a head row whose fields hold a NUL themselves, so
// that they cannot be told apart in qLogHeads' one text.
var errHeadNUL = errors.New("an entry's fields hold a NUL")

// LogHeads returns every entry of the session in append order with its
// Seq, Type, ID, ParentID and Timestamp from the entries table's columns,
// and Raw nil: one range scan that neither fetches nor checks the JSON
// (Check does), for the callers that draw the tree
// ([sessiontree.HeadReader]). A session whose fields hold a NUL is read
// from its log.
func (s *Storage) LogHeads(ctx context.Context) ([]sessiontree.Entry, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	lo, hi := pkRange(s.pk)
	var list []sessiontree.Entry
	err := s.db.read(ctx, func(r q) error {
		var n int64 // the list's size, so that it is allocated once
		if err := r.row(qEntryCount, args(s.pk), &n); err != nil {
			return err
		}
		var err error
		list, err = r.heads(int(n), qLogHeads, lo, hi)
		return err
	})
	if errors.Is(err, errHeadNUL) {
		return s.logWithoutRaw(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("read log heads: %w", translate(err))
	}
	return list, nil
}

// logWithoutRaw reads the log and drops the entries' JSON.
func (s *Storage) logWithoutRaw(ctx context.Context) ([]sessiontree.Entry, error) {
	log, err := s.Log(ctx, 0, 0)
	for i := range log {
		log[i].Raw = nil
	}
	return log, err
}

// heads runs a query of about n head rows (see qLogHeads).
func (x q) heads(n int, query string, args ...any) ([]sessiontree.Entry, error) {
	r, err := x.rows(query, args...)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	list := make([]sessiontree.Entry, 0, n)
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

// scanHead reads one head row: the key (the seq is its low 32 bits) and
// the type, id, parent id ("" for null) and timestamp, NUL-separated as
// entryFields has them.
func scanHead(vals []driver.Value) (sessiontree.Entry, error) {
	pk, ok0 := vals[0].(int64)
	fields, ok1 := vals[1].(string)
	if !ok0 || !ok1 {
		return sessiontree.Entry{}, &sessiontree.CorruptError{Reason: fmt.Sprintf("entry head row of %T, %T", vals[0], vals[1])}
	}
	typ, id, parent, ts, ok := splitFields(fields)
	if !ok {
		return sessiontree.Entry{}, errHeadNUL
	}
	return sessiontree.Entry{Seq: pk & 0xffffffff, Type: sessiontree.EntryType(typ), ID: id, ParentID: parent, Timestamp: ts}, nil
}
