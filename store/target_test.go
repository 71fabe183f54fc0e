package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree/store"
)

func TestParseTarget(t *testing.T) {
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
		{"POSTGRES://host/db", store.Target{Engine: store.EnginePostgres, Location: "POSTGRES://host/db"}},
	}
	for _, tt := range tests {
		got, err := store.ParseTarget(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseTargetRefuses(t *testing.T) {
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
	for _, in := range []string{"", "file://otherhost/x.db", "file:///x.db?mode=ro", "file://"} {
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
	for _, in := range []string{"postgres://host/db", "mysql://host/db"} {
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
	if _, err := store.OpenURL(ctx, "postgres://host/db", store.Options{}); !errors.Is(err, store.ErrEngineUnavailable) {
		t.Errorf("OpenURL(postgres://host/db) = %v; want ErrEngineUnavailable", err)
	}
}
