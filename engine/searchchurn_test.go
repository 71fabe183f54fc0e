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
		every    = 50
		maxBytes = 700 << 10
		maxPages = 260
	)
	cycles := 500
	if testing.Short() {
		// Merges and two checks of the size; the growth the bound
		// catches shows only past 350 cycles: the full run's.
		cycles = 100
	}
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

// indexSegments returns how many segments the search index holds: the
// distinct segment ids of entries_fts_data's pages (FTS5 keys a page
// segid << 37 | height << 31 | page; ids below are the averages and
// structure records).
func indexSegments(t testing.TB, path string) (n int64) {
	t.Helper()
	db := rawDB(t, path)
	defer db.Close()
	if err := db.QueryRow(`SELECT count(DISTINCT id >> 37) FROM entries_fts_data WHERE id >= 1 << 37`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSearchMergeAcrossProcesses: deletes made one per Open and Close,
// as the command line's rm makes them, count towards the index's merge
// (searchmerge.go) as one process's do. Eleven sessions of 100 indexed
// entries; each of the first nine deletes, 900 entries, adds a segment
// of delete markers, and the tenth, the 1,000th entry, merges them all
// into one.
// With the count in a DB's memory, no delete ever merged here. A delete
// with the count's row gone makes it again.
func TestSearchMergeAcrossProcesses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	open := func() *store.Store {
		t.Helper()
		s, err := store.Open(ctx, path, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	var ids []string
	for i := range 11 {
		ds, err := s.Create(ctx, store.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		drafts := make([]sessiontree.Draft, 100)
		for j := range drafts {
			drafts[j] = message(fmt.Sprintf("session %d message %d: the quick brown fox", i, j))
		}
		if _, err := ds.AppendAll(ctx, drafts, sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ds.ID())
	}
	if _, err := s.Index(ctx, store.IndexOptions{}); err != nil {
		t.Fatal(err)
	}
	indexed := indexSegments(t, path)
	s.Close()
	for i, id := range ids[:10] {
		s := open()
		if n, err := s.Delete(ctx, id); n != 1 || err != nil {
			t.Fatalf("Delete(%s) = %d, %v; want 1", id, n, err)
		}
		s.Close()
		segments := indexSegments(t, path)
		if want := indexed + int64(i) + 1; i < 9 && segments != want {
			t.Fatalf("after %d deletes of 100 entries: %d segments; want %d, one more for each delete's markers", i+1, segments, want)
		}
		if i == 9 && segments != 1 {
			t.Errorf("after 10 deletes of 100 entries, each in a process of its own: %d segments; want 1, merged", segments)
		}
	}
	s = open()
	defer s.Close()
	if err := s.DB().Check(ctx, ""); err != nil {
		t.Errorf("Check() = %v", err)
	}
	got, err := s.Search(ctx, "quick brown fox", store.SearchOptions{})
	if err != nil || len(got.Hits) == 0 {
		t.Fatalf("Search() = %+v, %v; want the entries of the session kept", got, err)
	}
	for _, h := range got.Hits {
		if h.SessionID != ids[10] {
			t.Errorf("Search() found %s of session %s, deleted; want only the kept %s's", h.EntryID, h.SessionID, ids[10])
		}
	}

	// The count's row lost (a hand, a partial restore): a delete makes it
	// again, with its own count, instead of failing.
	raw := rawDB(t, path)
	mustExec(t, raw, `DELETE FROM search_merge`)
	if n, err := s.Delete(ctx, ids[10]); n != 1 || err != nil {
		t.Fatalf("Delete(%s) with the count's row lost = %d, %v; want 1", ids[10], n, err)
	}
	var count int64
	if err := raw.QueryRow(`SELECT deleted FROM search_merge WHERE id = 1`).Scan(&count); err != nil || count != 100 {
		t.Errorf("count after the delete = %d, %v; want 100", count, err)
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
