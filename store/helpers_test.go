package store_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// piDir is the pi fixtures: files pi wrote, with pi's answers.
const piDir = "../testdata/pi"

// openStore opens a store in a temporary directory. Its cleanup checks
// the whole database (the engine's check and the search index's) and
// closes it, so every test is an integrity test too.
func openStore(t testing.TB) *store.Store {
	t.Helper()
	return openStoreAt(t, filepath.Join(t.TempDir(), "sessions.db"))
}

func openStoreAt(t testing.TB, path string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Check(context.Background(), ""); err != nil && !errors.Is(err, sessiontree.ErrClosed) {
			t.Errorf("Check: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// copyFile copies a file, mode 0600.
func copyFile(t testing.TB, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func mustImport(t testing.TB, s *store.Store, paths []string, opts store.ImportOptions) store.ImportReport {
	t.Helper()
	rep, err := s.Import(context.Background(), paths, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
