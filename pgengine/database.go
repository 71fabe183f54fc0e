package pgengine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
)

var (
	_ sessiontree.Database        = (*DB)(nil)
	_ sessiontree.DatabaseTx      = (*Tx)(nil)
	_ sessiontree.DatabaseSession = (*Storage)(nil)
)

// Tx is a transaction of a [DB] through the engine-neutral contract
// ([sessiontree.DatabaseTx]): a read transaction inside [DB.View], a
// write transaction inside [DB.Update] and [DB.TryUpdate]. It is valid
// only inside the function given and is not safe for concurrent use.
type Tx struct {
	ctx context.Context
	db  *DB
	tx  *sqlx.Tx
	// write is set in a write transaction: its reads of a session's
	// counts lock the session's row (rowRead).
	write bool
}

// Context returns the context the transaction runs under.
func (tx *Tx) Context() context.Context { return tx.ctx }

// View implements [sessiontree.Database.View]: fn runs in one read-only
// REPEATABLE READ snapshot, which neither blocks nor waits for writers.
// It runs once: fn may act outside the transaction (an export writes its
// file as it reads), so a connection lost once fn began fails the View
// (ErrStorage), where a connection lost before (at BEGIN) is tried again.
func (db *DB) View(ctx context.Context, fn func(tx sessiontree.DatabaseTx) error) error {
	ran := false
	again := func(err error) bool { return !ran && retryable(err) }
	return db.viewWhen(ctx, "", again, func(tx *sqlx.Tx) error {
		ran = true
		return callers(fn(&Tx{ctx: ctx, db: db, tx: tx}))
	})
}

// Update implements [sessiontree.Database.Update]. Unlike the SQLite
// engine's, a PostgreSQL write transaction is not serialized with every
// other write to the database: each method that writes a session locks
// that session's row (SELECT ... FOR UPDATE) until the commit, so writes
// to one session queue and writes to different sessions run in parallel.
// So does each read of a session's row that a write may be decided on
// ([Tx.SessionInfo], [Tx.SessionEntryCount]): what it read stays true
// until the commit, as it does in the SQLite engine's transaction.
// A lock is waited for as long as ctx allows. A deadlock, a serialization
// failure or a connection lost before the commit runs fn again, a bounded
// number of times ([Options.Attempts]). fn should not keep the
// transaction waiting between its statements: the server ends one left
// idle for a minute (idle_in_transaction_session_timeout, unless the URL
// sets another: dial.go), so that a client lost mid-write frees the
// sessions it locked.
func (db *DB) Update(ctx context.Context, fn func(tx sessiontree.DatabaseTx) error) error {
	return db.update(ctx, "", db.writeTx(ctx, fn))
}

// writeTx is the function of a [DB.Update] or [DB.TryUpdate] running
// fn in a write Tx over the transaction, fn's error marked as its
// (callers).
func (db *DB) writeTx(ctx context.Context, fn func(tx sessiontree.DatabaseTx) error) func(tx *sqlx.Tx) error {
	return func(tx *sqlx.Tx) error { return callers(fn(&Tx{ctx: ctx, db: db, tx: tx, write: true})) }
}

// TryUpdate implements [sessiontree.Database.TryUpdate]: Update where
// a lock another transaction holds is not waited for. PostgreSQL has no
// database-wide write lock; instead every lock fn needs (a session's row,
// above all) is tried without waiting (lock_timeout of 1 ms for the
// transaction), and one that is held makes TryUpdate roll back whatever
// fn did and return an error matching [sessiontree.ErrLocked].
// [DB.WaitForLock] then waits for the session met.
func (db *DB) TryUpdate(ctx context.Context, fn func(tx sessiontree.DatabaseTx) error) error {
	write := db.writeTx(ctx, fn)
	return db.update(ctx, "", func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `SET LOCAL lock_timeout = 1`); err != nil {
			return err
		}
		return write(tx)
	})
}

