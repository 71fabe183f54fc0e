package engine

import (
	"database/sql"
	"errors"

	"github.com/sessiontree/sessiontree"
)

// What an export reads: the session's row, then its entries as stored.

// ExportHead implements [sessiontree.DatabaseTx.ExportHead].
func (tx *Tx) ExportHead(id string) (sessiontree.ExportHead, error) {
	var h sessiontree.ExportHead
	var sum sql.NullInt64
	err := tx.tx.QueryRowContext(tx.ctx, `SELECT id, version, created_at, cwd, coalesce(parent_session, ''),
       coalesce(leaf_id, ''), entry_count, header_checksum FROM sessions WHERE id = ? AND deleting = 0`, id).
		Scan(&h.Meta.ID, &h.Meta.Version, &h.Meta.CreatedAt, &h.Meta.Cwd, &h.Meta.ParentSession, &h.Leaf, &h.Entries, &sum)
	if errors.Is(err, sql.ErrNoRows) {
		return h, &SessionNotFoundError{ID: id}
	}
	if err != nil {
		return h, err
	}
	// The header is written from these columns: one changed behind the
	// engine's back would give the file another first line.
	return h, sessiontree.VerifyHeaderChecksum(h.Meta, sum)
}

// ReferencedLeaves implements [sessiontree.DatabaseTx.ReferencedLeaves].
func (tx *Tx) ReferencedLeaves(id string) (map[string]bool, error) {
	pk, err := tx.sessionKey(id)
	if err != nil {
		return nil, err
	}
	lo, hi := pkRange(pk)
	rows, err := tx.tx.QueryContext(tx.ctx, `SELECT l.id FROM entries l
WHERE l.pk BETWEEN ?1 AND ?2 AND l.type = 'leaf' AND EXISTS (
    SELECT 1 FROM entries c WHERE c.session = l.session AND c.parent_id = l.id
    UNION ALL
    SELECT 1 FROM entries c WHERE c.pk BETWEEN ?1 AND ?2 AND c.target_id = l.id)`, lo, hi)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	keep := map[string]bool{}
	for rows.Next() {
		var lid string
		if err := rows.Scan(&lid); err != nil {
			return nil, err
		}
		keep[lid] = true
	}
	return keep, rows.Err()
}

// RawEntries implements [sessiontree.DatabaseTx.RawEntries]: one scan of
// the session's entries by key, each checked with [sessiontree.VerifyChecksum].
func (tx *Tx) RawEntries(id string, fn func(e sessiontree.RawEntry) error) error {
	pk, err := tx.sessionKey(id)
	if err != nil {
		return err
	}
	lo, hi := pkRange(pk)
	rows, err := tx.tx.QueryContext(tx.ctx, `SELECT type, id, CAST(raw AS BLOB), checksum FROM entries
WHERE pk BETWEEN ? AND ? ORDER BY pk`, lo, hi)
	if err != nil {
		return err
	}
	defer rows.Close()
	var typ string
	var raw sql.RawBytes
	var sum sql.NullInt64
	var e sessiontree.RawEntry
	for n := 0; rows.Next(); n++ {
		if n%4096 == 4095 {
			if err := tx.ctx.Err(); err != nil {
				return err
			}
		}
		if err := rows.Scan(&typ, &e.ID, &raw, &sum); err != nil {
			return err
		}
		if err := sessiontree.VerifyChecksum(e.ID, raw, sum); err != nil {
			return err
		}
		e.Type, e.Raw = sessiontree.EntryType(typ), raw
		if err := fn(e); err != nil {
			return err
		}
	}
	return rows.Err()
}
