package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/sessiontree/sessiontree"
)

var (
	_ sessiontree.Storage       = (*Storage)(nil)
	_ sessiontree.StateReader   = (*Storage)(nil)
	_ sessiontree.BatchAppender = (*Storage)(nil)
)

// Storage is one session of a [DB], implementing sessiontree.Storage. It
// holds only the session's key and metadata, so its memory does not grow
// with the session; every call reads what it needs from the database.
//
// A Storage is safe for concurrent use, also with other Storage values of
// the same session in this or other processes: writes serialize on the
// database's write lock and read the leaf inside their transaction.
type Storage struct {
	db     *DB
	pk     int64
	meta   sessiontree.SessionMeta
	closed atomic.Bool
	// claim is the writer claim this Storage writes under (claim.go),
	// nil for one opened without a claim.
	claim *sessiontree.ClaimToken
	// guess is the leaf its next append expects (prebuild.go).
	guess leafGuess
}

// SessionNotFoundError reports a session id that the database does not
// hold. It matches sessiontree.ErrNotFound. It is the root's, which every
// engine returns.
type SessionNotFoundError = sessiontree.SessionNotFoundError

// CreateSession adds an empty session. An empty meta.ID gets a fresh UUID
// v7, an empty CreatedAt the current time and a zero Version 3. An id
// already in the database is refused with sessiontree.ErrConflict.
func (db *DB) CreateSession(ctx context.Context, meta sessiontree.SessionMeta) (*Storage, error) {
	meta, err := db.sessionDefaults(meta)
	if err != nil {
		return nil, err
	}
	var st *Storage
	err = db.update(ctx, false, func(w q) (err error) {
		st, err = createSession(w, meta)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create session %s: %w", meta.ID, translate(err))
	}
	return st, nil
}

func createSession(w q, meta sessiontree.SessionMeta) (*Storage, error) {
	res, err := w.exec(qInsertSession, meta.ID, meta.Version, meta.CreatedAt, meta.Cwd,
		nullString(meta.ParentSession), meta.CreatedAt, sessiontree.HeaderChecksum(meta))
	if isUniqueOn(err, "sessions.id") {
		return nil, &sessiontree.SessionExistsError{ID: meta.ID}
	}
	if err != nil {
		return nil, err
	}
	pk, err := res.LastInsertId()
	if err != nil {
		return nil, err
	}
	return &Storage{db: w.db, pk: pk, meta: meta}, nil
}

func (db *DB) sessionDefaults(meta sessiontree.SessionMeta) (sessiontree.SessionMeta, error) {
	if meta.ID == "" {
		id, err := sessiontree.NewSessionID()
		if err != nil {
			return meta, fmt.Errorf("create session: %w", err)
		}
		meta.ID = id
	}
	if meta.Version == 0 {
		meta.Version = 3
	}
	if meta.CreatedAt == "" {
		meta.CreatedAt = sessiontree.FormatTime(db.opts.Now())
	}
	if err := sessiontree.CheckSessionMeta(meta); err != nil {
		return meta, fmt.Errorf("create session %q: %w", meta.ID, err)
	}
	return meta, nil
}

// OpenSession opens the session with the given id; a missing one is a
// [SessionNotFoundError] (sessiontree.ErrNotFound). It reads one row.
func (db *DB) OpenSession(ctx context.Context, id string) (*Storage, error) {
	var s *Storage
	err := db.read(ctx, func(r q) (err error) {
		s, err = openSession(r, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open session %s: %w", id, translate(err))
	}
	return s, nil
}

func openSession(r q, id string) (*Storage, error) {
	s := &Storage{db: r.db}
	m := &s.meta
	err := r.row(qSessionByID, args(id), &s.pk, &m.ID, &m.Version, &m.CreatedAt, &m.Cwd, &m.ParentSession)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &SessionNotFoundError{ID: id}
	}
	return s, err
}

// DeleteSession deletes a session and all its entries. This is the one
// way entries leave the database: the session is marked deleting first,
// which is what the append-only trigger on entries allows. A missing
// session is a [SessionNotFoundError]; one another holder has a live
// claim on is a [*sessiontree.ClaimedError] (sessiontree.CheckDelete),
// checked in the delete's write transaction, which every write to the
// session takes too, unless opts.Force.
func (db *DB) DeleteSession(ctx context.Context, id string, opts sessiontree.DeleteOptions) error {
	err := db.update(ctx, false, func(w q) error { return deleteSession(w, id, opts) })
	if err != nil {
		return fmt.Errorf("delete session %s: %w", id, translate(err))
	}
	return nil
}

func deleteSession(w q, id string, opts sessiontree.DeleteOptions) error {
	// A session already marked deleting is found too: its delete
	// was interrupted and is finished here.
	var pk, indexed int64 // indexed: for the search index's merges (searchmerge.go)
	err := w.row(qSessionPK, args(id), &pk, &indexed)
	if errors.Is(err, sql.ErrNoRows) {
		return &SessionNotFoundError{ID: id}
	}
	if err != nil {
		return err
	}
	if err := sessiontree.CheckDelete(claimRow{w, pk}, id, opts, w.db.opts.Now()); err != nil {
		return err
	}
	lo, hi := pkRange(pk)
	for _, st := range []struct {
		query string
		args  []any
	}{
		{qMarkDeleting, args(pk)}, {qDeleteBranch, args(pk)}, {qDeleteLabels, args(pk)}, {qDeleteUsageDays, args(pk)},
		{qDeleteEntries, args(lo, hi)}, {qDeleteSession, args(pk)},
	} {
		if _, err := w.exec(st.query, st.args...); err != nil {
			return err
		}
	}
	return deletedFromIndex(w, indexed)
}

// entryPK is the key of entry seq of session: entries of one session are
// contiguous in the table, in append order.
func entryPK(session, seq int64) int64 { return session<<32 | seq }

// pkRange is the range of entry keys of a session.
func pkRange(session int64) (lo, hi int64) { return session<<32 | 1, session<<32 | 0xffffffff }

// ID returns the session id.
func (s *Storage) ID() string { return s.meta.ID }

// DB returns the database the session lives in.
func (s *Storage) DB() *DB { return s.db }

// Close releases the session; the database stays open. Further calls
// return sessiontree.ErrClosed.
func (s *Storage) Close() error {
	s.closed.Store(true)
	return nil
}

func (s *Storage) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() || s.db.closed.Load() {
		return sessiontree.ErrClosed
	}
	return nil
}
