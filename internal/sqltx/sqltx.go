package sqltx

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// CommitError reports a failed commit. Its outcome is unknown to the
// caller (the server may have committed before the connection went), so
// a write that failed with one must not be retried blindly.
type CommitError struct{ Err error }

func (e *CommitError) Error() string { return "commit: " + e.Err.Error() }

// Unwrap returns the driver's error.
func (e *CommitError) Unwrap() error { return e.Err }

// Beginner begins transactions: a *sqlx.DB (on a connection of its
// pool) or a *sqlx.Conn (on that connection).
type Beginner interface {
	BeginTxx(ctx context.Context, opts *sql.TxOptions) (*sqlx.Tx, error)
}

// Run begins a transaction with opts (nil: the driver's default) on db,
// runs fn in it and commits when fn returns nil; it rolls back when fn
// returns an error or panics (and panics again). A failed begin is
// wrapped with "begin", a failed commit is a [*CommitError].
func Run(ctx context.Context, db Beginner, opts *sql.TxOptions, fn func(tx *sqlx.Tx) error) (err error) {
	tx, err := db.BeginTxx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if err := fn(tx); err != nil {
		return Ended(ctx, err)
	}
	return commit(ctx, tx)
}

// commit commits tx, begun under ctx; a failed commit is a
// [*CommitError], unless ctx is done: database/sql then rolls tx back (on
// a goroutine of its own), so nothing was committed and the answer is
// ctx's error, not Commit's "transaction has already been committed or
// rolled back".
func commit(ctx context.Context, tx *sqlx.Tx) error {
	if err := ctx.Err(); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		if e := Ended(ctx, err); e != err {
			return e
		}
		return &CommitError{Err: err}
	}
	return nil
}

// Ended returns ctx's error for err when err is database/sql's for a
// transaction it has ended already (sql.ErrTxDone: it rolls a
// transaction back as soon as its context ends) and ctx has ended: the
// transaction was rolled back because ctx ended, which is what the
// caller must learn. Otherwise it returns err.
func Ended(ctx context.Context, err error) error { return EndedBy(ctx, err, nil) }

// EndedBy is [Ended] with broke telling more errors that ctx's ending
// causes (nil: none): a driver's, say, for a connection database/sql
// closed because the context ended, whose next call fails as a bad
// connection. It is the one rule of both: once ctx has ended, such an
// error is answered with ctx's error, which is what happened.
func EndedBy(ctx context.Context, err error, broke func(error) bool) error {
	if cerr := ctx.Err(); cerr != nil && (errors.Is(err, sql.ErrTxDone) || broke != nil && broke(err)) {
		return cerr
	}
	return err
}
