package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"unsafe"

	"modernc.org/sqlite"
)

// The engine runs its own statements below database/sql. A DB's pools are
// made by a connector that wraps each of modernc's connections in a conn,
// which keeps the statements the engine prepared on it; the engine reaches
// the conn through sql.Conn.Raw and runs them with driver values. That
// skips, per statement, database/sql's wrapping of a prepared statement
// into the transaction, its argument conversion and locking, and per row
// its locking and second copy of every value: on the hot paths these cost
// as much as SQLite itself (see bench_test.go). database/sql still owns
// the pools, and the transactions of DB.Update and DB.View, whose callers
// use its API.

// connector opens the connections of a pool: modernc's, opened by the
// DB's own driver (see newDriver), wrapped in a conn.
type connector struct {
	drv *sqlite.Driver
	dsn string
	// walVFS: the dsn names walVFS (walbuf.go), which the first
	// connection registers, so that a process that only reads never
	// pays for it.
	walVFS bool

	// noCache makes its connections prepare every statement afresh: the
	// other side of the statement cache's A/B benchmark.
	noCache atomic.Bool

	// prepared counts the statements its connections have compiled,
	// the engine's and database/sql's: what start-up costs, which tests
	// pin (open_internal_test.go).
	prepared atomic.Int64
}

func newConnector(drv *sqlite.Driver, dsn string) *connector {
	return &connector{drv: drv, dsn: dsn}
}

// Connect opens a connection.
func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.walVFS {
		if err := registerWALVFS(); err != nil {
			return nil, err
		}
	}
	dc, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return &conn{Conn: dc, noCache: &c.noCache, prepared: &c.prepared}, nil
}

// Driver returns the driver the connections come from.
func (c *connector) Driver() driver.Driver { return c.drv }

// innerConn is what modernc's connections implement and a conn forwards,
// so that database/sql uses them as it would use modernc's own.
type innerConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// conn is one connection of a pool. Only the goroutine holding it (through
// database/sql) uses it, so its fields need no lock.
type conn struct {
	driver.Conn

	stmts    map[string]*cachedStmt
	noCache  *atomic.Bool        // the connector's: keep no statement
	prepared *atomic.Int64       // the connector's count of statements compiled
	args     []driver.NamedValue // scratch for binding; drivers do not keep it

	// On the write connection: the heads of the sessions this connection
	// wrote last (see head), valid while version is the database's data
	// version, which changes when another connection commits.
	heads   map[int64]head
	version uint32
	pending *pendingHead // a head to remember once the transaction commits
	// execs counts the statements exec has run without error: a group
	// tells by it whether an append that failed had written (group.go).
	execs int64

	broken bool // a transaction could not be ended: the pool must discard it
}

type pendingHead struct {
	session int64
	h       head
}

type cachedStmt struct {
	driver.Stmt
	busy bool // its rows are open
}

func (c *conn) inner() innerConn { return c.Conn.(innerConn) }

// Unwrap returns modernc's connection (sqlite.Limit and others look for it).
func (c *conn) Unwrap() driver.Conn { return c.Conn }

// BeginTx forwards to the driver.
func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	c.forget()
	return c.inner().BeginTx(ctx, opts)
}

// PrepareContext forwards to the driver.
func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	c.prepared.Add(1)
	return c.inner().PrepareContext(ctx, query)
}

// ExecContext forwards to the driver, which compiles the statement.
func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	c.forget()
	c.prepared.Add(1)
	return c.inner().ExecContext(ctx, query, args)
}

// QueryContext forwards to the driver, which compiles the statement.
func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	c.prepared.Add(1)
	return c.inner().QueryContext(ctx, query, args)
}

// Ping forwards to the driver.
func (c *conn) Ping(ctx context.Context) error { return c.inner().Ping(ctx) }

// ResetSession forwards to the driver.
func (c *conn) ResetSession(ctx context.Context) error {
	if c.broken {
		return driver.ErrBadConn
	}
	return c.inner().ResetSession(ctx)
}

// IsValid forwards to the driver.
func (c *conn) IsValid() bool { return !c.broken && c.inner().IsValid() }

// Close closes the engine's statements, then the connection.
func (c *conn) Close() error {
	var errs []error
	for _, s := range c.stmts {
		errs = append(errs, s.Close())
	}
	c.stmts = nil
	errs = append(errs, c.Conn.Close())
	return errors.Join(errs...)
}

