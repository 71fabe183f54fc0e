package sqltx

import (
	"context"
	"database/sql"
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

// Run begins a transaction with opts (nil: the driver's default), runs fn
// in it and commits when fn returns nil; it rolls back when fn returns an
// error or panics (and panics again). A failed begin is wrapped with
// "begin", a failed commit is a [*CommitError].
func Run(ctx context.Context, db *sqlx.DB, opts *sql.TxOptions, fn func(tx *sqlx.Tx) error) (err error) {
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
		return err
	}
	if err := tx.Commit(); err != nil {
		return &CommitError{Err: err}
	}
	return nil
}
