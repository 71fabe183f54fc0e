package pgengine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/sqltx"
	"github.com/sessiontree/sessiontree/migrate"
)

// update runs fn in a write transaction (READ COMMITTED: fn locks the rows
// it writes), committing when it returns nil. A deadlock, a serialization
// failure or a connection lost before the commit makes it try again, up to
// Options.Attempts times; op names the write in errors. After the commit
// of a bulk load it may analyze (analyzeAfterBulk).
func (db *DB) update(ctx context.Context, op string, fn func(tx *sqlx.Tx) error) error {
	if err := db.retry(ctx, op, func() error { return db.runTx(ctx, nil, fn) }); err != nil {
		return err
	}
	db.analyzeAfterBulk(ctx)
	return nil
}

// upkeep is update for Open's own work after the migrations (redo.go,
// header.go): each of its transactions reads again what is left to do,
// so one whose COMMIT went unanswered is tried again as a lost
// connection is (as the migration steps are: migrate), where an
// append's would be ErrCommitUnknown.
func (db *DB) upkeep(ctx context.Context, op string, fn func(tx *sqlx.Tx) error) error {
	again := func(err error) bool { return retryable(err) || lostConnection(err) }
	return db.retryWhen(ctx, op, again, func() error { return db.runTx(ctx, nil, fn) })
}

// view runs fn in one read-only REPEATABLE READ snapshot: the one ctx
// carries (withSnapshot), or a new one, tried again (fn run again) when
// it fails as retry says. The commit of a snapshot of its own only ends
// it (readCommitErr).
func (db *DB) view(ctx context.Context, op string, fn func(tx *sqlx.Tx) error) error {
	return db.viewWhen(ctx, op, retryable, fn)
}

// viewWhen is view with again deciding which errors run fn again.
func (db *DB) viewWhen(ctx context.Context, op string, again func(error) bool, fn func(tx *sqlx.Tx) error) error {
	if tx, ok := snapshotOf(ctx); ok {
		if err := fn(tx); err != nil {
			return opErr(op, err)
		}
		return nil
	}
	opts := &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	return db.retryWhen(ctx, op, again, func() error { return readCommitErr(db.runTx(ctx, opts, fn)) })
}

// readCommitErr is the error of a read-only transaction: nil when only
// its commit failed (a sqltx.CommitError, the connection lost at the
// COMMIT): the commit of a read-only transaction writes nothing, and fn
// read all it read in its snapshot, so it succeeded. Running fn again
// instead, as before, ran a DB.View's function twice, and an export
// wrote its file twice over.
func readCommitErr(err error) error {
	var ce *sqltx.CommitError
	if errors.As(err, &ce) {
		return nil
	}
	return err
}

// snapshotKey is the context key of a read snapshot (withSnapshot).
type snapshotKey struct{}

// withSnapshot returns ctx carrying the read transaction tx: the reads of
// a Storage given it (view, reader) all run in tx's snapshot, so that
// what they compare was committed together. Check uses it: its reads
// taken one after another, each in a snapshot of its own, would see a
// concurrent append in some of them and not in others, and report a
// corruption that is not there.
func withSnapshot(ctx context.Context, tx *sqlx.Tx) context.Context {
	return context.WithValue(ctx, snapshotKey{}, tx)
}

// snapshotOf returns the read transaction ctx carries, if any.
func snapshotOf(ctx context.Context) (*sqlx.Tx, bool) {
	tx, ok := ctx.Value(snapshotKey{}).(*sqlx.Tx)
	return tx, ok
}

// reader is what a read of one statement runs on: the snapshot ctx
// carries, or the pool.
func (db *DB) reader(ctx context.Context) sqlx.ExtContext {
	if tx, ok := snapshotOf(ctx); ok {
		return tx
	}
	return db.db
}

// read runs fn, a read of one statement, on reader(ctx): in the snapshot
// ctx carries, once (view tries the snapshot again); on the pool, tried
// again when the connection is lost, as a write is before its commit: a
// read writes nothing, and a connection the network dropped while idle
// in the pool fails the first statement sent on it.
func (db *DB) read(ctx context.Context, fn func(q sqlx.ExtContext) error) error {
	if tx, ok := snapshotOf(ctx); ok {
		return fn(tx)
	}
	return db.retry(ctx, "", func() error { return fn(db.db) })
}