// forget drops the remembered heads: database/sql is about to run SQL of a
// caller's own on this connection, which may change any session.
func (c *conn) forget() {
	clear(c.heads)
	c.pending = nil
}

// dataVersion is SQLite's data version of the main database: it changes
// with every commit, this connection's or another's (read at the start of
// a transaction).
func (c *conn) dataVersion() (uint32, bool) {
	fc, ok := c.Conn.(sqlite.FileControl)
	if !ok {
		return 0, false
	}
	v, err := fc.FileControlDataVersion("main")
	return v, err == nil
}

// stmt returns the prepared statement for query. A statement whose rows
// are still open is not shared: the caller gets a fresh one that its rows
// close (oneOff), as it does when the connector keeps no statements.
//
// The cache is kept because it pays, measured in one run against preparing
// every statement (what modernc does for a statement run without one)
// and, for the reads, against database/sql's own prepared statements
// through sqlx (BenchmarkStmtCacheAB, CPU per operation, median of 8;
// issue 14):
//
//	                         cache    no cache   database/sql (sqlx)
//	append (one entry)       121µs     229µs     -
//	entry by id              18.2µs    27.8µs    21.3µs
//	context (201 entries)    746µs     822µs     1157µs (plain columns)
//
// It holds one statement per query text the engine runs, a fixed set
// (queries.go and a few more), so it needs no bound; it lives and dies
// with its connection, and a statement never depends on data, so no write
// makes it stale.
func (c *conn) stmt(ctx context.Context, query string) (s *cachedStmt, oneOff bool, err error) {
	cs, ok := c.stmts[query]
	if ok && !cs.busy && !c.noCache.Load() {
		return cs, false, nil
	}
	ds, err := c.PrepareContext(ctx, query)
	if err != nil {
		return nil, false, err
	}
	if ok || c.noCache.Load() {
		return &cachedStmt{Stmt: ds}, true, nil
	}
	if c.stmts == nil {
		c.stmts = map[string]*cachedStmt{}
	}
	cs = &cachedStmt{Stmt: ds}
	c.stmts[query] = cs
	return cs, false, nil
}

// bind converts args to driver values in the connection's scratch slice.
func (c *conn) bind(args []any) ([]driver.NamedValue, error) {
	nv := c.args[:0]
	for i, a := range args {
		v, err := driverValue(a)
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i+1, err)
		}
		nv = append(nv, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	c.args = nv
	return nv, nil
}

// text returns b as a string without copying it, to bind as TEXT: the
// driver copies a bound string into SQLite's memory when it binds it, and
// the JSON of an entry is not changed while the engine holds it (see
// sessiontree.Entry: do not modify Raw after handing it to a backend). It
// spares a copy of every entry's JSON, which may be megabytes.
func text(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func driverValue(a any) (driver.Value, error) {
	switch v := a.(type) {
	case nil, int64, float64, bool, []byte, string:
		return v, nil
	case int:
		return int64(v), nil
	case sql.NullInt64:
		if !v.Valid {
			return nil, nil
		}
		return v.Int64, nil
	case sql.NullString:
		if !v.Valid {
			return nil, nil
		}
		return v.String, nil
	}
	return driver.DefaultParameterConverter.ConvertValue(a)
}

// exec runs a statement that returns no rows.
func (c *conn) exec(ctx context.Context, query string, args ...any) (driver.Result, error) {
	s, oneOff, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if oneOff {
		defer s.Close()
	}
	nv, err := c.bind(args)
	if err != nil {
		return nil, err
	}
	res, err := s.Stmt.(driver.StmtExecContext).ExecContext(ctx, nv)
	if err == nil {
		c.execs++
	}
	return res, err
}

// query runs a statement that returns rows; close them.
func (c *conn) query(ctx context.Context, query string, args ...any) (*rows, error) {
	s, oneOff, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	nv, err := c.bind(args)
	if err == nil {
		var dr driver.Rows
		dr, err = s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, nv)
		if err == nil {
			s.busy = !oneOff
			return &rows{r: dr, dest: make([]driver.Value, len(dr.Columns())), stmt: s, oneOff: oneOff}, nil
		}
	}
	if oneOff {
		s.Close()
	}
	return nil, err
}

