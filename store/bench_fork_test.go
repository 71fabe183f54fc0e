package store_test

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree/store"
)

// BenchmarkForkExport forks and exports one session of 5,000 entries:
// a path fork (the active branch, pi's createBranchedSession), a
// whole-tree fork, and exports as stored and for pi. Each fork adds a
// session to a store of the benchmark's own.
func BenchmarkForkExport(b *testing.B) {
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(b.TempDir(), "fork.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	meta, entries, err := genEntries(newPiGen(5), "/home/dev/fork", 5000, 0.15)
	if err != nil {
		b.Fatal(err)
	}
	st, err := s.Create(ctx, store.CreateOptions{ID: meta.ID, Cwd: meta.Cwd})
	if err != nil {
		b.Fatal(err)
	}
	if err := st.AppendBatch(ctx, entries); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		fn   func() error
	}{
		{"fork-path", func() error { _, err := s.Fork(ctx, meta.ID, store.ForkOptions{}); return err }},
		{"fork-tree", func() error { _, err := s.Fork(ctx, meta.ID, store.ForkOptions{Tree: true}); return err }},
		{"export", func() error { return s.Export(ctx, meta.ID, io.Discard, store.ExportOptions{}) }},
		{"export-pi", func() error { return s.Export(ctx, meta.ID, io.Discard, store.ExportOptions{ForPi: true}) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			measure(b, func() {
				if err := bc.fn(); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
