package pgengine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// The benchmarks run each workload on PostgreSQL (over loopback, against
// the throwaway cluster of pgtest) and on the SQLite engine side by side,
// in one run: compare the pairs, not numbers from different runs.

// engines opens a fresh PostgreSQL database and a fresh SQLite file and
// returns, by name, a function creating a session in each.
func engines(b *testing.B) map[string]func(ctx context.Context) (sessiontree.Storage, error) {
	b.Helper()
	pg, _ := openDB(b)
	lite, err := engine.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"), engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { lite.Close() })
	meta := sessiontree.SessionMeta{Cwd: "/bench"}
	return map[string]func(ctx context.Context) (sessiontree.Storage, error){
		"postgres": func(ctx context.Context) (sessiontree.Storage, error) { return pg.CreateSession(ctx, meta) },
		"sqlite":   func(ctx context.Context) (sessiontree.Storage, error) { return lite.CreateSession(ctx, meta) },
	}
}

// BenchmarkAppend: one writer appending to one session.
func BenchmarkAppend(b *testing.B) {
	for _, name := range []string{"postgres", "sqlite"} {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			st := benchSession(b, name)
			d := userDraft("a message of ordinary length for a coding session, with some words in it")
			b.ResetTimer()
			for b.Loop() {
				if _, err := st.Append(ctx, d, sessiontree.AppendOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAppendSessions: 16 writers, each appending to a session of its
// own (PostgreSQL locks one session row; SQLite serializes every write).
func BenchmarkAppendSessions(b *testing.B) {
	for _, name := range []string{"postgres", "sqlite"} {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			create := engines(b)[name]
			d := userDraft("a message of ordinary length for a coding session, with some words in it")
			var failed atomic.Value
			b.SetParallelism(16)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				st, err := create(ctx)
				if err != nil {
					failed.Store(err)
					return
				}
				for pb.Next() {
					if _, err := st.Append(ctx, d, sessiontree.AppendOptions{}); err != nil {
						failed.Store(err)
						return
					}
				}
			})
			if err, _ := failed.Load().(error); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkActivePath: the active path of a session of 5,000 entries
// whose last 200 follow a compaction (what resuming it reads), and the
// full path from the leaf.
func BenchmarkActivePath(b *testing.B) {
	const n, kept = 5000, 200
	for _, name := range []string{"postgres", "sqlite"} {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			st := benchSession(b, name)
			entries := make([]sessiontree.Entry, 0, n+1)
			parent := ""
			for i := range n {
				id := fmt.Sprintf("%08x", i+1)
				d := userDraft(fmt.Sprintf("message %d", i))
				if i == n-kept {
					d = sessiontree.Draft{Type: sessiontree.TypeCompaction, Fields: mustFields(b,
						"summary", "s", "firstKeptEntryId", fmt.Sprintf("%08x", i-10), "tokensBefore", 1000)}
				}
				e, err := sessiontree.BuildEntry(d, id, parent, "2026-01-01T00:00:00.000Z")
				if err != nil {
					b.Fatal(err)
				}
				entries, parent = append(entries, e), id
			}
			if err := st.(sessiontree.BatchAppender).AppendBatch(ctx, entries); err != nil {
				b.Fatal(err)
			}
			for _, full := range []bool{false, true} {
				b.Run(fmt.Sprintf("full=%v", full), func(b *testing.B) {
					for b.Loop() {
						var path []sessiontree.Entry
						var err error
						if full {
							path, err = st.FullPath(ctx, parent)
						} else {
							path, err = st.Path(ctx, parent)
						}
						if err != nil || (full && len(path) != n) || (!full && len(path) != kept+11) {
							b.Fatalf("path: %d entries, %v", len(path), err)
						}
					}
				})
			}
		})
	}
}

// benchSession creates a session in a fresh database of engine name.
func benchSession(b *testing.B, name string) sessiontree.Storage {
	b.Helper()
	st, err := engines(b)[name](context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return st
}
