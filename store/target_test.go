package store_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/store"
)

func TestParseTarget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want store.Target
	}{
		{"/home/me/sessions.db", store.Target{Engine: store.EngineSQLite, Location: "/home/me/sessions.db"}},
		{"sessions.db", store.Target{Engine: store.EngineSQLite, Location: "sessions.db"}},
		{"./data/s.db", store.Target{Engine: store.EngineSQLite, Location: "./data/s.db"}},
		{`C:\Users\me\s.db`, store.Target{Engine: store.EngineSQLite, Location: `C:\Users\me\s.db`}},
		{`C://Users/me/s.db`, store.Target{Engine: store.EngineSQLite, Location: `C://Users/me/s.db`}},
		{"dir/with://in/it.db", store.Target{Engine: store.EngineSQLite, Location: "dir/with://in/it.db"}},
		{"file:///tmp/a%20b.db", store.Target{Engine: store.EngineSQLite, Location: "/tmp/a b.db"}},
		{"file://localhost/tmp/s.db", store.Target{Engine: store.EngineSQLite, Location: "/tmp/s.db"}},
		{"postgres://u@host:5432/db?sslmode=disable", store.Target{Engine: store.EnginePostgres, Location: "postgres://u@host:5432/db?sslmode=disable"}},
		{"postgresql://host/db", store.Target{Engine: store.EnginePostgres, Location: "postgresql://host/db"}},
		{"POSTGRES://host/db", store.Target{Engine: store.EnginePostgres, Location: "postgres://host/db"}},
	}
	for _, tt := range tests {
		got, err := store.ParseTarget(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseTargetRefuses(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"mysql://host/db", "sqlite://x.db", "http://example.com/x", "s3+x://b/k"} {
		_, err := store.ParseTarget(in)
		var use *store.UnknownSchemeError
		if !errors.As(err, &use) || !errors.Is(err, store.ErrUnknownScheme) {
			t.Errorf("ParseTarget(%q) = %v; want an UnknownSchemeError", in, err)
			continue
		}
		if want := in[:len(use.Scheme)]; use.Scheme != want {
			t.Errorf("ParseTarget(%q) scheme = %q; want %q", in, use.Scheme, want)
		}
	}
	// A PostgreSQL URL missing a slash is refused, not taken for a file
	// path ("postgres:/db.internal/s": an import made a SQLite file in a
	// folder "postgres:"); so is a file URL missing one, or SQLite's URI
	// filename ("file:/tmp/s.db" made the folders file:/tmp under the
	// working directory, "file:s.db" a file named so).
	for _, in := range []string{"", "file://otherhost/x.db", "file:///x.db?mode=ro", "file://",
		"postgres:/db.internal/sessions", "postgres:db.internal/sessions", "PostgreSQL:/h/d", "postgres:",
		"file:/tmp/s.db", "file:s.db", "FILE:s.db?mode=ro", "file:"} {
		if _, err := store.ParseTarget(in); !errors.Is(err, store.ErrBadOptions) {
			t.Errorf("ParseTarget(%q) = %v; want ErrBadOptions", in, err)
		}
	}
}

func TestOpenURL(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.db")
	s, err := store.OpenURL(ctx, "file://"+path, store.Options{})
	if err != nil {
		t.Fatalf("OpenURL(file://%s) = %v", path, err)
	}
	if s.Path() != path {
		t.Errorf("Path() = %q; want %q", s.Path(), path)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	t.Chdir(dir)
	// No server listens on port 1: the postgres URL is a connection refused.
	for _, in := range []string{"postgres://127.0.0.1:1/db", "mysql://host/db"} {
		_, err := store.OpenURL(ctx, in, store.Options{})
		if err == nil {
			t.Fatalf("OpenURL(%q) = nil error", in)
		}
		// Nothing is made for a URL: the bug was a folder named "postgres:".
		scheme, _, _ := strings.Cut(in, "://")
		if _, serr := os.Stat(filepath.Join(dir, scheme+":")); !errors.Is(serr, os.ErrNotExist) {
			t.Errorf("OpenURL(%q) made %s: (stat: %v)", in, scheme, serr)
		}
	}
	if _, err := store.OpenURL(ctx, "postgresql://127.0.0.1:1/db", store.Options{}); !errors.Is(err, sessiontree.ErrStorage) {
		t.Errorf("OpenURL(postgresql://127.0.0.1:1/db) = %v; want ErrStorage (connection refused)", err)
	}
}

// TestOpenURLPostgres opens a PostgreSQL store by its URL, with a
// password that Path leaves out, and reopens it: the session is there.
func TestOpenURLPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u, err := url.Parse(pgtest.Migrated.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "hunter2") // the test cluster trusts local connections
	s, err := store.OpenURL(ctx, u.String(), store.Options{})
	if err != nil {
		t.Fatalf("OpenURL(%s) = %v", u.Redacted(), err)
	}
	if strings.Contains(s.Path(), "hunter2") || !strings.HasPrefix(s.Path(), "postgres") {
		t.Errorf("Path() = %q; want the URL without its password", s.Path())
	}
	mustCreate(t, s, store.CreateOptions{ID: "kept"})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openPostgresAt(t, u.String())
	if in, err := s2.Info(ctx, "kept"); err != nil || in.ID != "kept" {
		t.Errorf("Info(kept) after reopening = %+v, %v", in, err)
	}
	// A URL's scheme is case-insensitive (RFC 3986), as ParseTarget reads
	// it; pgx takes only a lower-case one.
	u.Scheme = "PostgreSQL"
	s3 := openPostgresAt(t, u.String())
	if in, err := s3.Info(ctx, "kept"); err != nil || in.ID != "kept" {
		t.Errorf("Info(kept) through %s = %+v, %v", u.Redacted(), in, err)
	}
}
