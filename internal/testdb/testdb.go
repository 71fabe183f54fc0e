package testdb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Template is a new database made once, on first use, by its create
// function.
type Template struct {
	create func(ctx context.Context, path string) error

	once sync.Once
	data []byte // the database file's bytes
	err  error
}

// New returns a template whose database create makes at path: it opens
// (creating) and closes a database there.
func New(create func(ctx context.Context, path string) error) *Template {
	return &Template{create: create}
}

// CopyTo writes a copy of the template's database to path, mode 0600.
func (t *Template) CopyTo(tb testing.TB, path string) {
	tb.Helper()
	t.once.Do(t.make)
	if t.err != nil {
		tb.Fatalf("template database: %v", t.err)
	}
	if err := os.WriteFile(path, t.data, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// make creates the database in a folder of its own and keeps its bytes.
func (t *Template) make() {
	dir, err := os.MkdirTemp("", "testdb-")
	if err != nil {
		t.err = err
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "template.db")
	if err := t.create(context.Background(), path); err != nil {
		t.err = err
		return
	}
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.err = fmt.Errorf("the database left a -wal file when closed (%v): a copy of its file alone would not be whole", err)
		return
	}
	t.data, t.err = os.ReadFile(path)
}