// row runs a query expected to return one row and scans it into dest;
// sql.ErrNoRows reports none.
func (c *conn) row(ctx context.Context, query string, args []any, dest ...any) error {
	r, err := c.query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer r.Close()
	if !r.Next() {
		if err := r.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := r.Scan(dest...); err != nil {
		return err
	}
	return r.Close()
}

// rows iterates a query's result, as sql.Rows does. The values a row holds
// are the driver's own copies, fresh for each row, so Scan into
// *sql.RawBytes or *[]byte hands them over without copying again.
type rows struct {
	r      driver.Rows
	dest   []driver.Value
	stmt   *cachedStmt
	oneOff bool
	err    error
	done   bool
}

// Next advances to the next row; false at the end or on an error (see Err).
func (r *rows) Next() bool {
	if r.done {
		return false
	}
	if err := r.r.Next(r.dest); err != nil {
		if err != io.EOF {
			r.err = err
		}
		r.close()
		return false
	}
	return true
}

// Err returns the error that ended the iteration, if any.
func (r *rows) Err() error { return r.err }

// Close releases the rows; it is safe to call more than once.
func (r *rows) Close() error {
	r.close()
	return r.err
}

func (r *rows) close() {
	if r.done {
		return
	}
	r.done = true
	if err := r.r.Close(); err != nil && r.err == nil {
		r.err = err
	}
	if r.oneOff {
		r.stmt.Close()
	} else {
		r.stmt.busy = false
	}
}

// Scan copies the current row's columns into dest.
func (r *rows) Scan(dest ...any) error {
	if len(dest) != len(r.dest) {
		return fmt.Errorf("scan: %d destinations for %d columns", len(dest), len(r.dest))
	}
	for i, d := range dest {
		if err := assign(d, r.dest[i]); err != nil {
			return fmt.Errorf("scan column %d: %w", i, err)
		}
	}
	return nil
}

// assign stores a driver value (nil, int64, float64, string or []byte from
// modernc) into a destination of the kinds the engine scans into.
func assign(dest any, v driver.Value) error {
	switch d := dest.(type) {
	case *int64:
		return assignInt(d, v)
	case *int:
		var n int64
		if err := assignInt(&n, v); err != nil {
			return err
		}
		*d = int(n)
		return nil
	case *int32:
		var n int64
		if err := assignInt(&n, v); err != nil {
			return err
		}
		*d = int32(n)
		return nil
	case *bool:
		var n int64
		if err := assignInt(&n, v); err != nil {
			return err
		}
		*d = n != 0
		return nil
	case *float64:
		switch x := v.(type) {
		case float64:
			*d = x
		case int64:
			*d = float64(x)
		default:
			return fmt.Errorf("cannot store %T in *float64", v)
		}
		return nil
	case *string:
		switch x := v.(type) {
		case string:
			*d = x
		case []byte:
			*d = string(x)
		case int64:
			*d = strconv.FormatInt(x, 10)
		default:
			return fmt.Errorf("cannot store %T in *string", v)
		}
		return nil
	case *sql.RawBytes:
		b, err := bytesOf(v)
		*d = b
		return err
	case *[]byte:
		b, err := bytesOf(v)
		*d = b
		return err
	case *sql.NullInt64:
		if v == nil {
			*d = sql.NullInt64{}
			return nil
		}
		d.Valid = true
		return assignInt(&d.Int64, v)
	case *sql.NullString:
		if v == nil {
			*d = sql.NullString{}
			return nil
		}
		d.Valid = true
		return assign(&d.String, v)
	case *any:
		*d = v
		return nil
	}
	return fmt.Errorf("unsupported destination %T", dest)
}

func assignInt(d *int64, v driver.Value) error {
	switch x := v.(type) {
	case int64:
		*d = x
	case float64:
		*d = int64(x)
	case bool:
		*d = 0
		if x {
			*d = 1
		}
	default:
		return fmt.Errorf("cannot store %T in an integer", v)
	}
	return nil
}

// bytesOf returns the bytes of a text or blob value; a string is copied
// (its memory must not become mutable), a []byte is handed over.
func bytesOf(v driver.Value) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []byte:
		return x, nil
	case string:
		return []byte(x), nil
	}
	return nil, fmt.Errorf("cannot store %T in bytes", v)
}
