package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/sqltx"
)

// Database is a [DB] seen through the engine-neutral contract
// [sessiontree.Database], the way the session store (package store) uses
// it. Its transactions are the engine's one transaction type, [*Tx], for
// reads ([Database.View]) and writes ([Database.Update]) alike.
//
// It is a type of its own, not DB's methods, only because DB still has
// View and Update of the older form (a *sqlx.Tx; a *Tx) that tests use;
// no production code outside the engine does. It is safe for concurrent
// use, as DB is.
type Database struct{ db *DB }

var (
	_ sessiontree.Database        = (*Database)(nil)
	_ sessiontree.DatabaseTx      = (*Tx)(nil)
	_ sessiontree.DatabaseSession = (*Storage)(nil)
)

// NewDatabase returns db seen through the contract. Closing it closes db.
func NewDatabase(db *DB) *Database { return &Database{db: db} }

// DB returns the engine database underneath.
func (d *Database) DB() *DB { return d.db }

// View implements [sessiontree.Database.View]: fn runs in one read
// transaction on a query-only connection.
func (d *Database) View(ctx context.Context, fn func(tx sessiontree.DatabaseTx) error) error {
	return d.db.readView(ctx, func(tx *Tx) error { return fn(tx) })
}

// Update implements [sessiontree.Database.Update] with [DB.Update].
func (d *Database) Update(ctx context.Context, fn func(tx sessiontree.DatabaseTx) error) error {
	return d.db.Update(ctx, func(tx *Tx) error { return fn(tx) })
}

// TryUpdate implements [sessiontree.Database.TryUpdate] with
// [DB.TryUpdate].
func (d *Database) TryUpdate(ctx context.Context, fn func(tx sessiontree.DatabaseTx) error) error {
	return d.db.TryUpdate(ctx, func(tx *Tx) error { return fn(tx) })
}

// WaitForLock is [DB.WaitForLock].
func (d *Database) WaitForLock(ctx context.Context) error { return d.db.WaitForLock(ctx) }

// OpenSession is [DB.OpenSession].
func (d *Database) OpenSession(ctx context.Context, id string) (sessiontree.DatabaseSession, error) {
	st, err := d.db.OpenSession(ctx, id)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// Check is [DB.Check], then the search index compared with the entries'
// text (see indexcheck.go): every session's for the whole database, one
// session's rows (in the transaction of its replay) for a session.
func (d *Database) Check(ctx context.Context, id string) error {
	if id != "" {
		return d.db.checkSession(ctx, id, true)
	}
	if err := d.db.Check(ctx, ""); err != nil {
		return err
	}
	return d.db.checkSearchIndex(ctx)
}

var _ sessiontree.Repairer = (*Database)(nil)

// Repair is [DB.Repair].
func (d *Database) Repair(ctx context.Context, id string) ([]sessiontree.RepairedSession, error) {
	return d.db.Repair(ctx, id)
}

// CheckStructure is [DB.CheckStructure].
func (d *Database) CheckStructure(ctx context.Context) error { return d.db.CheckStructure(ctx) }

// Usage is [DB.Usage].
func (d *Database) Usage(ctx context.Context, q sessiontree.UsageQuery) (sessiontree.UsageReport, error) {
	return d.db.Usage(ctx, q)
}

// ReadOnly is [DB.ReadOnly].
func (d *Database) ReadOnly() error { return d.db.ReadOnly() }

// Path is [DB.Path].
func (d *Database) Path() string { return d.db.Path() }

// Close is [DB.Close].
func (d *Database) Close() error { return d.db.Close() }

// readView runs fn in one read transaction (retried on a busy database);
// the engine's one read transaction of the contract's form.
func (db *DB) readView(ctx context.Context, fn func(tx *Tx) error) error {
	if db.closed.Load() {
		return sessiontree.ErrClosed
	}
	return translate(db.retry(ctx, func() error { return db.viewTx(ctx, fn) }))
}

// viewTx runs fn in one read transaction on a connection of the read
// pool, once.
func (db *DB) viewTx(ctx context.Context, fn func(tx *Tx) error) error {
	sc, err := db.r.Connx(ctx)
	if err != nil {
		return err
	}
	defer sc.Close()
	tx, err := sc.BeginTxx(ctx, &sqlTxReadOnly)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	return sqltx.Ended(ctx, fn(&Tx{ctx: ctx, db: db, sc: sc, tx: tx, read: true}))
}

// NewSession implements [sessiontree.DatabaseTx.NewSession].
func (tx *Tx) NewSession(meta sessiontree.SessionMeta, metadata json.RawMessage) (sessiontree.DatabaseSession, error) {
	st, err := tx.CreateSession(meta)
	if err != nil {
		return nil, err
	}
	if metadata != nil {
		if _, err := tx.tx.ExecContext(tx.ctx, `UPDATE sessions SET metadata = ? WHERE pk = ?`, string(metadata), st.pk); err != nil {
			return nil, fmt.Errorf("create session %s: set metadata: %w", st.ID(), translate(err))
		}
	}
	return st, nil
}

// Session implements [sessiontree.DatabaseTx.Session].
func (tx *Tx) Session(id string) (sessiontree.DatabaseSession, error) {
	st, err := tx.OpenSession(id)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// AppendEntries implements [sessiontree.DatabaseTx.AppendEntries] with
// [Tx.AppendBatch]; s must be a session of this engine.
func (tx *Tx) AppendEntries(s sessiontree.DatabaseSession, entries []sessiontree.Entry) error {
	st, ok := s.(*Storage)
	if !ok {
		return fmt.Errorf("append batch: session %s belongs to another engine", s.ID())
	}
	return tx.AppendBatch(st, entries)
}
