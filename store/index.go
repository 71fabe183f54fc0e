package store

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree/engine"
)

// One transaction of [Store.Index] indexes at most indexChunk pending
// entries and, of those, only as many as hold indexChunkBytes of JSON
// (always at least one): at the trigram tokenizer's few MB/s, about a
// second's work, so that other writers do not wait long for the write
// lock, progress moves and a canceled context stops it soon. The count
// alone let one chunk hold a whole 200 MB tool output, 40 s under the
// lock; now the bytes bound what a chunk reads, the text each entry gives
// the index is capped (schema.sql, migration 10), and the text is read
// before the write transaction (see chunk). Larger chunks (fewer, larger
// FTS5 segments) measured no faster. Variables for tests.
var (
	indexChunk      int64 = 2000
	indexChunkBytes int64 = 4 << 20
)

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

// pendingTotal counts the entries pending in sessions.
func pendingTotal(sessions []pendingSession) int64 {
	var n int64
	for _, ps := range sessions {
		n += ps.Count - ps.Indexed
	}
	return n
}

// IndexProgress is what [Store.Index] reports as it goes: entries indexed so
// far of those pending when it began.
type IndexProgress struct {
	Done, Total int64
}

// IndexOptions configure [Store.Index]. The zero value indexes everything
// pending, waiting for other writers as long as the context allows.
type IndexOptions struct {
	// Progress, when set, is called before each chunk and once at the
	// end, never inside a transaction.
	Progress func(IndexProgress)
	// NoWait makes Index stop when another process holds the database's
	// write lock for more than a moment, returning what it indexed so far
	// with an error matching sessiontree.ErrLocked, instead of waiting.
	NoWait bool
	// Waiting, when set, is called each time Index starts waiting for
	// another process's write (after a moment's wait, which a write such
	// as an append does not outlast).
	Waiting func()
}

// Index brings the search index up to date and returns how many entries it
// indexed. Writes store entries only; the index holds each session's entries
// up to a mark kept in the session's row, and Index indexes what lies beyond
// it, many entries per FTS5 segment, advancing the mark in the same
// transaction (schema.sql, migrations 7 and 8). Each entry gives the index
// the first 1 MiB of its text ([IndexedTextLimit]). Calling it after a
// large write (as the command line's import does) keeps the searches that
// follow from reading what is pending themselves (see [Store.Search]),
// which they do only so far.
//
// It commits a chunk of entries at a time, each bounded in entries and in
// bytes, so other writers are not held up for long; ctx's cancellation
// stops it between chunks or inside one, and what it committed stays.
func (s *Store) Index(ctx context.Context, opts IndexOptions) (int64, error) {
	return s.index(ctx, opts, gate{db: s.db, noWait: opts.NoWait, waiting: opts.Waiting, grace: lockGrace})
}

// index is Index with the gate its writes go through.
func (s *Store) index(ctx context.Context, opts IndexOptions, g gate) (int64, error) {
	var pending []pendingSession
	err := s.db.View(ctx, func(tx *sqlx.Tx) error {
		return tx.SelectContext(ctx, &pending, qPending)
	})
	if err != nil {
		return 0, fmt.Errorf("index: %w", err)
	}
	p := IndexProgress{Total: pendingTotal(pending)}
	for len(pending) > 0 {
		if opts.Progress != nil {
			opts.Progress(p)
		}
		c, err := s.planChunk(ctx)
		if err != nil {
			return p.Done, fmt.Errorf("index: %w", err)
		}
		if c.entries == 0 {
			break
		}
		err = g.update(ctx, func(tx *engine.Tx) error { return c.write(ctx, tx) })
		if errors.Is(err, errChunkStale) {
			continue // another indexer took these entries in first
		}
		if err != nil {
			return p.Done, fmt.Errorf("index: %w", err)
		}
		p.Done += c.entries
		p.Total = max(p.Total, p.Done)
		if !c.more {
			break
		}
	}
	if opts.Progress != nil && p.Total > 0 {
		opts.Progress(p)
	}
	return p.Done, nil
}

