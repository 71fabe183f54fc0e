package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"

	"github.com/sessiontree/sessiontree"
)

// q runs the engine's statements on one held connection, inside a
// transaction or not.
//
// Statements that may run long (scans, bulk writes) run under ctx, so that
// its cancellation interrupts them. Those bounded to a few rows run under
// short, which is ctx without its cancellation (checked before and after):
// watching a context costs the driver a goroutine per statement, more than
// such a statement itself. Single-row queries are always short; exec is
// when bounded is set (the append paths).
type q struct {
	ctx     context.Context
	short   context.Context
	db      *DB
	c       *conn
	write   bool
	bounded bool
}

func newQ(ctx context.Context, db *DB, c *conn, write bool) q {
	return q{ctx: ctx, short: context.WithoutCancel(ctx), db: db, c: c, write: write}
}

// row runs a query expected to return one row and scans it into dest;
// sql.ErrNoRows reports none.
func (x q) row(query string, args []any, dest ...any) error {
	return x.fenced(x.c.row(x.short, query, args, dest...))
}

// rows runs a query; close the rows.
func (x q) rows(query string, args ...any) (*rows, error) {
	return x.c.query(x.ctx, query, args...)
}

func (x q) exec(query string, args ...any) (driver.Result, error) {
	ctx := x.ctx
	if x.bounded {
		ctx = x.short
	}
	res, err := x.c.exec(ctx, query, args...)
	return res, x.fenced(err)
}

// fenced is err of a statement of a write transaction, [ErrNewer] when
// the schema fence refused it (see fenced).
func (x q) fenced(err error) error {
	if err == nil || !x.write {
		return err
	}
	return fenced(x.short, err, func(ctx context.Context) (v int64, err error) { return v, x.c.row(ctx, qUserVersion, nil, &v) })
}

func args(a ...any) []any { return a }

// withConn runs fn on a connection of pool p, held for the call.
func withConn(ctx context.Context, p *sql.DB, fn func(c *conn) error) error {
	sc, err := p.Conn(ctx)
	if err != nil {
		return err
	}
	defer sc.Close()
	return sc.Raw(func(dc any) error { return fn(dc.(*conn)) })
}

const (
	qBegin          = `BEGIN`
	qBeginImmediate = `BEGIN IMMEDIATE`
	qCommit         = `COMMIT`
	qRollback       = `ROLLBACK`
)

// update runs fn in a write transaction (BEGIN IMMEDIATE) and commits when
// it returns nil; an error or a panic rolls back. Busy errors are retried
// with a bound (see [DB.retry]), so fn must be safe to run again. fn may
// leave the head of the session it wrote in w.c.pending, to be
// remembered once the transaction commits (see [q.head]); keep says that
// heads remembered before stay valid through fn, which is true only of
// the engine's own session writes.
func (db *DB) update(ctx context.Context, keep bool, fn func(w q) error) error {
	if db.closed.Load() {
		return sessiontree.ErrClosed
	}
	if db.ro != nil {
		return db.ro
	}
	return db.retry(ctx, func() error {
		return withConn(ctx, db.w.DB, func(c *conn) error { return db.updateOnce(ctx, c, keep, fn) })
	})
}

func (db *DB) updateOnce(ctx context.Context, c *conn, keep bool, fn func(w q) error) (err error) {
	if err := c.begin(ctx, qBeginImmediate); err != nil {
		return err
	}
	// The heads remembered are those this connection wrote; the data
	// version tells whether anyone else has written since.
	if v, ok := c.dataVersion(); !keep || !ok || v != c.version {
		c.forget()
	}
	committed := false
	defer func() {
		if !committed {
			c.pending = nil
			c.rollback()
		}
	}()
	w := newQ(ctx, db, c, true)
	if err := fn(w); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := c.exec(w.short, qCommit); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	committed = true
	db.committed(c)
	if p := c.pending; p != nil {
		if c.heads == nil {
			c.heads = map[int64]head{}
		}
		c.heads[p.session] = p.h
		c.pending = nil
	}
	if v, ok := c.dataVersion(); ok {
		c.version = v
	} else {
		c.forget()
	}
	return nil
}

// begin runs the BEGIN statement query on c. The driver returns the
// error of a context that ended while a statement ran even when the
// statement did run, so a BEGIN that failed may have begun: on any error
// the transaction, if one is open, is rolled back, so that the connection
// never goes back to its pool inside one (where every later BEGIN on it
// failed, and the write connection kept the file's write lock from other
// processes).
func (c *conn) begin(ctx context.Context, query string) error {
	if _, err := c.exec(ctx, query); err != nil {
		c.rollback()
		return fmt.Errorf("begin: %w", err)
	}
	return nil
}

// rollback ends the connection's transaction, if one is open. A
// connection that cannot be rolled back is marked broken, so that the
// pool discards it rather than hand out a connection inside a
// transaction.
func (c *conn) rollback() {
	c.forget()
	if _, err := c.exec(context.Background(), qRollback); err != nil &&
		!strings.Contains(err.Error(), "no transaction is active") {
		c.broken = true
	}
}

// view runs fn in a read transaction: every query in it sees one snapshot.
func (db *DB) view(ctx context.Context, fn func(r q) error) error {
	if db.closed.Load() {
		return sessiontree.ErrClosed
	}
	return db.retry(ctx, func() error {
		return withConn(ctx, db.r.DB, func(c *conn) error {
			return inView(ctx, c, func(c *conn) error { return fn(newQ(ctx, db, c, false)) })
		})
	})
}

// inView runs fn in a read transaction on c.
func inView(ctx context.Context, c *conn, fn func(c *conn) error) error {
	if err := c.begin(ctx, qBegin); err != nil {
		return err
	}
	defer c.rollback()
	return fn(c)
}

// read runs fn with single statements on a read connection.
func (db *DB) read(ctx context.Context, fn func(r q) error) error {
	if db.closed.Load() {
		return sessiontree.ErrClosed
	}
	return db.retry(ctx, func() error {
		return withConn(ctx, db.r.DB, func(c *conn) error { return fn(newQ(ctx, db, c, false)) })
	})
}
