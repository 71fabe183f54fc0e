package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/migrate"
)

// Errors [Open] returns for a file it refuses; the file is left untouched.
var (
	// ErrNotDatabase is returned for a file that is not a SQLite database.
	ErrNotDatabase = errors.New("not a SQLite database")
	// ErrForeign is returned for a SQLite database of another application.
	ErrForeign = migrate.ErrForeign
	// ErrNewer is returned for a database written by a newer version of
	// this program.
	ErrNewer = migrate.ErrNewer
)

// ReadOnlyError says why [Open] opened a database for reading only, and
// is what every write to it returns. It matches sessiontree.ErrReadOnly.
type ReadOnlyError struct {
	// Path is the database file.
	Path string
	// Reason says what cannot be written, e.g. "it is on a read-only
	// file system".
	Reason string

	full bool // the file system is full (see roomCheck)
}

// Error says in one sentence that the database is read-only, and why.
func (e *ReadOnlyError) Error() string {
	return fmt.Sprintf("the database %s is read-only: %s", e.Path, e.Reason)
}

// Is makes errors.Is(err, sessiontree.ErrReadOnly) true, and
// errors.Is(err, sessiontree.ErrDiskFull) when the database is read-only
// because its file system is full.
func (e *ReadOnlyError) Is(target error) bool {
	return target == sessiontree.ErrReadOnly || e.full && target == sessiontree.ErrDiskFull
}

// sqliteCode returns the primary result code of a SQLite error, 0 for
// other errors.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

func isBusy(err error) bool {
	c := sqliteCode(err)
	return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
}

// isUniqueID reports a UNIQUE failure of (session, id) in entries.
func isUniqueID(err error) bool { return isUniqueOn(err, "entries.id") }

// isUniqueOn reports a UNIQUE failure of column, as SQLite names it
// ("sessions.id").
func isUniqueOn(err error, column string) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE &&
		strings.Contains(se.Error(), column)
}

// translate maps database errors to the sessiontree sentinels, keeping the
// original error in the chain. Errors that already carry a sentinel, and
// context errors, pass unchanged. A DB translates a little more
// ([DB.translate]).
func translate(err error) error {
	if err == nil {
		return nil
	}
	for _, s := range []error{sessiontree.ErrNotFound, sessiontree.ErrCorrupt, sessiontree.ErrInvalidEntry,
		sessiontree.ErrConflict, sessiontree.ErrStorage, sessiontree.ErrLocked, sessiontree.ErrClosed,
		sessiontree.ErrReadOnly, context.Canceled, context.DeadlineExceeded, ErrNotDatabase, ErrForeign, ErrNewer} {
		if errors.Is(err, s) {
			return err
		}
	}
	if errors.Is(err, sql.ErrConnDone) || strings.Contains(err.Error(), "sql: database is closed") {
		return fmt.Errorf("%w: %w", sessiontree.ErrClosed, err)
	}
	switch sqliteCode(err) {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return fmt.Errorf("%w: %w", sessiontree.ErrLocked, err)
	case sqlite3.SQLITE_CONSTRAINT:
		return fmt.Errorf("%w: %w", sessiontree.ErrConflict, err)
	case sqlite3.SQLITE_FULL:
		return &diskFullError{err}
	case sqlite3.SQLITE_CORRUPT:
		return fmt.Errorf("%w: %w", sessiontree.ErrCorrupt, err)
	case sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("%w: %w", ErrNotDatabase, err)
	case sqlite3.SQLITE_READONLY:
		// A write the checks of Open did not foresee (a file made
		// read-only since, a -shm file of another user).
		return fmt.Errorf("%w: %w", sessiontree.ErrReadOnly, err)
	case 0:
		var se *sqlite.Error
		if !errors.As(err, &se) && !errors.Is(err, sql.ErrTxDone) {
			return err // not the database's: a caller's own error passes as it is
		}
	}
	return fmt.Errorf("%w: %w", sessiontree.ErrStorage, err)
}

// retry runs fn until it returns something other than a busy error. The
// busy timeout already waits inside SQLite; this covers the cases where
// SQLite reports busy without waiting (a lock upgrade, WAL recovery in
// another process). The bound is the busy timeout again; past it the
// error is returned, as sessiontree.ErrLocked.
func (db *DB) retry(ctx context.Context, fn func() error) error {
	deadline := time.Now().Add(db.opts.BusyTimeout)
	delay := time.Millisecond
	for {
		err := fn()
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return db.translate(err)
		}
		if err := pause(ctx, delay); err != nil {
			return err
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// pause waits between d and 2d (the jitter keeps waiters from retrying in
// step), or returns ctx's error when ctx is done first.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d + rand.N(d))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
