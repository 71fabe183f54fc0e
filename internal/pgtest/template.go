package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for migrate
	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree/migrate"
)

// Template is a database made once per test binary, on first use, by its
// prepare function; each test gets a copy. A copy a test has finished
// with is reset (see [Template.Database]) and handed to the next test
// instead of being dropped, when the test left its schema as the template
// has it. mu guards spare.
type Template struct {
	prepare func(ctx context.Context, url string) error

	once     sync.Once
	name     string // the template database's name
	shape    *shape // what a reset needs to know of it; nil: copies are dropped
	strategy string // copyStrategy's clause for this server
	err      error

	mu    sync.Mutex
	spare []string             // reset copies waiting for a test
	conns map[string]*pgx.Conn // the connection each spare copy was reset on
}

// NewTemplate returns a template that prepare fills (migrates, for an
// engine) given its URL. prepare must close its connections: a database
// with connections cannot be copied.
func NewTemplate(prepare func(ctx context.Context, url string) error) *Template {
	return &Template{prepare: prepare, conns: map[string]*pgx.Conn{}}
}

// Migrated is an empty database with the PostgreSQL engine's schema
// (migrate.PostgresFiles, which pgengine.Open applies), made once per
// test binary: the one database the engine's, the store's and the
// command's tests start from.
var Migrated = NewTemplate(func(ctx context.Context, url string) error {
	db, err := sqlx.Open("pgx", url)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = migrate.Up(ctx, db, migrate.PostgresFiles, migrate.Options{Dialect: migrate.Postgres})
	return err
})

// URL returns the server's URL for tb, or skips tb when there is no
// server; under CI=true a missing server fails tb instead. In a test
// binary that called [SkipPostgresUnderShort] it skips tb under -short.
func URL(tb testing.TB) string {
	tb.Helper()
	if skipUnderShort && testing.Short() {
		tb.Skip("PostgreSQL: this test runs on the second engine without -short (the quick loop runs it on SQLite alone)")
	}
	url, err := server()
	if err != nil {
		noServer(tb, err)
	}
	return url
}

// noServer skips tb, which needs a server there is not (err says why);
// under CI=true it fails tb instead.
func noServer(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf("PostgreSQL is needed under CI=true: %v", err)
	}
	tb.Skipf("no PostgreSQL: %v", err)
}

// Database returns the URL of a database of tb's own holding what the
// template holds: a new copy (CREATE DATABASE ... TEMPLATE), or a copy an
// earlier test finished with and that was reset. When tb ends, its
// connections are ended and the copy is reset for the next test if its
// schema is still the template's (tables, columns, indexes, constraints,
// triggers and whether they are enabled, functions, views, types,
// extensions, the database's settings) and the tables the template filled
// hold the same rows: the other tables are emptied and the sequences set
// back. Otherwise it is dropped. Resetting takes a third of the time of a
// new copy and its drop.
func (t *Template) Database(tb testing.TB) string {
	tb.Helper()
	server := URL(tb)
	t.once.Do(func() {
		if t.name, t.shape, t.err = t.make(server); t.err == nil {
			t.strategy, t.err = copyStrategy(context.Background(), server)
		}
	})
	if t.err != nil {
		tb.Fatalf("template database: %v", t.err)
	}
	name, err := t.take(context.Background(), server)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := t.give(context.Background(), server, name); err != nil {
			tb.Errorf("drop test database: %v", err)
		}
	})
	return WithDatabase(server, name)
}

// take returns the name of a spare copy, or of a new one.
func (t *Template) take(ctx context.Context, server string) (string, error) {
	t.mu.Lock()
	if n := len(t.spare); n > 0 {
		name := t.spare[n-1]
		t.spare = t.spare[:n-1]
		t.mu.Unlock()
		return name, nil
	}
	t.mu.Unlock()
	name := uniqueName("t")
	return name, admin(ctx, server, `CREATE DATABASE `+name+` TEMPLATE `+t.name+t.strategy)
}