// retry runs attempt until it succeeds, fails for good (not retryable),
// or has been tried Options.Attempts times, pausing a little longer each
// time.
func (db *DB) retry(ctx context.Context, op string, attempt func() error) error {
	return db.retryWhen(ctx, op, retryable, attempt)
}

// retryWhen is retry with again deciding which errors are tried again.
func (db *DB) retryWhen(ctx context.Context, op string, again func(error) bool, attempt func() error) error {
	var pause backoff
	for i := 1; ; i++ {
		if err := db.check(ctx); err != nil {
			return err
		}
		err := attempt()
		if err == nil {
			return nil
		}
		if ce := claimError(err); ce != nil {
			return ce // it names the session, as on SQLite (claim.go)
		}
		if !again(err) || i >= db.opts.attempts() {
			return opErr(op, sqltx.EndedBy(ctx, err, brokenByEnd))
		}
		if err := pause.wait(ctx); err != nil {
			return err
		}
	}
}

// brokenByEnd reports whether err, met once the context ended, is the
// connection that ending broke (database/sql closes a connection whose
// statement's context ends, and the next call on it fails as a bad
// connection): retryWhen then answers the context's error
// (sqltx.EndedBy), the caller cancelled, the storage did not fail. A
// commit whose outcome is unknown stays so (storageErr).
func brokenByEnd(err error) bool { return !isUnknownCommit(err) && lostConnection(err) }

// backoff is the pause between attempts: 5 ms, doubled each time, up to
// max when max is set.
type backoff struct {
	last, max time.Duration
}

// wait sleeps the next pause, or until ctx is done (returning its error).
func (b *backoff) wait(ctx context.Context) error {
	b.last = max(2*b.last, 5*time.Millisecond)
	if b.max > 0 {
		b.last = min(b.last, b.max)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(b.last):
	}
	return nil
}

// opErr is the error of op that failed for good with err; an empty op
// (View's and Update's: fn's errors name what failed, as on SQLite)
// adds no name.
func opErr(op string, err error) error {
	if op == "" {
		return storageErr(err)
	}
	return fmt.Errorf("%s: %w", op, storageErr(err))
}

// runTx runs fn in one transaction (internal/sqltx), begun on a
// connection taken from the pool for it, which [DB.rawOf] gives to
// what needs pgx's own API in the transaction (a batch's COPY).
func (db *DB) runTx(ctx context.Context, opts *sql.TxOptions, fn func(tx *sqlx.Tx) error) error {
	conn, err := db.db.Connx(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer conn.Close()
	return sqltx.Run(ctx, conn, opts, func(tx *sqlx.Tx) error {
		db.txConns.Store(tx, conn)
		defer db.txConns.Delete(tx)
		return fn(tx)
	})
}

// rawOf runs fn with the pgx connection of tx, a transaction of runTx's
// in progress: the statements fn runs are tx's, and database/sql runs
// nothing else on the connection meanwhile.
func (db *DB) rawOf(tx *sqlx.Tx, fn func(*pgx.Conn) error) error {
	v, ok := db.txConns.Load(tx)
	if !ok {
		return errors.New("a transaction not begun by runTx") // a bug of this package's
	}
	return v.(*sqlx.Conn).Raw(func(dc any) error { return fn(dc.(*stdlib.Conn).Conn()) })
}

// PostgreSQL's error codes this package acts on.
const (
	codeSerialization = "40001"
	codeDeadlock      = "40P01"
	codeUnique        = "23505"
	codeReadOnlyTx    = "25006" // read_only_sql_transaction
	codeNoPrivilege   = "42501" // insufficient_privilege
)

// retryable reports whether err is worth another attempt: a deadlock or
// serialization failure, a connection lost (or a server gone away) before
// the commit, or a generated entry id the session had (errIDTaken).
func retryable(err error) bool {
	var ce *sqltx.CommitError
	if errors.As(err, &ce) {
		return false
	}
	if errors.Is(err, errIDTaken) {
		return true // a generated id met one the session has: a new one
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) && (pg.Code == codeSerialization || pg.Code == codeDeadlock) {
		return true
	}
	return lostConnection(err)
}

// lostConnection reports whether err is a dropped or refused connection
// (pgconn.ErrConnClosed too: pgx's error when a failure earlier in the
// same operation closed the connection, as a read finding it dropped
// while a statement was being sent does; and sql.ErrConnDone, the
// transaction's connection (runTx's) that database/sql closed as bad,
// as it does when the transaction's context ends, which a batch's COPY
// through rawOf then meets), or the server going away: shutting down, restarting, or not yet
// accepting connections (class 57P: admin_shutdown, crash_shutdown,
// cannot_connect_now), or a connection exception (class 08).
func lostConnection(err error) bool {
	var ne net.Error
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return strings.HasPrefix(pg.Code, "57P") || strings.HasPrefix(pg.Code, "08")
	}
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, sql.ErrConnDone) ||
		errors.As(err, &ne) || pgconn.SafeToRetry(err)
}

