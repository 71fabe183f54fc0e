package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/testdb"
	"github.com/sessiontree/sessiontree/store"
)

// appendJaspers appends n user messages holding "jasper" to session st,
// ids j00000 on from first, each under the one before.
func appendJaspers(t *testing.T, st sessiontree.DatabaseSession, first, n int) {
	t.Helper()
	entries := make([]sessiontree.Entry, n)
	for i := range entries {
		parent := "null"
		if k := first + i; k > 0 {
			parent = fmt.Sprintf(`"j%05d"`, k-1)
		}
		raw := fmt.Sprintf(`{"type":"message","id":"j%05d","parentId":%s,"timestamp":"2026-03-01T10:00:00.000Z","message":{"role":"user","content":"jasper %d","timestamp":1}}`,
			first+i, parent, first+i)
		e, err := sessiontree.DecodeEntry([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		entries[i] = e
	}
	if err := st.AppendBatch(context.Background(), entries); err != nil {
		t.Fatal(err)
	}
}

// TestSearchLimitBeyondRankWindow: a search asked for more hits than
// RankWindow (up to MaxSearchLimit) gets every match up to its limit, on
// each engine. It got RankWindow of them (300 of 320), with nothing in
// the result to say that the others were left out.
func TestSearchLimitBeyondRankWindow(t *testing.T) {
	const n = store.RankWindow + 20
	onEngines(t, func(t *testing.T, openStore opener) {
		s := openStore(t)
		appendJaspers(t, mustCreate(t, s, store.CreateOptions{ID: "many"}), 0, n)
		if got := search(t, s, "jasper", store.SearchOptions{Limit: store.MaxSearchLimit}); len(got) != n {
			t.Errorf("Search(jasper, limit %d) = %d hits; want all %d", store.MaxSearchLimit, len(got), n)
		}
		if got := search(t, s, "jasper", store.SearchOptions{Limit: n - 5}); len(got) != n-5 {
			t.Errorf("Search(jasper, limit %d) = %d hits; want %d", n-5, len(got), n-5)
		}
	})
}

// TestSearchLimitBeyondRankWindowPending is TestSearchLimitBeyondRankWindow
// with part of the matches pending, read by the search itself while
// another connection holds the write lock.
func TestSearchLimitBeyondRankWindowPending(t *testing.T) {
	const n = store.RankWindow + 20
	path := filepath.Join(t.TempDir(), "sessions.db")
	s := openStoreAt(t, path)
	st := mustCreate(t, s, store.CreateOptions{ID: "many"})
	appendJaspers(t, st, 0, 100)
	mustIndex(t, s)
	appendJaspers(t, st, 100, n-100)
	testdb.HoldWriteLock(t, path)
	res, err := s.Search(context.Background(), "jasper", store.SearchOptions{Limit: store.MaxSearchLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != n || res.Scanned != n-100 {
		t.Errorf("Search(jasper) with %d pending = %d hits, %d scanned; want %d, %d", n-100, len(res.Hits), res.Scanned, n, n-100)
	}
}
