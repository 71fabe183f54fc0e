package pgengine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/migrate"
)

// now is the clock; tests replace it.
var now = time.Now

// Options configure [Open]. The zero value works.
type Options struct {
	// MaxConns bounds the pool of connections to the server; 0 means 16.
	MaxConns int
	// Attempts bounds how many times a write is tried when it meets a
	// deadlock, a serialization failure or a lost connection; 0 means 5.
	Attempts int
	// Now is the clock writer claims' leases run on (claim.go); nil
	// means time.Now. Every process sharing a database should agree on
	// the time: a lease is a time, not a lock held by a connection.
	Now func() time.Time

	// batchRows, when set, is how many rows a batch sends a statement
	// (batch.go's batchRows); tests make it small.
	batchRows int
}

func (o Options) maxConns() int { return cmp.Or(o.MaxConns, 16) }
func (o Options) attempts() int { return cmp.Or(o.Attempts, 5) }

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// DB is a PostgreSQL database of sessions. It is safe for concurrent use.
type DB struct {
	db     *sqlx.DB
	url    string
	cfg    *pgx.ConnConfig // every connection's (connConfig), copied for each watch
	name   string          // the URL without its password, for messages
	opts   Options
	closed atomic.Bool
	// contended is the key of the session whose row lock the last
	// TryUpdate did not get, for WaitForLock; 0 when none.
	contended atomic.Int64
	// bulk counts the entries batches stored, for analyzeAfterBulk.
	bulk bulkRows
	// txConns maps each transaction of runTx in progress to its
	// connection (rawOf).
	txConns sync.Map
	// group is the queue of pipelined appends (group.go).
	group groupCommit
}

// Open connects to the database at url (postgres:// or postgresql://, or
// a key=value connection string) and brings its schema up to date. A
// database whose schema is newer than this code is refused
// (migrate.ErrNewer). What an older engine derived from entries by rules
// since fixed (usage rows counted on another day, names, labels,
// breakdown keys) is computed again first (redoDerived). Every
// connection it opens has a bound on a network that stops answering
// (keepalives, TCP_USER_TIMEOUT: dial.go), which libpq's parameters in
// url override. When the role may set the server's commit_delay and
// nobody chose one, the pool's connections set it, so that writers in
// different processes share WAL flushes (commitdelay.go); a
// commit_delay in url is set as given, and a server that refuses it
// fails Open with a [*SettingError].
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	cfg, err := connConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open PostgreSQL database: %w", err)
	}
	cd := newCommitDelay(cfg)
	sqldb := stdlib.OpenDB(*cfg, stdlib.OptionBeforeConnect(cd.beforeConnect), stdlib.OptionAfterConnect(cd.afterConnect))
	sqldb.SetMaxOpenConns(opts.maxConns())
	sqldb.SetMaxIdleConns(opts.maxConns())
	db := &DB{db: sqlx.NewDb(sqldb, "pgx"), url: url, cfg: cfg, name: redact(url), opts: opts}
	if err := db.connect(ctx); err != nil {
		_ = sqldb.Close()
		return nil, fmt.Errorf("open %s: %w", db.name, err)
	}
	if err := db.migrate(ctx); err != nil {
		_ = sqldb.Close()
		return nil, fmt.Errorf("open %s: %w", db.name, err)
	}
	if err := db.afterMigrations(ctx); err != nil {
		_ = sqldb.Close()
		return nil, fmt.Errorf("open %s: %w", db.name, err)
	}
	return db, nil
}

// connect makes the pool's first connection, tried again as a lost one
// is, so that a server that cannot be reached, or that refuses the role
// or has no such database, fails the Open as that, naming the server,
// rather than as the first statement sent (reading the migration
// records). The connection stays in the pool for the migrations.
func (db *DB) connect(ctx context.Context) error {
	return db.retryWhen(ctx, "", lostConnection, func() error {
		c, err := db.db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("connect to the server at %s: %w", serverAddr(db.cfg), err)
		}
		return c.Close()
	})
}

// serverAddr names the server cfg connects to: host:port, or the socket
// file of a host that is a folder.
func serverAddr(cfg *pgx.ConnConfig) string {
	port := strconv.Itoa(int(cfg.Port))
	if strings.HasPrefix(cfg.Host, "/") {
		return cfg.Host + "/.s.PGSQL." + port
	}
	return net.JoinHostPort(cfg.Host, port)
}

// migrate brings the schema up to date (migrate.Up), tried again when a
// connection is lost (lostConnection), as often as a write is: even at a
// step's COMMIT, whose outcome is then unknown, since each step runs in
// one transaction under the migrations' advisory lock and reads the
// applied versions again under it, so a step that did commit is found
// recorded and skipped, and one that did not is applied whole.
func (db *DB) migrate(ctx context.Context) error {
	return db.retryWhen(ctx, "", lostConnection, func() error {
		_, err := migrate.Up(ctx, db.db, migrate.PostgresFiles, migrate.Options{Dialect: migrate.Postgres})
		if isLockNotAvailable(err) {
			err = &migrationLockError{err}
		}
		return err
	})
}

