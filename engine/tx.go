package engine

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
)

// q runs prepared statements, in a transaction or (tx == nil) straight on
// the read pool.
type q struct {
	ctx   context.Context
	db    *DB
	tx    *sqlx.Tx
	write bool
}

func (x q) stmt(query string) (*sqlx.Stmt, error) {
	s, err := x.db.stmt(x.ctx, x.write, query)
	if err != nil {
		return nil, err
	}
	if x.tx != nil {
		s = x.tx.StmtxContext(x.ctx, s)
	}
	return s, nil
}

// row runs a query expected to return one row and scans it into dest;
// sql.ErrNoRows reports none.
func (x q) row(query string, args []any, dest ...any) error {
	s, err := x.stmt(query)
	if err != nil {
		return err
	}
	return s.QueryRowContext(x.ctx, args...).Scan(dest...)
}

func (x q) rows(query string, args ...any) (*sql.Rows, error) {
	s, err := x.stmt(query)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(x.ctx, args...)
}

func (x q) exec(query string, args ...any) (sql.Result, error) {
	s, err := x.stmt(query)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(x.ctx, args...)
}

func args(a ...any) []any { return a }

// update runs fn in a write transaction (BEGIN IMMEDIATE) and commits when
// it returns nil; an error or a panic rolls back. Busy errors are retried
// with a bound (see [DB.retry]), so fn must be safe to run again.
func (db *DB) update(ctx context.Context, fn func(w q) error) error {
	if db.closed.Load() {
		return sessiontree.ErrClosed
	}
	return db.retry(ctx, func() error { return db.updateOnce(ctx, fn) })
}

func (db *DB) updateOnce(ctx context.Context, fn func(w q) error) (err error) {
	tx, err := db.w.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
	}()
	if err := fn(q{ctx: ctx, db: db, tx: tx, write: true}); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// view runs fn in a read transaction: every query in it sees one snapshot.
func (db *DB) view(ctx context.Context, fn func(r q) error) error {
	if db.closed.Load() {
		return sessiontree.ErrClosed
	}
	return db.retry(ctx, func() (err error) {
		tx, err := db.r.BeginTxx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		defer func() { _ = tx.Rollback() }()
		return fn(q{ctx: ctx, db: db, tx: tx})
	})
}

// read runs fn with one-shot statements on the read pool.
func (db *DB) read(ctx context.Context, fn func(r q) error) error {
	if db.closed.Load() {
		return sessiontree.ErrClosed
	}
	return db.retry(ctx, func() error { return fn(q{ctx: ctx, db: db}) })
}
