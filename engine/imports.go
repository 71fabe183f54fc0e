package engine

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sessiontree/sessiontree"
)

// This file owns the imports table: the session store's records of the
// files it imported (sessiontree.ImportRecord), and the lookups of
// sessions and entries an import makes around them, the methods of
// sessiontree.DatabaseTx of that name. Each runs in a transaction of
// [Database.View] or [Database.Update], so that an import reads and
// writes its records in the same snapshot as its entries. The ones an
// import of a new file runs (its record read and saved, whether its
// session exists) run on the engine's cached statements (conn.go), as
// appends do: an import of many small files runs them once per file, and
// compiling them each time was a fifth of such an import's writer
// (store's BenchmarkImport/small).

const (
	qImportRecord = `SELECT path, session_id, size, mtime_ns, imported_bytes, prefix_sha256, position, session_entries, imported_at
FROM imports WHERE path = ?`
	qPutImportRecord = `INSERT INTO imports (path, session_id, size, mtime_ns, imported_bytes,
    prefix_sha256, position, session_entries, imported_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (path) DO UPDATE SET session_id = excluded.session_id, size = excluded.size,
    mtime_ns = excluded.mtime_ns, imported_bytes = excluded.imported_bytes,
    prefix_sha256 = excluded.prefix_sha256, position = excluded.position,
    session_entries = excluded.session_entries, imported_at = excluded.imported_at`
	qDeleteImportRecord   = `DELETE FROM imports WHERE path = ?`
	qImportPathOf         = `SELECT path FROM imports WHERE session_id = ? LIMIT 1`
	qSessionExists        = `SELECT count(*) FROM sessions WHERE id = ?`
	qLiveSessionCount     = `SELECT pk, entry_count FROM sessions WHERE id = ? AND deleting = 0`
	qSessionEntryIDs      = `SELECT id FROM entries WHERE pk BETWEEN ? AND ?`
	qSessionEntryRawByIDs = `SELECT e.raw FROM entries e JOIN sessions s ON s.pk = e.session WHERE s.id = ? AND e.id = ?`
)

// ImportRecord returns the import record of the file at path, and false
// when there is none.
func (tx *Tx) ImportRecord(path string) (sessiontree.ImportRecord, bool, error) {
	var r sessiontree.ImportRecord
	var mtime int64
	var at string
	err := tx.raw(func(w q) error {
		return w.row(qImportRecord, args(path), &r.Path, &r.SessionID, &r.Size, &mtime,
			&r.ImportedBytes, &r.PrefixSHA256, &r.Resume, &r.SessionEntries, &at)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("read import record: %w", err)
	}
	r.ModTime = time.Unix(0, mtime)
	if r.ImportedAt, err = sessiontree.ParseTime(at); err != nil {
		return r, false, fmt.Errorf("read import record of %s: imported_at: %w", path, err)
	}
	return r, true, nil
}

// PutImportRecord saves rec, replacing the record of the same path.
func (tx *Tx) PutImportRecord(rec sessiontree.ImportRecord) error {
	err := tx.raw(func(w q) error {
		_, err := w.exec(qPutImportRecord, rec.Path, rec.SessionID, rec.Size, rec.ModTime.UnixNano(),
			rec.ImportedBytes, rec.PrefixSHA256, rec.Resume, rec.SessionEntries, sessiontree.FormatTime(rec.ImportedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("record import: %w", err)
	}
	return nil
}

// DeleteImportRecord deletes the import record of path, if any.
func (tx *Tx) DeleteImportRecord(path string) error {
	if _, err := tx.tx.ExecContext(tx.ctx, qDeleteImportRecord, path); err != nil {
		return fmt.Errorf("record import: %w", err)
	}
	return nil
}

// ImportPathOf returns the path of a file imported into session id, and
// false when none was.
func (tx *Tx) ImportPathOf(id string) (string, bool, error) {
	var p string
	err := tx.tx.GetContext(tx.ctx, &p, qImportPathOf, id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return p, err == nil, err
}

// SessionExists tells whether the database holds session id, also one
// being deleted.
func (tx *Tx) SessionExists(id string) (bool, error) {
	var n int64
	if err := tx.raw(func(w q) error { return w.row(qSessionExists, args(id), &n) }); err != nil {
		return false, err
	}
	return n > 0, nil
}

// SessionEntryCount returns how many entries session id holds; a session
// missing (or being deleted) is a [SessionNotFoundError].
func (tx *Tx) SessionEntryCount(id string) (int64, error) {
	_, count, err := tx.liveSession(id)
	return count, err
}

// SessionEntryIDs returns the ids of session id's entries, in append
// order, and their count; a session missing (or being deleted) is a
// [SessionNotFoundError].
func (tx *Tx) SessionEntryIDs(id string) ([]string, error) {
	pk, count, err := tx.liveSession(id)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, sizeHint(count))
	lo, hi := pkRange(pk)
	if err := tx.tx.SelectContext(tx.ctx, &ids, qSessionEntryIDs, lo, hi); err != nil {
		return nil, err
	}
	return ids, nil
}

// liveSession returns the key and entry count of session id.
func (tx *Tx) liveSession(id string) (pk, count int64, err error) {
	err = tx.tx.QueryRowContext(tx.ctx, qLiveSessionCount, id).Scan(&pk, &count)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, &SessionNotFoundError{ID: id}
	}
	return pk, count, err
}

// EntryRaw returns the JSON of entry entryID of session sessionID; a
// missing entry is an error matching sessiontree.ErrNotFound.
func (tx *Tx) EntryRaw(sessionID, entryID string) (string, error) {
	var raw string
	err := tx.tx.GetContext(tx.ctx, &raw, qSessionEntryRawByIDs, sessionID, entryID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("entry %s of session %s: %w", entryID, sessionID, sessiontree.ErrNotFound)
	}
	return raw, err
}
