package engine

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
)

// Tx is a write transaction of a [DB], for work that must be atomic
// across sessions or with SQL of the caller's own (the session store
// creates a session and its metadata, or forks one, in one transaction).
// It is valid only inside the function given to [DB.Update] and is not
// safe for concurrent use.
type Tx struct {
	w q
}

// Update runs fn in one write transaction (BEGIN IMMEDIATE): it commits
// when fn returns nil and rolls back when fn returns an error or panics.
// When the database is busy (another process writing), the transaction
// is retried within the busy timeout, so fn may run more than once and
// must not keep effects outside the transaction.
func (db *DB) Update(ctx context.Context, fn func(tx *Tx) error) error {
	return translate(db.update(ctx, func(w q) error { return fn(&Tx{w: w}) }))
}

// View runs fn in one read transaction on a query-only connection: every
// query in it sees the same snapshot, and writers are not blocked.
func (db *DB) View(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	return translate(db.view(ctx, func(r q) error { return fn(r.tx) }))
}

// Context returns the context the transaction runs under.
func (tx *Tx) Context() context.Context { return tx.w.ctx }

// SQL returns the underlying transaction for statements of the caller's
// own. The entries table stays append-only (its triggers refuse the rest).
func (tx *Tx) SQL() *sqlx.Tx { return tx.w.tx }

// CreateSession is [DB.CreateSession] inside the transaction.
func (tx *Tx) CreateSession(meta sessiontree.SessionMeta) (*Storage, error) {
	meta, err := tx.w.db.sessionDefaults(meta)
	if err != nil {
		return nil, err
	}
	st, err := createSession(tx.w, meta)
	if err != nil {
		return nil, fmt.Errorf("create session %s: %w", meta.ID, translate(err))
	}
	return st, nil
}

// OpenSession is [DB.OpenSession] inside the transaction: it sees the
// transaction's own writes.
func (tx *Tx) OpenSession(id string) (*Storage, error) {
	st, err := openSession(tx.w, id)
	if err != nil {
		return nil, fmt.Errorf("open session %s: %w", id, translate(err))
	}
	return st, nil
}

// DeleteSession is [DB.DeleteSession] inside the transaction.
func (tx *Tx) DeleteSession(id string) error {
	if err := deleteSession(tx.w, id); err != nil {
		return fmt.Errorf("delete session %s: %w", id, translate(err))
	}
	return nil
}

// AppendBatch is [Storage.AppendBatch] of st inside the transaction; st
// must belong to the transaction's database.
func (tx *Tx) AppendBatch(st *Storage, entries []sessiontree.Entry) error {
	if st.db != tx.w.db {
		return fmt.Errorf("append batch: session %s belongs to another database", st.meta.ID)
	}
	if len(entries) == 0 {
		return nil
	}
	if err := validateBatch(entries); err != nil {
		return err
	}
	h, err := tx.w.head(st.pk)
	if err != nil {
		if err == sessiontree.ErrNotFound {
			err = &SessionNotFoundError{ID: st.meta.ID}
		}
		return fmt.Errorf("append batch: %w", err)
	}
	if err := st.appendBatch(tx.w, h, entries); err != nil {
		return fmt.Errorf("append batch: %w", translate(err))
	}
	return nil
}
