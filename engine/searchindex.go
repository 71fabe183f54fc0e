package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/sessiontree/sessiontree"
)

// The search index's catch-up: appends write entries only; the index
// (entries_fts) holds each session's entries up to a mark kept in its
// row (indexed_count), and these move it (schema.sql, migrations 7, 8
// and 10). The policy (chunk sizes, waiting, progress) is the store's.

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

// IndexBacklog implements [sessiontree.DatabaseTx.IndexBacklog].
func (tx *Tx) IndexBacklog() (int64, error) {
	var pending []pendingSession
	if err := tx.tx.SelectContext(tx.ctx, &pending, qPending); err != nil {
		return 0, err
	}
	return pendingTotal(pending), nil
}

// NextIndexChunk implements [sessiontree.DatabaseTx.NextIndexChunk]. The
// chunk's Text is a JSON object of entry key to the hex of its text: exact
// bytes, NULs and all (an object, not an array of pairs, so that
// json_each gives each key and text without parsing a pair again).
func (tx *Tx) NextIndexChunk(maxEntries, maxBytes int64, after []sessiontree.IndexSpan) (sessiontree.IndexChunk, error) {
	var c sessiontree.IndexChunk
	var pending []pendingSession
	if err := tx.tx.SelectContext(tx.ctx, &pending, qPending); err != nil {
		return c, err
	}
	pending = pendingPast(pending, after)
	spans := chunkOf(pending, maxEntries)
	if len(spans) == 0 {
		return c, nil
	}
	spans, size, err := tx.withinBytes(spans, maxBytes)
	if err != nil {
		return c, err
	}
	c.Spans = spans
	for _, sp := range spans {
		c.Entries += sp.To - sp.From + 1
	}
	c.More = c.Entries < pendingTotal(pending)
	c.Text, err = tx.readBodies(spans, size, c.Entries)
	return c, err
}

// pendingPast returns what of pending is still pending once the spans
// of after are indexed too.
func pendingPast(pending []pendingSession, after []sessiontree.IndexSpan) []pendingSession {
	if len(after) == 0 {
		return pending
	}
	out := pending[:0]
	for _, ps := range pending {
		ps.Indexed = sessiontree.IndexedPast(ps.PK, ps.Indexed, after)
		if ps.Indexed < ps.Count {
			out = append(out, ps)
		}
	}
	return out
}

// readBodies reads the text of the entries of spans from search_text,
// of n entries whose JSON holds size bytes, as the engine's encoding of a
// chunk's text: each entry's key and its text's length (uvarints) and
// the text. It is made in one buffer of the size that text mostly takes
// at most (an entry's text is no longer than its JSON nor than
// sessiontree.SearchTextLimit, plus the view's two newlines), not grown
// as it is made.
func (tx *Tx) readBodies(spans []sessiontree.IndexSpan, size, n int64) ([]byte, error) {
	ranges, _ := encodeSpans(spans)
	// CROSS JOIN keeps the ranges the outer loop, so each is one range
	// scan of entries by primary key.
	rows, err := tx.tx.QueryContext(tx.ctx, `SELECT t.pk, CAST(t.body AS BLOB) FROM json_each(?) r CROSS JOIN search_text t
WHERE t.pk BETWEEN json_extract(r.value, '$[0]') AND json_extract(r.value, '$[1]')`, ranges)
	if err != nil {
		return nil, fmt.Errorf("read text: %w", err)
	}
	defer rows.Close()
	b := make([]byte, 0, min(size+2*n, n*(sessiontree.SearchTextLimit+2))+2*binary.MaxVarintLen64*n)
	var body []byte
	for rows.Next() {
		var pk int64
		if err := rows.Scan(&pk, &body); err != nil {
			return nil, fmt.Errorf("read text: %w", err)
		}
		b = binary.AppendUvarint(b, uint64(pk))
		b = binary.AppendUvarint(b, uint64(len(body)))
		b = append(b, body...)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read text: %w", err)
	}
	return b, nil
}

// maxChunkRows bounds the rows of one INSERT of WriteIndexChunk.
const maxChunkRows = 8192

// chunkRows decodes a chunk's text (readBodies) into the arguments of
// its INSERT: each entry's key and text, the text a string over the
// chunk's own bytes (the driver copies what it binds).
func chunkRows(chunk []byte) ([]any, error) {
	var args []any
	for len(chunk) > 0 {
		pk, n := binary.Uvarint(chunk)
		if n <= 0 {
			return nil, errors.New("index: bad chunk text")
		}
		size, m := binary.Uvarint(chunk[n:])
		if m <= 0 || size > uint64(len(chunk)-n-m) {
			return nil, errors.New("index: bad chunk text")
		}
		body := chunk[n+m : n+m+int(size)]
		args = append(args, int64(pk), text(body))
		chunk = chunk[n+m+int(size):]
	}
	return args, nil
}

