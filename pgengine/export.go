package pgengine

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/sessiontree/sessiontree"
)

// What an export reads: the session's row, then its entries as stored.

// sessionKey returns the key of live session id in the transaction.
func (tx *Tx) sessionKey(id string) (int64, error) {
	var pk int64
	err := tx.tx.GetContext(tx.ctx, &pk, `SELECT pk FROM sessions WHERE id = $1 AND NOT deleting`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, &SessionNotFoundError{ID: id}
	}
	if err != nil {
		return 0, fmt.Errorf("session %s: %w", id, storageErr(err))
	}
	return pk, nil
}

// ExportHead implements [sessiontree.DatabaseTx.ExportHead].
func (tx *Tx) ExportHead(id string) (sessiontree.ExportHead, error) {
	var h sessiontree.ExportHead
	var sum sql.NullInt64
	var unsummed bool
	err := tx.tx.QueryRowContext(tx.ctx, `SELECT id, version, created_at, cwd, coalesce(parent_session, ''),
		coalesce(leaf_id, ''), entry_count, header_checksum, `+headerUnsummed+` FROM sessions WHERE id = $1 AND NOT deleting`, id).
		Scan(&h.Meta.ID, &h.Meta.Version, &h.Meta.CreatedAt, &h.Meta.Cwd, &h.Meta.ParentSession, &h.Leaf, &h.Entries, &sum, &unsummed)
	if errors.Is(err, sql.ErrNoRows) {
		return h, &SessionNotFoundError{ID: id}
	}
	if err != nil {
		return h, fmt.Errorf("export %s: %w", id, storageErr(err))
	}
	// The header is written from these columns (header.go).
	return h, verifyHeader(h.Meta, sum, unsummed)
}

// referencedLeavesQuery reads the leaf entries of session $1 (the index
// by type) that a child or a target names. A child is the next entry
// (the primary key) when that entry's parent is the leaf entry, else in
// the index by parent, which holds only the children not appended right
// after their parent (migration 11).
const referencedLeavesQuery = `SELECT l.id FROM entries l
	WHERE l.session = $1 AND l.type = 'leaf' AND (
		EXISTS (SELECT 1 FROM entries c WHERE c.session = l.session AND c.seq = l.seq + 1 AND c.parent_seq = l.seq)
		OR EXISTS (SELECT 1 FROM entries c WHERE c.session = l.session AND c.parent_seq = l.seq AND c.parent_seq <> c.seq - 1)
		OR EXISTS (SELECT 1 FROM entries c WHERE c.session = l.session AND c.target_id = l.id))`

// ReferencedLeaves implements [sessiontree.DatabaseTx.ReferencedLeaves]:
// the leaf entries of the session that another entry names
// (referencedLeavesQuery).
func (tx *Tx) ReferencedLeaves(id string) (map[string]bool, error) {
	pk, err := tx.sessionKey(id)
	if err != nil {
		return nil, err
	}
	var ids []string
	err = tx.tx.SelectContext(tx.ctx, &ids, referencedLeavesQuery, pk)
	if err != nil {
		return nil, fmt.Errorf("referenced leaves of %s: %w", id, storageErr(err))
	}
	keep := make(map[string]bool, len(ids))
	for _, l := range ids {
		keep[l] = true
	}
	return keep, nil
}

// RawEntries implements [sessiontree.DatabaseTx.RawEntries]: one scan of
// the session's entries by key, streaming, each checked against its
// checksum (migration 2; sessiontree.VerifyChecksum, the one owner of that
// rule).
func (tx *Tx) RawEntries(id string, fn func(e sessiontree.RawEntry) error) error {
	pk, err := tx.sessionKey(id)
	if err != nil {
		return err
	}
	rows, err := tx.tx.QueryContext(tx.ctx, `SELECT type, id, raw, checksum FROM entries WHERE session = $1 ORDER BY seq`, pk)
	if err != nil {
		return fmt.Errorf("entries of %s: %w", id, storageErr(err))
	}
	defer rows.Close()
	var (
		typ string
		raw sql.RawBytes
		sum sql.NullInt64
		e   sessiontree.RawEntry
	)
	for rows.Next() {
		if err := rows.Scan(&typ, &e.ID, &raw, &sum); err != nil {
			return fmt.Errorf("entries of %s: %w", id, storageErr(err))
		}
		if err := sessiontree.VerifyChecksum(e.ID, raw, sum); err != nil {
			return err
		}
		e.Type, e.Raw = sessiontree.EntryType(typ), raw
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("entries of %s: %w", id, storageErr(err))
	}
	return nil
}

// UnknownTypes implements [sessiontree.DatabaseTx.UnknownTypes]: one
// grouped scan of the entries that are not messages (the index by type),
// of one session or all.
func (tx *Tx) UnknownTypes(id string, known []sessiontree.EntryType) ([]sessiontree.UnknownTypeRow, error) {
	names := make([]string, len(known))
	for i, t := range known {
		names[i] = string(t)
	}
	where, args := "NOT s.deleting", []any{names}
	if id != "" {
		pk, err := tx.sessionKey(id)
		if err != nil {
			return nil, err
		}
		where, args = "e.session = $2", append(args, pk)
	}
	var rows []struct {
		SessionID string `db:"session_id"`
		File      string `db:"file"`
		Type      string `db:"type"`
		Count     int    `db:"n"`
		First     int64  `db:"first"`
	}
	err := tx.tx.SelectContext(tx.ctx, &rows, `SELECT s.id AS session_id,
		coalesce((SELECT min(path COLLATE "C") FROM imports i WHERE i.session_id = s.id), '') AS file,
		e.type, count(*) AS n, min(e.seq) AS first
		FROM entries e JOIN sessions s ON s.pk = e.session
		WHERE e.type <> 'message' AND e.type <> ALL ($1::text[]) AND `+where+`
		GROUP BY s.pk, s.id, e.type ORDER BY s.pk, min(e.seq)`, args...)
	if err != nil {
		return nil, fmt.Errorf("unknown entry types: %w", storageErr(err))
	}
	out := make([]sessiontree.UnknownTypeRow, len(rows))
	for i, r := range rows {
		out[i] = sessiontree.UnknownTypeRow{SessionID: r.SessionID, File: r.File, Type: sessiontree.EntryType(r.Type), Count: r.Count}
	}
	return out, nil
}
