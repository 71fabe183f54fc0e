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
)

// Template is a database made once per test binary, on first use, by its
// prepare function; each test gets a copy.
type Template struct {
	prepare func(ctx context.Context, url string) error

	once sync.Once
	name string // the template database's name
	err  error
}

// NewTemplate returns a template that prepare fills (migrates, for an
// engine) given its URL. prepare must close its connections: a database
// with connections cannot be copied.
func NewTemplate(prepare func(ctx context.Context, url string) error) *Template {
	return &Template{prepare: prepare}
}

// URL returns the server's URL for tb, or skips tb when there is no
// server; under CI=true a missing server fails tb instead.
func URL(tb testing.TB) string {
	tb.Helper()
	if serverErr != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("PostgreSQL is needed under CI=true: %v", serverErr)
		}
		tb.Skipf("no PostgreSQL: %v", serverErr)
	}
	return serverURL
}

// Database creates a new database, a copy of the template, and returns
// its URL. It is dropped when tb ends.
func (t *Template) Database(tb testing.TB) string {
	tb.Helper()
	server := URL(tb)
	t.once.Do(func() { t.name, t.err = t.make(server) })
	if t.err != nil {
		tb.Fatalf("template database: %v", t.err)
	}
	name := uniqueName("t")
	ctx := context.Background()
	if err := admin(ctx, server, `CREATE DATABASE `+name+` TEMPLATE `+t.name); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := admin(context.Background(), server, `DROP DATABASE `+name+` WITH (FORCE)`); err != nil {
			tb.Errorf("drop test database: %v", err)
		}
	})
	return WithDatabase(server, name)
}

// make creates and prepares the template database. It stays until the
// server goes; on a server of SESSIONTREE_TEST_POSTGRES, templates left by
// earlier binaries are dropped by the next .ci/run (a new cluster).
func (t *Template) make(server string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := uniqueName("tmpl")
	if err := admin(ctx, server, `CREATE DATABASE `+name); err != nil {
		return "", err
	}
	if err := t.prepare(ctx, WithDatabase(server, name)); err != nil {
		return "", fmt.Errorf("prepare %s: %w", name, err)
	}
	return name, nil
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

// uniqueName is prefix, the process id and random hex: test binaries
// share a server under .ci/run.
func uniqueName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s_%d_%s", prefix, os.Getpid(), hex.EncodeToString(b))
}