// WriteIndexChunk implements [sessiontree.DatabaseTx.WriteIndexChunk].
//
// All of a chunk's entries go into the index in one statement: FTS5
// writes its pending terms out as a new segment at the end of every
// statement that changed it (its savepoint), and merges segments as they
// pile up, so a statement per session made as many segments as sessions,
// and indexing many small sessions cost three times what their text does.
func (tx *Tx) WriteIndexChunk(c sessiontree.IndexChunk) error {
	before, marks := chunkMarks(c.Spans)
	var n int
	err := tx.tx.GetContext(tx.ctx, &n, `SELECT count(*) FROM json_each(?) m JOIN sessions s ON s.pk = json_extract(m.value, '$[0]')
WHERE s.indexed_count = json_extract(m.value, '$[1]') AND s.deleting = 0`, before)
	if err != nil {
		return err
	}
	if n != len(c.Spans) {
		return fmt.Errorf("index: chunk indexed meanwhile: %w", sessiontree.ErrConflict)
	}
	// The text goes in as it was read, byte for byte, bound as text, as
	// the view's is read. One statement of as many rows as the chunk: the
	// statement is compiled for the chunk (its row count varies, so it is
	// not kept), which costs less than the JSON and hex the texts went
	// through before on this connection, the one writer (store's
	// BenchmarkImport/generated-index: 9.9 -> 10.6 MB/s of CPU time,
	// medians of 3 by turns).
	args, err := chunkRows(c.Text)
	if err != nil {
		return err
	}
	for len(args) > 0 {
		// SQLite takes 32766 parameters at most; a chunk of the store's
		// size never comes near.
		n := min(len(args), 2*maxChunkRows)
		_, err = tx.tx.ExecContext(tx.ctx, multiRow(`INSERT INTO entries_fts (rowid, body) VALUES `, 2, n/2), args[:n]...)
		if err != nil {
			return err
		}
		args = args[n:]
	}
	_, err = tx.tx.ExecContext(tx.ctx, `UPDATE sessions SET indexed_count = json_extract(m.value, '$[1]')
FROM json_each(?) m WHERE sessions.pk = json_extract(m.value, '$[0]')`, marks)
	return err
}

// chunkMarks returns the sessions' marks before and after spans, as JSON
// arrays of [session pk, indexed_count] pairs.
func chunkMarks(spans []sessiontree.IndexSpan) (before, after string) {
	var b strings.Builder
	b.WriteByte('[')
	for i, sp := range spans {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "[%d,%d]", sp.Session, sp.From-1)
	}
	b.WriteByte(']')
	_, after = encodeSpans(spans)
	return b.String(), after
}

// spanKeys returns a span's first and last entry keys.
func spanKeys(sp sessiontree.IndexSpan) (lo, hi int64) {
	return entryPK(sp.Session, sp.From), entryPK(sp.Session, sp.To)
}

// chunkOf picks up to limit pending entries: whole sessions in pk order
// and the first part of the one that does not fit.
func chunkOf(pending []pendingSession, limit int64) []sessiontree.IndexSpan {
	var out []sessiontree.IndexSpan
	var done int64
	for _, ps := range pending {
		if done >= limit {
			break
		}
		upto := min(ps.Count, ps.Indexed+limit-done)
		out = append(out, sessiontree.IndexSpan{Session: ps.PK, From: ps.Indexed + 1, To: upto})
		done += upto - ps.Indexed
	}
	return out
}

// withinBytes keeps the first entries of spans, in order, whose JSON holds
// at most maxBytes, and always the first entry, and returns how many
// bytes of JSON they hold. It reads the entries' sizes, not their JSON
// (octet_length reads a row's header only).
func (tx *Tx) withinBytes(spans []sessiontree.IndexSpan, maxBytes int64) ([]sessiontree.IndexSpan, int64, error) {
	ranges, _ := encodeSpans(spans)
	rows, err := tx.tx.QueryxContext(tx.ctx, `SELECT e.pk, octet_length(e.raw) FROM json_each(?) r CROSS JOIN entries e
WHERE e.pk BETWEEN json_extract(r.value, '$[0]') AND json_extract(r.value, '$[1]') ORDER BY e.pk`, ranges)
	if err != nil {
		return nil, 0, fmt.Errorf("entry sizes: %w", err)
	}
	defer rows.Close()
	var total int64
	last := int64(-1) // the key of the last entry kept
	for rows.Next() {
		var pk, size int64
		if err := rows.Scan(&pk, &size); err != nil {
			return nil, 0, fmt.Errorf("entry sizes: %w", err)
		}
		if last >= 0 && total+size > maxBytes {
			break
		}
		total += size
		last = pk
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("entry sizes: %w", err)
	}
	if last < 0 {
		return spans, 0, nil // nothing read: the spans are as the caller saw them
	}
	var out []sessiontree.IndexSpan
	for _, sp := range spans {
		lo, hi := spanKeys(sp)
		if lo > last {
			break
		}
		if hi > last {
			sp.To = last & 0xffffffff
		}
		out = append(out, sp)
	}
	return out, total, nil
}

// encodeSpans writes spans as a JSON array of [lo, hi] key pairs and
// their sessions' new marks as one of [session pk, indexed_count] pairs.
func encodeSpans(spans []sessiontree.IndexSpan) (ranges, marks string) {
	var r, m strings.Builder
	r.WriteByte('[')
	m.WriteByte('[')
	for i, sp := range spans {
		if i > 0 {
			r.WriteByte(',')
			m.WriteByte(',')
		}
		lo, hi := spanKeys(sp)
		fmt.Fprintf(&r, "[%d,%d]", lo, hi)
		fmt.Fprintf(&m, "[%d,%d]", sp.Session, sp.To)
	}
	r.WriteByte(']')
	m.WriteByte(']')
	return r.String(), m.String()
}