// chunk is one transaction's worth of pending entries: whole sessions or
// the first part of one, planned in a read transaction (their text read
// from search_text there, which for a huge entry is most of the work) and
// written in a write transaction that holds the lock for the index's
// writes alone. Entries never change, so the text read stays right; the
// write checks that the sessions' marks are still where the plan found
// them, so concurrent writers and indexers never index an entry twice.
type chunk struct {
	spans   []span
	bodies  string // JSON {"key": "hex of the text", ...}: exact bytes, NULs and all
	entries int64
	more    bool // entries beyond the chunk were pending
}

// errChunkStale rolls back a chunk whose sessions another indexer took in
// first.
var errChunkStale = errors.New("chunk indexed meanwhile")

// planChunk picks the next chunk of pending entries and reads their text.
func (s *Store) planChunk(ctx context.Context) (chunk, error) {
	var c chunk
	err := s.db.View(ctx, func(tx *sqlx.Tx) error {
		c = chunk{}
		var pending []pendingSession
		if err := tx.SelectContext(ctx, &pending, qPending); err != nil {
			return err
		}
		spans := chunkOf(pending, indexChunk)
		if len(spans) == 0 {
			return nil
		}
		spans, err := withinBytes(ctx, tx, spans, indexChunkBytes)
		if err != nil {
			return err
		}
		c.spans = spans
		for _, sp := range spans {
			c.entries += sp.to - sp.from + 1
		}
		c.more = c.entries < pendingTotal(pending)
		c.bodies, err = readBodies(ctx, tx, spans)
		return err
	})
	return c, err
}

// readBodies reads the text of the entries of spans from search_text, as
// a JSON object of entry key to the hex of its text (an object, not an
// array of pairs, so that json_each gives each key and text without
// parsing a pair again).
func readBodies(ctx context.Context, tx *sqlx.Tx, spans []span) (string, error) {
	ranges, _ := encodeSpans(spans)
	// CROSS JOIN keeps the ranges the outer loop, so each is one range
	// scan of entries by primary key.
	rows, err := tx.QueryContext(ctx, `SELECT t.pk, CAST(t.body AS BLOB) FROM json_each(?) r CROSS JOIN search_text t
WHERE t.pk BETWEEN json_extract(r.value, '$[0]') AND json_extract(r.value, '$[1]')`, ranges)
	if err != nil {
		return "", fmt.Errorf("read text: %w", err)
	}
	defer rows.Close()
	var b []byte
	b = append(b, '{')
	var body []byte
	for n := 0; rows.Next(); n++ {
		var pk int64
		if err := rows.Scan(&pk, &body); err != nil {
			return "", fmt.Errorf("read text: %w", err)
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, pk, 10)
		b = append(b, '"', ':', '"')
		b = hex.AppendEncode(b, body)
		b = append(b, '"')
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("read text: %w", err)
	}
	b = append(b, '}')
	return string(b), nil
}

// write indexes the chunk's text and advances its sessions' marks, if
// they are still where the plan found them (else errChunkStale).
//
// All of a chunk's entries go into the index in one statement: FTS5
// writes its pending terms out as a new segment at the end of every
// statement that changed it (its savepoint), and merges segments as they
// pile up, so a statement per session made as many segments as sessions,
// and indexing many small sessions cost three times what their text does.
func (c chunk) write(ctx context.Context, tx *engine.Tx) error {
	before, marks := c.marks()
	var n int
	err := tx.SQL().GetContext(ctx, &n, `SELECT count(*) FROM json_each(?) m JOIN sessions s ON s.pk = json_extract(m.value, '$[0]')
WHERE s.indexed_count = json_extract(m.value, '$[1]') AND s.deleting = 0`, before)
	if err != nil {
		return err
	}
	if n != len(c.spans) {
		return errChunkStale
	}
	// The text goes in as it was read, byte for byte (hex through JSON,
	// back to a blob, read as text as the view's is).
	_, err = tx.SQL().ExecContext(ctx, `INSERT INTO entries_fts (rowid, body)
SELECT CAST(key AS INTEGER), CAST(unhex(value) AS TEXT) FROM json_each(?)`, c.bodies)
	if err != nil {
		return err
	}
	_, err = tx.SQL().ExecContext(ctx, `UPDATE sessions SET indexed_count = json_extract(m.value, '$[1]')
FROM json_each(?) m WHERE sessions.pk = json_extract(m.value, '$[0]')`, marks)
	return err
}