// migrationLockError is a migration step whose statement waited for a
// table lock longer than the server's lock_timeout allows: another
// transaction holds a table the step changes. It matches
// sessiontree.ErrLocked (open again once that transaction ends), whose
// own words, about a session held by another writer, would mislead.
type migrationLockError struct{ err error }

func (e *migrationLockError) Error() string {
	return "the schema migration waited for a lock longer than the server's lock_timeout allows (another transaction holds a table it changes): " + e.err.Error()
}

func (e *migrationLockError) Unwrap() []error { return []error{sessiontree.ErrLocked, e.err} }

// afterMigrations does what the migrations leave to Go: the derived
// values to compute again (redoDerived) and the header checksums to fill
// (fillHeaderChecksums). With nothing to do, the common case, it costs
// one read (tried again when its connection is lost, as every read of
// one statement on the pool is). A database this Open may not write
// keeps its header sums to fill for the next Open that may: such a
// header reads as not yet summed (migration 19: an older engine of the
// fleet creates such sessions), while a derived value left wrong would
// not read right, so the redo's refusal fails the Open.
func (db *DB) afterMigrations(ctx context.Context) error {
	var pending struct {
		Redo bool `db:"redo"`
		Fill bool `db:"fill"`
	}
	err := db.read(ctx, func(q sqlx.ExtContext) error {
		return sqlx.GetContext(ctx, q, &pending, `SELECT EXISTS (SELECT 1 FROM derived_redo) AS redo,
			EXISTS (SELECT 1 FROM header_checksum_fill) AS fill`)
	})
	if err != nil {
		return fmt.Errorf("after the migrations: %w", storageErr(err))
	}
	if pending.Redo {
		if err := db.redoDerived(ctx); err != nil {
			return err
		}
	}
	if pending.Fill {
		if err := db.fillHeaderChecksums(ctx, headerFillBatch); !errors.Is(err, sessiontree.ErrReadOnly) {
			return err
		}
	}
	return nil
}

// redact drops the passwords from a URL for messages: the role's (in
// the user part or as a parameter) and the client key's (sslpassword). A
// key=value connection string is not shown at all: it may hold them too.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		return "PostgreSQL database"
	}
	q := u.Query()
	for _, secret := range []string{"password", "sslpassword"} {
		if q.Has(secret) {
			q.Set(secret, "xxxxx")
			u.RawQuery = q.Encode()
		}
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	return u.String()
}

// ServerSetting returns the server setting name (current_setting) as a
// connection of db's pool has it: commit_delay and commit_siblings say
// whether the engine asked for a commit delay (see [Open]).
func (db *DB) ServerSetting(ctx context.Context, name string) (string, error) {
	var v string
	err := db.read(ctx, func(q sqlx.ExtContext) error {
		return sqlx.GetContext(ctx, q, &v, `SELECT current_setting($1)`, name)
	})
	if err != nil {
		return "", fmt.Errorf("server setting %s: %w", name, err)
	}
	return v, nil
}

// Path names the database for messages: its URL without the password.
func (db *DB) Path() string { return db.name }

// URL returns the URL db was opened with, password included, to open it
// again.
func (db *DB) URL() string { return db.url }

// Close closes the pool; sessions opened from db stop working.
func (db *DB) Close() error {
	if db.closed.Swap(true) {
		return nil
	}
	return db.db.Close()
}

// check returns ErrClosed after Close, and ctx's error.
func (db *DB) check(ctx context.Context) error {
	if db.closed.Load() {
		return sessiontree.ErrClosed
	}
	return ctx.Err()
}

// SessionNotFoundError reports a session id the database does not hold:
// the root package's, as on SQLite, so that errors.As finds it whatever
// the engine. It matches [sessiontree.ErrNotFound].
type SessionNotFoundError = sessiontree.SessionNotFoundError

// CreateSession adds an empty session and opens it. An empty meta.ID gets
// a fresh UUID v7, an empty CreatedAt the current time, a zero Version 3.
// An id in use is refused with [sessiontree.ErrConflict].
func (db *DB) CreateSession(ctx context.Context, meta sessiontree.SessionMeta) (*Storage, error) {
	var st *Storage
	err := db.update(ctx, "create session "+meta.ID, func(tx *sqlx.Tx) (err error) {
		st, err = createSession(ctx, db, tx, meta, nil)
		return err
	})
	return st, err
}

// OpenStorage opens session id. One that does not exist (or is being
// deleted) is a [SessionNotFoundError].
func (db *DB) OpenStorage(ctx context.Context, id string) (*Storage, error) {
	if err := db.check(ctx); err != nil {
		return nil, err
	}
	return openStorage(ctx, db, db.db, id)
}

// DeleteSession deletes a session and everything it owns. One that does
// not exist is a [SessionNotFoundError]; one another holder has a live
// claim on is a [*sessiontree.ClaimedError] (sessiontree.CheckDelete),
// checked under the session row's lock, which every write to the
// session takes too, unless opts.Force.
func (db *DB) DeleteSession(ctx context.Context, id string, opts sessiontree.DeleteOptions) error {
	return db.update(ctx, "delete session "+id, func(tx *sqlx.Tx) error { return deleteSession(ctx, tx, id, db.opts.now(), opts) })
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
