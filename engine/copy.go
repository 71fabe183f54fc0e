package engine

import (
	"fmt"

	"github.com/sessiontree/sessiontree"
)

// The statements of [Tx.CopyLog]. ?1 is the source session's key, ?2 the
// destination's, ?3 the key offset between them (a session's entry keys
// are its key shifted by 32 bits plus seq, see pkRange), ?4 and ?5 the
// source's key range. Every key an entries row holds points into its own
// session, so each moves by the offset; nothing else changes, the raw JSON
// and its checksum included.
const (
	qCopyEntries = `INSERT INTO entries (` + entryColumns + `)
SELECT pk + ?3, ?2, seq, id, parent_id, parent_pk + ?3, type, timestamp, depth, start_depth,
       thinking_pk + ?3, model_pk + ?3, tools_pk + ?3, target_id, custom_type, role, raw, canonical, checksum
FROM entries WHERE pk BETWEEN ?4 AND ?5 ORDER BY pk`

	qCopyBranch = `INSERT INTO branch (session, depth, entry)
SELECT ?2, depth, entry + ?3 FROM branch WHERE session = ?1 ORDER BY depth`

	qCopyLabels = `INSERT INTO labels (session, target_id, label, entry)
SELECT ?2, target_id, label, entry + ?3 FROM labels WHERE session = ?1`

	qCopyUsageDays = `INSERT INTO usage_days (day, session, bucket, input, output, cache_read, cache_write, cost)
SELECT day, ?2, bucket, input, output, cache_read, cache_write, cost FROM usage_days WHERE session = ?1`

	// qCopyCounters copies what an append keeps in the session row, the
	// tree's counts (shape.go) among them: the copy is the same tree.
	// label_count is not copied: labels_count_insert counted the labels
	// as they went in. updated_at is the last entry's timestamp, which
	// [Tx.CopyLog] then makes the destination's creation time when that
	// is later (sessiontree.LastChange), as an append sets it.
	qCopyCounters = `UPDATE sessions SET
    leaf_pk = s.leaf_pk + ?3, leaf_id = s.leaf_id, leaf_depth = s.leaf_depth, boundary_depth = s.boundary_depth,
    entry_count = s.entry_count, message_count = s.message_count,
    user_messages = s.user_messages, assistant_messages = s.assistant_messages,
    tool_results = s.tool_results, tool_calls = s.tool_calls,
    input_tokens = s.input_tokens, output_tokens = s.output_tokens,
    cache_read_tokens = s.cache_read_tokens, cache_write_tokens = s.cache_write_tokens,
    cost = s.cost, usage_buckets = s.usage_buckets, name = s.name, first_user_text = s.first_user_text,
    branch_count = s.branch_count, root_count = s.root_count, compaction_count = s.compaction_count,
    updated_at = coalesce((SELECT timestamp FROM entries WHERE pk BETWEEN ?4 AND ?5 ORDER BY pk DESC LIMIT 1),
                          sessions.updated_at)
FROM (SELECT * FROM sessions WHERE pk = ?1) AS s
WHERE sessions.pk = ?2`
)

// copyRows is how many entries one statement of [Tx.CopyLog] copies.
const copyRows = 4096

// CopyLog copies the whole log of session src into dst, an empty session
// of the same database, inside the transaction: every entry byte for byte
// (so the same ids, labels, name and leaf) with everything an append
// derives from it (the materialized branch, labels, usage by day, the
// session row's counters), in INSERT … SELECT statements (copyRows entries each) that
// neither decode nor re-encode an entry. The copy is what appending src's
// log to dst would store (engine/copy_test.go holds it to that, and
// [DB.Check] verifies it); the search index picks dst up as pending.
// A dst that is not empty is refused.
func (tx *Tx) CopyLog(src, dst sessiontree.DatabaseSession) error {
	s, ok := src.(*Storage)
	d, ok2 := dst.(*Storage)
	if !ok || !ok2 || s.db != tx.db || d.db != tx.db {
		return fmt.Errorf("copy log %s to %s: sessions of another database", src.ID(), dst.ID())
	}
	err := tx.raw(func(w q) error {
		var n int64
		if err := w.row(qEntryCount, args(d.pk), &n); err != nil {
			return err
		}
		if n != 0 {
			return fmt.Errorf("destination has %d entries: %w", n, sessiontree.ErrConflict)
		}
		delete(w.c.heads, d.pk) // the copy moves dst's head: the next append reads it
		var count int64
		if err := w.row(qEntryCount, args(s.pk), &count); err != nil {
			return err
		}
		lo, hi := pkRange(s.pk)
		off := (d.pk - s.pk) << 32
		// SQLite reads an INSERT … SELECT from the table it inserts into
		// into a temporary table first: copying copyRows entries per
		// statement bounds that copy's memory.
		for from := int64(1); from <= count; from += copyRows {
			if _, err := w.exec(qCopyEntries, nil, d.pk, off, lo-1+from, min(lo-1+from+copyRows-1, hi)); err != nil {
				return err
			}
		}
		for _, c := range []struct {
			stmt string
			args []any
		}{
			{qCopyBranch, args(s.pk, d.pk, off)},
			{qCopyLabels, args(s.pk, d.pk, off)},
			{qCopyUsageDays, args(s.pk, d.pk)},
			{qCopyCounters, args(s.pk, d.pk, off, lo, hi)},
		} {
			if _, err := w.exec(c.stmt, c.args...); err != nil {
				return err
			}
		}
		return w.lastChange(d)
	})
	if err != nil {
		return fmt.Errorf("copy log %s to %s: %w", s.meta.ID, d.meta.ID, translate(err))
	}
	return nil
}

// lastChange makes session s's updated_at its creation time when that is
// later than the last entry's timestamp the row holds
// (sessiontree.LastChange), as an append of the entries would.
func (w q) lastChange(s *Storage) error {
	var last string
	if err := w.row(`SELECT updated_at FROM sessions WHERE pk = ?`, args(s.pk), &last); err != nil {
		return err
	}
	if want := sessiontree.LastChange(s.meta.CreatedAt, last); want != last {
		_, err := w.exec(`UPDATE sessions SET updated_at = ? WHERE pk = ?`, want, s.pk)
		return err
	}
	return nil
}