// marks returns the chunk's sessions' marks before and after it, as JSON
// arrays of [session pk, indexed_count] pairs.
func (c chunk) marks() (before, after string) {
	var b strings.Builder
	b.WriteByte('[')
	for i, sp := range c.spans {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "[%d,%d]", sp.session, sp.from-1)
	}
	b.WriteByte(']')
	_, after = encodeSpans(c.spans)
	return b.String(), after
}

// span is a run of a session's entries, seq from .. to.
type span struct {
	session, from, to int64
}

// lo and hi are the span's first and last entry keys.
func (sp span) lo() int64 { return sp.session<<32 | sp.from }
func (sp span) hi() int64 { return sp.session<<32 | sp.to }

// chunkOf picks up to limit pending entries: whole sessions in pk order
// and the first part of the one that does not fit.
func chunkOf(pending []pendingSession, limit int64) []span {
	var out []span
	var done int64
	for _, ps := range pending {
		if done >= limit {
			break
		}
		upto := min(ps.Count, ps.Indexed+limit-done)
		out = append(out, span{ps.PK, ps.Indexed + 1, upto})
		done += upto - ps.Indexed
	}
	return out
}

// withinBytes keeps the first entries of spans, in order, whose JSON holds
// at most maxBytes, and always the first entry. It reads the entries'
// sizes, not their JSON (octet_length reads a row's header only).
func withinBytes(ctx context.Context, q sqlx.QueryerContext, spans []span, maxBytes int64) ([]span, error) {
	ranges, _ := encodeSpans(spans)
	rows, err := q.QueryxContext(ctx, `SELECT e.pk, octet_length(e.raw) FROM json_each(?) r CROSS JOIN entries e
WHERE e.pk BETWEEN json_extract(r.value, '$[0]') AND json_extract(r.value, '$[1]') ORDER BY e.pk`, ranges)
	if err != nil {
		return nil, fmt.Errorf("entry sizes: %w", err)
	}
	defer rows.Close()
	var total int64
	last := int64(-1) // the key of the last entry kept
	for rows.Next() {
		var pk, size int64
		if err := rows.Scan(&pk, &size); err != nil {
			return nil, fmt.Errorf("entry sizes: %w", err)
		}
		if last >= 0 && total+size > maxBytes {
			break
		}
		total += size
		last = pk
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("entry sizes: %w", err)
	}
	if last < 0 {
		return spans, nil // nothing read: the spans are as the caller saw them
	}
	var out []span
	for _, sp := range spans {
		if sp.lo() > last {
			break
		}
		if sp.hi() > last {
			sp.to = last & 0xffffffff
		}
		out = append(out, sp)
	}
	return out, nil
}

// encodeSpans writes spans as a JSON array of [lo, hi] key pairs and
// their sessions' new marks as one of [session pk, indexed_count] pairs.
func encodeSpans(spans []span) (ranges, marks string) {
	var r, m strings.Builder
	r.WriteByte('[')
	m.WriteByte('[')
	for i, sp := range spans {
		if i > 0 {
			r.WriteByte(',')
			m.WriteByte(',')
		}
		fmt.Fprintf(&r, "[%d,%d]", sp.lo(), sp.hi())
		fmt.Fprintf(&m, "[%d,%d]", sp.session, sp.to)
	}
	r.WriteByte(']')
	m.WriteByte(']')
	return r.String(), m.String()
}
