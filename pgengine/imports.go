package pgengine

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sessiontree/sessiontree"
)

// This file owns the imports table (migration 2): the session store's
// records of the files it imported (sessiontree.ImportRecord), and the
// lookups of sessions and entries an import makes around them, in the
// transaction of the import's entries.

// ImportRecord implements [sessiontree.DatabaseTx.ImportRecord].
func (tx *Tx) ImportRecord(path string) (sessiontree.ImportRecord, bool, error) {
	var r sessiontree.ImportRecord
	var mtime int64
	var at string
	err := tx.tx.QueryRowContext(tx.ctx, `SELECT path, session_id, size, mtime_ns, imported_bytes, prefix_sha256,
		position, session_entries, imported_at FROM imports WHERE path = $1`, path).
		Scan(&r.Path, &r.SessionID, &r.Size, &mtime, &r.ImportedBytes, &r.PrefixSHA256, &r.Resume, &r.SessionEntries, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("read import record of %s: %w", path, storageErr(err))
	}
	r.ModTime = time.Unix(0, mtime)
	if r.ImportedAt, err = sessiontree.ParseTime(at); err != nil {
		return r, false, fmt.Errorf("read import record of %s: imported_at: %w", path, err)
	}
	return r, true, nil
}

// PutImportRecord implements [sessiontree.DatabaseTx.PutImportRecord].
func (tx *Tx) PutImportRecord(rec sessiontree.ImportRecord) error {
	_, err := tx.tx.ExecContext(tx.ctx, `INSERT INTO imports (path, session_id, size, mtime_ns, imported_bytes,
		prefix_sha256, position, session_entries, imported_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (path) DO UPDATE SET session_id = EXCLUDED.session_id, size = EXCLUDED.size,
			mtime_ns = EXCLUDED.mtime_ns, imported_bytes = EXCLUDED.imported_bytes,
			prefix_sha256 = EXCLUDED.prefix_sha256, position = EXCLUDED.position,
			session_entries = EXCLUDED.session_entries, imported_at = EXCLUDED.imported_at`,
		rec.Path, rec.SessionID, rec.Size, rec.ModTime.UnixNano(), rec.ImportedBytes, rec.PrefixSHA256, rec.Resume,
		rec.SessionEntries, sessiontree.FormatTime(rec.ImportedAt))
	if err != nil {
		return fmt.Errorf("record import of %s: %w", rec.Path, storageErr(err))
	}
	return nil
}

// DeleteImportRecord implements [sessiontree.DatabaseTx.DeleteImportRecord].
func (tx *Tx) DeleteImportRecord(path string) error {
	if _, err := tx.tx.ExecContext(tx.ctx, `DELETE FROM imports WHERE path = $1`, path); err != nil {
		return fmt.Errorf("forget import of %s: %w", path, storageErr(err))
	}
	return nil
}

// ImportPathOf implements [sessiontree.DatabaseTx.ImportPathOf].
func (tx *Tx) ImportPathOf(id string) (string, bool, error) {
	var p string
	err := tx.tx.GetContext(tx.ctx, &p, `SELECT path FROM imports WHERE session_id = $1 LIMIT 1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("import of session %s: %w", id, storageErr(err))
	}
	return p, true, nil
}

// SessionExists implements [sessiontree.DatabaseTx.SessionExists]: a
// session being deleted exists too.
func (tx *Tx) SessionExists(id string) (bool, error) {
	var ok bool
	if err := tx.tx.GetContext(tx.ctx, &ok, `SELECT EXISTS (SELECT 1 FROM sessions WHERE id = $1)`, id); err != nil {
		return false, fmt.Errorf("session %s exists: %w", id, storageErr(err))
	}
	return ok, nil
}

// SessionEntryCount implements [sessiontree.DatabaseTx.SessionEntryCount];
// in a write transaction it locks the row (rowRead).
func (tx *Tx) SessionEntryCount(id string) (int64, error) {
	var n int64
	err := tx.rowRead(&n, `entry_count`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, &SessionNotFoundError{ID: id}
	}
	if err != nil {
		return 0, fmt.Errorf("entry count of %s: %w", id, storageErr(err))
	}
	return n, nil
}

// SessionEntryIDs implements [sessiontree.DatabaseTx.SessionEntryIDs]:
// one range of the entries' key.
func (tx *Tx) SessionEntryIDs(id string) ([]string, error) {
	pk, err := tx.sessionKey(id)
	if err != nil {
		return nil, err
	}
	var ids []string
	if err := tx.tx.SelectContext(tx.ctx, &ids, `SELECT id FROM entries WHERE session = $1 ORDER BY seq`, pk); err != nil {
		return nil, fmt.Errorf("entry ids of %s: %w", id, storageErr(err))
	}
	return ids, nil
}

// EntryRaw implements [sessiontree.DatabaseTx.EntryRaw].
func (tx *Tx) EntryRaw(sessionID, entryID string) (string, error) {
	var raw string
	err := tx.tx.GetContext(tx.ctx, &raw, `SELECT e.raw FROM entries e JOIN sessions s ON s.pk = e.session
		WHERE s.id = $1 AND e.id = $2`, sessionID, entryID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("entry %s of session %s: %w", entryID, sessionID, sessiontree.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("entry %s of session %s: %w", entryID, sessionID, storageErr(err))
	}
	return raw, nil
}
