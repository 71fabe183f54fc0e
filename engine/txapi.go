package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
)

// This file is the engine's surface for packages built on it (the session
// store, package store): transactions that span several sessions and the
// store's own tables. Everything here reuses the engine's write path, so
// a session written through a [Tx] is exactly what [Storage] writes.

// Tx is a write transaction of a [DB], handed to the function given to
// [DB.Update]. It creates, fills and deletes sessions and reaches the
// database's other tables through [Tx.SQL], all committed together or not
// at all. A Tx is valid only during that function, and only for the
// goroutine running it.
type Tx struct {
	w q
}

// Update runs fn in one write transaction (BEGIN IMMEDIATE on the write
// connection) and commits when fn returns nil; an error or a panic rolls
// everything back. When SQLite reports the database busy, fn may be run
// again (bounded by [Options.BusyTimeout]), so it must not keep state from
// an earlier run. The error is fn's, translated to the sessiontree
// sentinels as every engine error is.
//
// Storage values made inside fn ([Tx.CreateSession], [Tx.OpenSession]) may
// be used after Update returns nil; after a rollback their session does
// not exist.
func (db *DB) Update(ctx context.Context, fn func(tx *Tx) error) error {
	return translate(db.update(ctx, func(w q) error { return fn(&Tx{w: w}) }))
}

// View runs fn in a read transaction on the pool of query-only
// connections: every query in fn sees one snapshot, and under WAL it never
// waits for a writer. Like [DB.Update], fn may be run again on a busy
// error.
func (db *DB) View(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	return translate(db.view(ctx, func(r q) error { return fn(r.tx) }))
}

// Context returns the context the transaction runs under.
func (tx *Tx) Context() context.Context { return tx.w.ctx }

// SQL returns the underlying transaction, for tables the engine does not
// manage. Writing the engine's own tables through it bypasses the checks
// of [Tx.AppendBatch]; the append-only triggers still hold.
func (tx *Tx) SQL() *sqlx.Tx { return tx.w.tx }

// CreateSession adds an empty session in the transaction, as
// [DB.CreateSession] does (same defaults, sessiontree.ErrConflict for an
// id already used).
func (tx *Tx) CreateSession(meta sessiontree.SessionMeta) (*Storage, error) {
	db := tx.w.db
	if meta.ID == "" {
		id, err := sessiontree.NewSessionID()
		if err != nil {
			return nil, fmt.Errorf("create session: %w", err)
		}
		meta.ID = id
	}
	if meta.Version == 0 {
		meta.Version = 3
	}
	if meta.CreatedAt == "" {
		meta.CreatedAt = sessiontree.FormatTime(db.opts.Now())
	}
	res, err := tx.w.exec(qInsertSession, meta.ID, meta.Version, meta.CreatedAt, meta.Cwd,
		nullString(meta.ParentSession), meta.CreatedAt)
	if err != nil {
		return nil, fmt.Errorf("create session %s: %w", meta.ID, translate(err))
	}
	pk, err := res.LastInsertId()
	if err != nil {
		return nil, fmt.Errorf("create session %s: %w", meta.ID, translate(err))
	}
	return &Storage{db: db, pk: pk, meta: meta}, nil
}

// OpenSession opens a session inside the transaction, seeing the
// transaction's own writes; a missing one is a [SessionNotFoundError].
func (tx *Tx) OpenSession(id string) (*Storage, error) {
	s := &Storage{db: tx.w.db}
	m := &s.meta
	err := tx.w.row(qSessionByID, args(id), &s.pk, &m.ID, &m.Version, &m.CreatedAt, &m.Cwd, &m.ParentSession)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &SessionNotFoundError{ID: id}
	}
	if err != nil {
		return nil, fmt.Errorf("open session %s: %w", id, translate(err))
	}
	return s, nil
}

// AppendBatch appends entries to session s inside the transaction, with
// the checks and effects of [Storage.AppendBatch]. Several calls in one
// transaction continue each other, so a long import can be fed in pieces
// and still commit once.
func (tx *Tx) AppendBatch(s *Storage, entries []sessiontree.Entry) error {
	if s.db != tx.w.db {
		return fmt.Errorf("append batch: session %s belongs to another database", s.meta.ID)
	}
	if err := s.check(tx.w.ctx); err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	for i, e := range entries {
		if err := e.Validate(); err != nil {
			return fmt.Errorf("append batch: entry %d: %w", i+1, err)
		}
	}
	h, err := tx.w.head(s.pk)
	if errors.Is(err, sessiontree.ErrNotFound) {
		err = &SessionNotFoundError{ID: s.meta.ID}
	}
	if err == nil {
		err = s.appendBatch(tx.w, h, entries)
	}
	if err != nil {
		return fmt.Errorf("append batch: %w", translate(err))
	}
	return nil
}

// DeleteSession deletes a session and everything it owns inside the
// transaction, as [DB.DeleteSession] does; a missing session is a
// [SessionNotFoundError].
func (tx *Tx) DeleteSession(id string) error {
	w := tx.w
	var pk int64
	var m sessiontree.SessionMeta
	err := w.row(qSessionByID, args(id), &pk, &m.ID, &m.Version, &m.CreatedAt, &m.Cwd, &m.ParentSession)
	if errors.Is(err, sql.ErrNoRows) {
		return &SessionNotFoundError{ID: id}
	}
	if err != nil {
		return fmt.Errorf("delete session %s: %w", id, translate(err))
	}
	lo, hi := pkRange(pk)
	for _, st := range []struct {
		query string
		args  []any
	}{
		{qMarkDeleting, args(pk)}, {qDeleteBranch, args(pk)}, {qDeleteLabels, args(pk)},
		{qDeleteEntries, args(lo, hi)}, {qDeleteSession, args(pk)},
	} {
		if _, err := w.exec(st.query, st.args...); err != nil {
			return fmt.Errorf("delete session %s: %w", id, translate(err))
		}
	}
	return nil
}

// Key returns the session's key in the database: the sessions table's pk,
// whose entries have the keys Key*2^32+seq (schema.sql). Packages that
// keep their own rows per entry or per session use it to join.
func (s *Storage) Key() int64 { return s.pk }