// storageErr gives err a root sentinel: a commit whose outcome is
// unknown (a CommitError, whatever its cause: a lost connection, or the
// write's context ended while the COMMIT was on its way) is
// ErrCommitUnknown and ErrStorage; other errors that already match one
// are kept, a deadlock or serialization failure is ErrConflict, a write
// the server takes none of (a read-only transaction: a standby, a role or
// database whose transactions default to read-only) or this role may not
// make (insufficient privilege) is ErrReadOnly, as a write to a database
// file that cannot be written is on SQLite, one the schema fence refuses
// (a newer program migrated the database since this one opened it:
// fence.go) is migrate.ErrNewer, and everything else from the
// server or the connection is ErrStorage.
func storageErr(err error) error {
	if isUnknownCommit(err) && !errors.Is(err, sessiontree.ErrCommitUnknown) {
		return fmt.Errorf("%w: %w: %w", sessiontree.ErrStorage, sessiontree.ErrCommitUnknown, err)
	}
	for _, s := range []error{sessiontree.ErrNotFound, sessiontree.ErrCorrupt, sessiontree.ErrInvalidEntry,
		sessiontree.ErrConflict, sessiontree.ErrLocked, sessiontree.ErrStaleClaim, sessiontree.ErrStorage, sessiontree.ErrClosed,
		sessiontree.ErrEditRefused, sessiontree.ErrBadQuery, errors.ErrUnsupported, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, s) {
			return err
		}
	}
	if isLockNotAvailable(err) {
		return fmt.Errorf("%w: %w", sessiontree.ErrLocked, err)
	}
	var pg *pgconn.PgError
	switch {
	case !errors.As(err, &pg):
	case pg.Code == codeSerialization || pg.Code == codeDeadlock:
		return fmt.Errorf("%w: %w", sessiontree.ErrConflict, err)
	case pg.Code == codeReadOnlyTx || pg.Code == codeNoPrivilege:
		return fmt.Errorf("%w: %w", sessiontree.ErrReadOnly, err)
	case pg.Code == codeSchemaFence:
		return fmt.Errorf("%w: %w", migrate.ErrNewer, err)
	}
	var ce callerError
	if errors.As(err, &ce) && !fromServer(err) {
		return err // the caller's own refusal, no storage failure
	}
	return fmt.Errorf("%w: %w", sessiontree.ErrStorage, err)
}

// callerError is an error the function given to [DB.View], [DB.Update]
// or [DB.TryUpdate] returned: storageErr leaves it as it is, unless it
// holds an error of the server or the connection (fn's statements fail
// as the engine's own do). A caller's refusal inside its transaction,
// such as a fork before an entry that is not a user message, is then no
// storage failure, as on SQLite.
type callerError struct{ err error }

func (e callerError) Error() string { return e.err.Error() }
func (e callerError) Unwrap() error { return e.err }

// callers marks err, returned by a caller's function, as a callerError.
func callers(err error) error {
	if err == nil {
		return nil
	}
	return callerError{err}
}

// fromServer reports whether err holds an error of the server, the
// connection or the transaction.
func fromServer(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) || lostConnection(err) || errors.Is(err, sql.ErrTxDone) || errors.Is(err, sql.ErrConnDone)
}

// isUniqueViolation reports whether err is a unique constraint refusal.
func isUniqueViolation(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == codeUnique
}
