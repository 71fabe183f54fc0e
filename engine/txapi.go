package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/sqltx"
)

// Tx is a transaction of a [DB], the engine's one transaction type: a
// write transaction inside [DB.Update] and [Database.Update], a read
// transaction inside [Database.View] (where its writes fail). It
// implements sessiontree.DatabaseTx (database.go and the files it
// names), for work that must be atomic across sessions (the session
// store creates a session and its metadata, or forks one, in one
// transaction). It is valid only inside the function given and is not
// safe for concurrent use.
type Tx struct {
	ctx context.Context
	db  *DB
	sc  *sqlx.Conn // the connection, held for the transaction
	tx  *sqlx.Tx
	// read marks a read transaction ([Database.View]) on a query-only
	// connection.
	read bool
}

// Update runs fn in one write transaction (BEGIN IMMEDIATE): it commits
// when fn returns nil and rolls back when fn returns an error or panics.
// When the database is busy (another process writing), the transaction
// is retried within the busy timeout, so fn may run more than once and
// must not keep effects outside the transaction. On a database opened
// for reading only it returns [DB.ReadOnly]'s error without calling fn.
func (db *DB) Update(ctx context.Context, fn func(tx *Tx) error) error {
	if db.closed.Load() {
		return sessiontree.ErrClosed
	}
	if db.ro != nil {
		return db.ro
	}
	return translate(db.retry(ctx, func() error { return db.updateTx(ctx, true, fn) }))
}

// TryUpdate is [DB.Update] without waiting: when another connection (of
// this process or another) holds the database's write lock, it returns at
// once an error matching sessiontree.ErrLocked, without running fn. Once
// it has the lock, fn runs once, as in Update.
func (db *DB) TryUpdate(ctx context.Context, fn func(tx *Tx) error) error {
	if db.closed.Load() {
		return sessiontree.ErrClosed
	}
	if db.ro != nil {
		return db.ro
	}
	return db.translate(db.updateTx(ctx, false, fn))
}

// WaitForLock returns once no other connection holds the database's
// write lock, or with ctx's error when ctx is done first, however long
// that takes (a write waits [Options.BusyTimeout] at most). It takes the
// lock for a moment to know (an empty transaction, which writes
// nothing), so the write that follows is likely, not certain, to find it
// free.
func (db *DB) WaitForLock(ctx context.Context) error {
	delay := time.Millisecond
	for {
		err := db.TryUpdate(ctx, func(*Tx) error { return nil })
		if !errors.Is(err, sessiontree.ErrLocked) {
			return err
		}
		if err := pause(ctx, delay); err != nil {
			return err
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// updateTx runs one write transaction; with wait false, its BEGIN does not
// wait for the write lock (busy_timeout 0 for that statement alone).
func (db *DB) updateTx(ctx context.Context, wait bool, fn func(tx *Tx) error) error {
	sc, err := db.w.Connx(ctx)
	if err != nil {
		return err
	}
	defer sc.Close()
	if !wait {
		// Not under ctx: the driver returns the error of a context that
		// ended as a statement ran even when it ran, and the connection
		// would go back to its pool without its busy timeout.
		if _, err := sc.ExecContext(context.WithoutCancel(ctx), `PRAGMA busy_timeout = 0`); err != nil {
			return err
		}
	}
	// BeginTxx forgets the heads the connection remembers (see
	// conn.BeginTx): the caller's SQL may change any session.
	tx, err := sc.BeginTxx(ctx, nil)
	if !wait {
		restore := `PRAGMA busy_timeout = ` + strconv.FormatInt(db.opts.BusyTimeout.Milliseconds(), 10)
		if _, rerr := sc.ExecContext(context.WithoutCancel(ctx), restore); rerr != nil {
			if err == nil {
				_ = tx.Rollback()
			}
			// A connection left without its busy timeout would fail
			// every write that meets another: the pool must drop it.
			_ = sc.Raw(func(dc any) error {
				dc.(*conn).broken = true
				return nil
			})
			return fmt.Errorf("restore busy timeout: %w", rerr)
		}
	}
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
	}()
	if err := fn(&Tx{ctx: ctx, db: db, sc: sc, tx: tx}); err != nil {
		err = fenced(ctx, err, func(ctx context.Context) (v int64, err error) { return v, tx.GetContext(ctx, &v, qUserVersion) })
		_ = tx.Rollback()
		return sqltx.Ended(ctx, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", sqltx.Ended(ctx, err))
	}
	return sc.Raw(func(dc any) error {
		db.committed(dc.(*conn))
		return nil
	})
}

// raw runs engine statements inside the transaction. database/sql rolls
// the transaction back as soon as its context ends, on the connection's
// lock, which Raw holds: with the context not ended when Raw has the
// lock, the rollback waits for fn, and fn's statements (those bounded to
// a few rows run without the context's cancellation) run in the
// transaction; with it ended, they would run outside it, each in a
// snapshot of its own, so raw refuses with the context's error.
func (tx *Tx) raw(fn func(w q) error) error {
	return tx.sc.Raw(func(dc any) error {
		if err := tx.ctx.Err(); err != nil {
			return err
		}
		return fn(newQ(tx.ctx, tx.db, dc.(*conn), !tx.read))
	})
}

var sqlTxReadOnly = sql.TxOptions{ReadOnly: true}

// Context returns the context the transaction runs under.
func (tx *Tx) Context() context.Context { return tx.ctx }

// CreateSession is [DB.CreateSession] inside the transaction, but for
// an id in use: a [*sessiontree.SessionExistsError] as it is, which
// names what was refused, as [sessiontree.DatabaseTx.NewSession] returns
// it from every engine.
func (tx *Tx) CreateSession(meta sessiontree.SessionMeta) (*Storage, error) {
	meta, err := tx.db.sessionDefaults(meta)
	if err != nil {
		return nil, err
	}
	var st *Storage
	err = tx.raw(func(w q) (err error) {
		st, err = createSession(w, meta)
		return err
	})
	var exists *sessiontree.SessionExistsError
	switch {
	case errors.As(err, &exists):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("create session %s: %w", meta.ID, translate(err))
	}
	return st, nil
}

// OpenSession is [DB.OpenSession] inside the transaction: it sees the
// transaction's own writes.
func (tx *Tx) OpenSession(id string) (*Storage, error) {
	var st *Storage
	err := tx.raw(func(w q) (err error) {
		st, err = openSession(w, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open session %s: %w", id, translate(err))
	}
	return st, nil
}

// DeleteSession is [DB.DeleteSession] inside the transaction.
func (tx *Tx) DeleteSession(id string, opts sessiontree.DeleteOptions) error {
	if err := tx.raw(func(w q) error { return deleteSession(w, id, opts) }); err != nil {
		return fmt.Errorf("delete session %s: %w", id, translate(err))
	}
	return nil
}

// AppendBatch is [Storage.AppendBatch] of st inside the transaction; st
// must belong to the transaction's database. A refused batch leaves the
// transaction as it was (the batch runs in a savepoint), so the caller
// may go on.
func (tx *Tx) AppendBatch(st *Storage, entries []sessiontree.Entry) error {
	if st.db != tx.db {
		return fmt.Errorf("append batch: session %s belongs to another database", st.meta.ID)
	}
	if len(entries) == 0 {
		return nil
	}
	return st.storeBatch(entries, func(fn func(w q, h head) error) error {
		return tx.raw(func(w q) error {
			h, err := st.head(w)
			if err != nil {
				return err
			}
			if err := st.checkClaim(w); err != nil {
				return err
			}
			return w.savepoint(func() error { return fn(w, h) })
		})
	})
}