// WaitForLock implements [sessiontree.Database.WaitForLock]: it waits
// until the session whose row lock the last [DB.TryUpdate] met is free
// (a shared lock taken and dropped at once), or returns nil at once when
// none was met; likely, not certainly, free for the next write.
func (db *DB) WaitForLock(ctx context.Context) error {
	pk := db.contended.Swap(0)
	if pk == 0 {
		return db.check(ctx)
	}
	return db.view1(ctx, "wait for session lock", func(tx *sqlx.Tx) error {
		_, err := tx.ExecContext(ctx, `SELECT 1 FROM sessions WHERE pk = $1 FOR KEY SHARE`, pk)
		return err
	})
}

// view1 runs fn once in a read-write READ COMMITTED transaction that
// writes nothing (a FOR ... lock needs one), without retries.
func (db *DB) view1(ctx context.Context, op string, fn func(tx *sqlx.Tx) error) error {
	if err := db.check(ctx); err != nil {
		return err
	}
	if err := db.runTx(ctx, nil, fn); err != nil {
		return fmt.Errorf("%s: %w", op, storageErr(err))
	}
	return nil
}

// ReadOnly implements [sessiontree.Database.ReadOnly]: a PostgreSQL
// database is always opened for writing (the server's grants decide the
// rest), so it returns nil. A write the server refuses (a role that may
// only read, a read-only transaction) fails with
// [sessiontree.ErrReadOnly]; so does [Open] when a migration is pending.
func (db *DB) ReadOnly() error { return nil }

// OpenSession implements [sessiontree.Database.OpenSession] with
// [DB.OpenStorage].
func (db *DB) OpenSession(ctx context.Context, id string) (sessiontree.DatabaseSession, error) {
	st, err := db.OpenStorage(ctx, id)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// Session implements [sessiontree.DatabaseTx.Session]: it opens session
// id as the transaction sees it.
func (tx *Tx) Session(id string) (sessiontree.DatabaseSession, error) {
	st, err := openStorage(tx.ctx, tx.db, tx.tx, id)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// openStorage reads session id's header through q.
func openStorage(ctx context.Context, db *DB, q sqlx.QueryerContext, id string) (*Storage, error) {
	var row struct {
		PK            int64          `db:"pk"`
		Version       int            `db:"version"`
		CreatedAt     string         `db:"created_at"`
		Cwd           string         `db:"cwd"`
		ParentSession sql.NullString `db:"parent_session"`
	}
	if !storableText(id) {
		return nil, &SessionNotFoundError{ID: id} // the server would refuse the text
	}
	err := sqlx.GetContext(ctx, q, &row, `SELECT pk, version, created_at, cwd, parent_session FROM sessions
		WHERE id = $1 AND NOT deleting`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &SessionNotFoundError{ID: id}
	}
	if err != nil {
		return nil, fmt.Errorf("open session %s: %w", id, storageErr(err))
	}
	meta := sessiontree.SessionMeta{ID: id, Version: row.Version, CreatedAt: row.CreatedAt, Cwd: row.Cwd, ParentSession: row.ParentSession.String}
	return &Storage{db: db, pk: row.PK, meta: meta}, nil
}

// codeLockNotAvailable is PostgreSQL's refusal of a lock under NOWAIT or
// lock_timeout.
const codeLockNotAvailable = "55P03"

// codeQueryCanceled is PostgreSQL's cancel of a statement: the server's
// statement_timeout (or an administrator's pg_cancel_backend; pgx ends a
// statement whose context ended otherwise, by the socket's deadline).
const codeQueryCanceled = "57014"

// lockWaitErr is the error of a statement that waits for a session row's
// lock: one the server ended for waiting longer than its statement_timeout
// allows is the session held by another writer too long, as lock_timeout's
// refusal (55P03) is, and matches sessiontree.ErrLocked, as a wait past
// SQLite's busy timeout does, rather than a storage failure.
func lockWaitErr(err error) error {
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == codeQueryCanceled {
		return fmt.Errorf("%w: %w", sessiontree.ErrLocked, err)
	}
	return err
}

// isLockNotAvailable reports whether err is a lock TryUpdate did not get.
func isLockNotAvailable(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == codeLockNotAvailable
}
