package store

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree/engine"
)

// indexChunk bounds how many pending entries one transaction of [Store.Index]
// indexes, so that other writers wait for it a fraction of a second at most
// and a canceled context stops it soon.
var indexChunk int64 = 20000

// pendingSession is a session whose newest entries the search index does not
// hold yet: seq indexed+1 .. count.
type pendingSession struct {
	PK      int64 `db:"pk"`
	Indexed int64 `db:"indexed_count"`
	Count   int64 `db:"entry_count"`
}

const qPending = `SELECT pk, indexed_count, entry_count FROM sessions
WHERE indexed_count < entry_count AND deleting = 0 ORDER BY pk`

// IndexProgress is what [Store.Index] reports as it goes: entries indexed so
// far of those pending when it began.
type IndexProgress struct {
	Done, Total int64
}

// Index brings the search index up to date and returns how many entries it
// indexed. Writes store entries only; the index holds each session's entries
// up to a mark kept in the session's row, and Index indexes what lies beyond
// it, many entries per FTS5 segment, advancing the mark in the same
// transaction (schema.sql, migration 7). [Store.Search] calls it first, so a
// search always sees every committed entry; calling it after a large write
// (as the command line's import does) moves that cost out of the next
// search. It commits every few thousand entries, so other writers are not
// held up for long and an interrupted Index keeps what it did. progress may
// be nil.
func (s *Store) Index(ctx context.Context, progress func(IndexProgress)) (int64, error) {
	var pending []pendingSession
	err := s.db.View(ctx, func(tx *sqlx.Tx) error {
		return tx.SelectContext(ctx, &pending, qPending)
	})
	if err != nil {
		return 0, fmt.Errorf("index: %w", err)
	}
	var p IndexProgress
	for _, ps := range pending {
		p.Total += ps.Count - ps.Indexed
	}
	for len(pending) > 0 {
		if progress != nil {
			progress(p)
		}
		var n int64
		err := s.db.Update(ctx, func(tx *engine.Tx) error {
			var err error
			n, err = indexSome(ctx, tx)
			return err
		})
		if err != nil {
			return p.Done, fmt.Errorf("index: %w", err)
		}
		if n == 0 {
			break
		}
		p.Done += n
		p.Total = max(p.Total, p.Done)
		if n < indexChunk {
			break
		}
	}
	if progress != nil && p.Total > 0 {
		progress(p)
	}
	return p.Done, nil
}

// indexSome indexes up to about indexChunk pending entries, whole sessions
// or the first part of one, and advances their marks. It reads what is
// pending inside the transaction, so concurrent writers and indexers never
// index an entry twice.
func indexSome(ctx context.Context, tx *engine.Tx) (int64, error) {
	var pending []pendingSession
	if err := tx.SQL().SelectContext(ctx, &pending, qPending); err != nil {
		return 0, err
	}
	var done int64
	for _, ps := range pending {
		if done >= indexChunk {
			break
		}
		upto := min(ps.Count, ps.Indexed+indexChunk-done)
		_, err := tx.SQL().ExecContext(ctx, `INSERT INTO entries_fts (rowid, body)
SELECT pk, body FROM search_text WHERE pk BETWEEN ? AND ?`, ps.PK<<32|(ps.Indexed+1), ps.PK<<32|upto)
		if err != nil {
			return done, err
		}
		if _, err := tx.SQL().ExecContext(ctx, `UPDATE sessions SET indexed_count = ? WHERE pk = ?`, upto, ps.PK); err != nil {
			return done, err
		}
		done += upto - ps.Indexed
	}
	return done, nil
}
