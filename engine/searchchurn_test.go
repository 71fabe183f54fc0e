package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// indexSize returns the bytes of the search index's data (entries_fts_data)
// and the file's pages.
func indexSize(t testing.TB, path string) (bytes, pages int64) {
	t.Helper()
	db := rawDB(t, path)
	defer db.Close()
	if err := db.QueryRow(`SELECT coalesce(sum(length(block)), 0) FROM entries_fts_data`).Scan(&bytes); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	return bytes, pages
}

// churn runs cycles of create, 8 appends, index, and delete of the
// session created held cycles before.
func churn(t testing.TB, s *store.Store, ids *[]string, held, cycles int) {
	t.Helper()
	ctx := context.Background()
	for range cycles {
		ds, err := s.Create(ctx, store.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n := len(*ids)
		var drafts []sessiontree.Draft
		for j := range 8 {
			drafts = append(drafts, message(fmt.Sprintf("cycle %d message %d: the quick brown fox jumps over the lazy dog %x", n, j, n*31+j)))
		}
		if _, err := ds.AppendAll(ctx, drafts, sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		*ids = append(*ids, ds.ID())
		if _, err := s.Index(ctx, store.IndexOptions{}); err != nil {
			t.Fatal(err)
		}
		if n >= held {
			if err := s.DB().DeleteSession(ctx, (*ids)[n-held], sessiontree.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestSearchIndexChurn: sessions created, indexed and deleted, 30 (240
// entries) held at a time, keep the search index and the file within a
// bound that does not grow with the cycles (searchmerge.go). Without the
// merges the index grew by about 2 KB a cycle (981 KB and 326 pages at 500
// cycles, 4.0 MB and 1,130 pages at 2,000); with them it saws between
// about 100 and 525 KB (the garbage of mergeAfterRows deleted entries
// and the live ones) in a file of 212 pages.
func TestSearchIndexChurn(t *testing.T) {
	t.Parallel()
	const (
		cycles, every = 500, 50
		maxBytes      = 700 << 10
		maxPages      = 260
	)
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.DB().Check(context.Background(), ""); err != nil {
			t.Errorf("Check() = %v", err)
		}
		s.Close()
	})
	var ids []string
	for done := every; done <= cycles; done += every {
		churn(t, s, &ids, 30, every)
		if bytes, pages := indexSize(t, path); bytes > maxBytes || pages > maxPages {
			t.Fatalf("after %d cycles: index %d bytes, file %d pages; want at most %d and %d", done, bytes, pages, maxBytes, maxPages)
		}
	}
}

// BenchmarkSearchIndexChurn times a cycle of TestSearchIndexChurn (create,
// 8 appends, index, delete, 30 sessions held), the merges of
// searchmerge.go included.
func BenchmarkSearchIndexChurn(b *testing.B) {
	s, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "s.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var ids []string
	churn(b, s, &ids, 30, 30)
	b.ResetTimer()
	defer measureCPU(b)()
	churn(b, s, &ids, 30, b.N)
}

// BenchmarkDeleteIndexed times deleting indexed sessions of 8 entries,
// every one of b.N made first: when half are deleted, a delete merges the
// index (searchmerge.go).
func BenchmarkDeleteIndexed(b *testing.B) {
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(b.TempDir(), "s.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var ids []string
	churn(b, s, &ids, b.N, b.N)
	b.ResetTimer()
	defer measureCPU(b)()
	for _, id := range ids {
		if err := s.DB().DeleteSession(ctx, id, sessiontree.DeleteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