// give resets the copy name for the next test, or drops it when it cannot
// be reset.
func (t *Template) give(ctx context.Context, server, name string) error {
	if t.shape != nil {
		if conn := t.resetConn(ctx, server, name); conn != nil {
			if t.shape.reset(ctx, conn) {
				t.mu.Lock()
				t.spare = append(t.spare, name)
				if len(t.conns) < maxKept {
					t.conns[name], conn = conn, nil
				}
				t.mu.Unlock()
				if conn != nil {
					conn.Close(context.Background())
				}
				return nil
			}
			conn.Close(context.Background())
		}
	}
	return admin(ctx, server, `DROP DATABASE `+name+` WITH (FORCE)`)
}

// maxKept bounds the connections a Template keeps (resetConn), so that
// they leave the server's connections (max_connections) to the tests:
// about as many copies as the tests use at once.
const maxKept = 16

// resetConn returns a connection to the copy name to reset it on: the one
// its last reset ran on, kept open through the test since (an idle
// backend of the copy's, which holds no lock), when it still answers; else
// a new one; nil when none can be made. A kept connection has its caches
// filled: a reset on it costs a fraction of one on a new backend, which
// reads the catalog afresh for every table the reset looks at.
func (t *Template) resetConn(ctx context.Context, server, name string) *pgx.Conn {
	t.mu.Lock()
	conn := t.conns[name]
	delete(t.conns, name)
	t.mu.Unlock()
	if conn != nil && conn.Ping(ctx) == nil {
		return conn
	}
	if conn != nil {
		conn.Close(context.Background())
	}
	conn, err := pgx.Connect(ctx, WithDatabase(server, name))
	if err != nil {
		return nil
	}
	return conn
}

// make creates and prepares the template database. It stays until the
// server goes, with the spare copies; on a server of
// SESSIONTREE_TEST_POSTGRES, those left by earlier binaries are dropped
// by the next .ci/run (a new cluster).
func (t *Template) make(server string) (string, *shape, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := uniqueName("tmpl")
	if err := admin(ctx, server, `CREATE DATABASE `+name); err != nil {
		return "", nil, err
	}
	url := WithDatabase(server, name)
	if err := t.prepare(ctx, url); err != nil {
		return "", nil, fmt.Errorf("prepare %s: %w", name, err)
	}
	sh, err := readShape(ctx, url)
	if err != nil {
		return "", nil, fmt.Errorf("read %s: %w", name, err)
	}
	return name, sh, nil
}

// WithDatabase returns server's URL naming database name instead.
func WithDatabase(server, name string) string {
	u, err := url.Parse(server)
	if err != nil {
		return server // pgx will report the bad URL
	}
	u.Path = "/" + name
	return u.String()
}

// admin runs one statement on the server's maintenance connection.
func admin(ctx context.Context, server, stmt string) error {
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return fmt.Errorf("connect to test server: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("%s: %w", stmt, err)
	}
	return nil
}

// copyStrategy returns the clause that has CREATE DATABASE ... TEMPLATE
// copy the template's files (STRATEGY FILE_COPY) on a server that can
// and whose fsync is off, as a test server's is; "" otherwise. Since
// PostgreSQL 15 a copy writes every page through the write-ahead log by
// default (WAL_LOG), which took 100-110 ms a copy on a 2-core machine
// where copying the files took 30-60 ms; FILE_COPY starts a checkpoint
// first, which costs little when nothing is synced to the disk, and
// older servers copy files anyway (and know no STRATEGY).
func copyStrategy(ctx context.Context, server string) (string, error) {
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return "", fmt.Errorf("connect to test server: %w", err)
	}
	defer conn.Close(context.Background())
	var fileCopy bool
	err = conn.QueryRow(ctx, `SELECT current_setting('server_version_num')::int >= 150000 AND NOT current_setting('fsync')::bool`).Scan(&fileCopy)
	if err != nil || !fileCopy {
		return "", err
	}
	return " STRATEGY FILE_COPY", nil
}

// uniqueName is prefix, the process id and random hex: test binaries
// share a server under .ci/run.
func uniqueName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s_%d_%s", prefix, os.Getpid(), hex.EncodeToString(b))
}
