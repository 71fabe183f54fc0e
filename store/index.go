package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree/engine"
)

// indexChunk bounds how many pending entries one transaction of [Store.Index]
// indexes: at the trigram tokenizer's few MB/s, about a second's work for
// entries of a couple of KB, so that other writers do not wait long for the
// write lock, progress moves and a canceled context stops it soon. Larger
// chunks (fewer, larger FTS5 segments) measured no faster.
var indexChunk int64 = 2000

// pendingSession is a session whose newest entries the search index does not
// hold yet: seq indexed+1 .. count.
type pendingSession struct {
	PK      int64 `db:"pk"`
	Indexed int64 `db:"indexed_count"`
	Count   int64 `db:"entry_count"`
}

// qPending reads the pending sessions through search_pending, which lists
// exactly them (migration 8), instead of every sessions row: with nothing
// pending, the check every search makes first is a look at an empty table.
const qPending = `SELECT s.pk, s.indexed_count, s.entry_count FROM search_pending p JOIN sessions s ON s.pk = p.session
WHERE s.indexed_count < s.entry_count AND s.deleting = 0 ORDER BY p.session`

// IndexProgress is what [Store.Index] reports as it goes: entries indexed so
// far of those pending when it began.
type IndexProgress struct {
	Done, Total int64
}

// Index brings the search index up to date and returns how many entries it
// indexed. Writes store entries only; the index holds each session's entries
// up to a mark kept in the session's row, and Index indexes what lies beyond
// it, many entries per FTS5 segment, advancing the mark in the same
// transaction (schema.sql, migrations 7 and 8). [Store.Search] calls it first, so a
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
//
// All of a chunk's sessions go into the index in one statement: FTS5
// writes its pending terms out as a new segment at the end of every
// statement that changed it (its savepoint), and merges segments as they
// pile up, so a statement per session made as many segments as sessions,
// and indexing many small sessions cost three times what their text does.
func indexSome(ctx context.Context, tx *engine.Tx) (int64, error) {
	var pending []pendingSession
	if err := tx.SQL().SelectContext(ctx, &pending, qPending); err != nil {
		return 0, err
	}
	ranges, marks, done := chunkOf(pending, indexChunk)
	if done == 0 {
		return 0, nil
	}
	// CROSS JOIN keeps the ranges the outer loop, so each is one range
	// scan of entries by primary key.
	_, err := tx.SQL().ExecContext(ctx, `INSERT INTO entries_fts (rowid, body)
SELECT t.pk, t.body FROM json_each(?) r CROSS JOIN search_text t
WHERE t.pk BETWEEN json_extract(r.value, '$[0]') AND json_extract(r.value, '$[1]')`, ranges)
	if err != nil {
		return 0, err
	}
	_, err = tx.SQL().ExecContext(ctx, `UPDATE sessions SET indexed_count = json_extract(m.value, '$[1]')
FROM json_each(?) m WHERE sessions.pk = json_extract(m.value, '$[0]')`, marks)
	if err != nil {
		return 0, err
	}
	return done, nil
}

// chunkOf picks the pending entries of the next chunk: up to limit, whole
// sessions in pk order and the first part of the one that does not fit.
// It returns their key ranges as a JSON array of [lo, hi] pairs, the new
// marks as a JSON array of [session pk, indexed_count] pairs, and how
// many entries they are.
func chunkOf(pending []pendingSession, limit int64) (ranges, marks string, done int64) {
	var r, m strings.Builder
	r.WriteByte('[')
	m.WriteByte('[')
	for _, ps := range pending {
		if done >= limit {
			break
		}
		upto := min(ps.Count, ps.Indexed+limit-done)
		if done > 0 {
			r.WriteByte(',')
			m.WriteByte(',')
		}
		fmt.Fprintf(&r, "[%d,%d]", ps.PK<<32|(ps.Indexed+1), ps.PK<<32|upto)
		fmt.Fprintf(&m, "[%d,%d]", ps.PK, upto)
		done += upto - ps.Indexed
	}
	r.WriteByte(']')
	m.WriteByte(']')
	return r.String(), m.String(), done
}
