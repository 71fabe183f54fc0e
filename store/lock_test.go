package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/testdb"
	"github.com/sessiontree/sessiontree/store"
)

// TestSearchWhileLocked: while another connection holds the write lock, a
// search answers at once from the index and from the pending entries it
// reads itself (short phrases, filters and ranking included), and Check
// passes without waiting.
func TestSearchWhileLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	s := openStoreAt(t, path)
	a := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "a", Cwd: "/a"}))
	a.user("a1", "indexed garnet")
	mustIndex(t, s)
	a.user("a2", "pending garnet garnet")
	a.assistant("a3", "猫がいる")
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "b", Cwd: "/b"}))
	b.user("b1", "pending garnet in b")
	testdb.HoldWriteLock(t, path)

	start := time.Now()
	for _, tc := range []struct {
		query string
		opts  store.SearchOptions
		want  []string
	}{
		{"garnet", store.SearchOptions{}, []string{"a/a1", "a/a2", "b/b1"}},
		{"garnet", store.SearchOptions{Cwd: "/a"}, []string{"a/a1", "a/a2"}},
		{"garnet", store.SearchOptions{SessionID: "b"}, []string{"b/b1"}},
		{"猫", store.SearchOptions{}, []string{"a/a3"}},
		{"g", store.SearchOptions{SessionID: "b"}, []string{"b/b1"}},
		{"pending NOT b", store.SearchOptions{}, []string{"a/a2"}},
	} {
		res, err := s.Search(context.Background(), tc.query, tc.opts)
		if err != nil {
			t.Fatalf("Search(%q) while locked: %v", tc.query, err)
		}
		got := hitKeys(res.Hits) // sorted
		if !slices.Equal(got, tc.want) || res.Unsearched != 0 {
			t.Errorf("Search(%q, %+v) while locked = %v (%d unsearched); want %v", tc.query, tc.opts, got, res.Unsearched, tc.want)
		}
	}
	if _, err := s.Search(context.Background(), `"unterminated`, store.SearchOptions{}); !errors.Is(err, store.ErrBadQuery) {
		t.Errorf("a bad query while locked = %v; want ErrBadQuery", err)
	}
	// Ranked as if indexed: two matches in a text of about the same
	// length beat one.
	if res, err := s.Search(context.Background(), "garnet", store.SearchOptions{Cwd: "/a"}); err != nil || len(res.Hits) != 2 || res.Hits[0].EntryID != "a2" {
		t.Errorf("Search(garnet) ranked %v, %v; want a2 first", res.Hits, err)
	}
	if err := s.Check(context.Background(), ""); err != nil {
		t.Errorf("Check while locked: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("searches and a check while locked took %v; want no waiting", d)
	}
}

// TestSearchPendingBound: a search reads at most PendingScanEntries of
// the pending entries, the newest, and counts the others as unsearched.
func TestSearchPendingBound(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	s := openStoreAt(t, path)
	st := mustCreate(t, s, store.CreateOptions{ID: "many"})
	entries := make([]sessiontree.Entry, store.PendingScanEntries+50)
	for i := range entries {
		id := fmt.Sprintf("e%05d", i)
		parent := ""
		if i > 0 {
			parent = entries[i-1].ID
		}
		raw := fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-03-01T10:00:00.000Z","message":{"role":"user","content":"beryl %d","timestamp":1}}`,
			id, jsonOrNull(parent), i)
		e, err := sessiontree.DecodeEntry([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		entries[i] = e
	}
	if err := st.AppendBatch(ctx, entries); err != nil {
		t.Fatal(err)
	}
	testdb.HoldWriteLock(t, path)
	res, err := s.Search(ctx, "beryl", store.SearchOptions{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Scanned != store.PendingScanEntries || res.Unsearched != 50 || len(res.Hits) != 5 {
		t.Fatalf("Search over %d pending entries = %d hits, %d scanned, %d unsearched; want 5, %d, 50",
			len(entries), len(res.Hits), res.Scanned, res.Unsearched, store.PendingScanEntries)
	}
	// The 50 oldest are left out: "beryl 3" is in e00003 and e00030 to
	// e00039 too, which must not be found.
	res, err = s.Search(ctx, `"beryl 3"`, store.SearchOptions{Limit: store.MaxSearchLimit})
	if err != nil || len(res.Hits) != 100 {
		t.Fatalf(`Search("beryl 3") = %d hits, %v; want the 100 among the newest (300 to 399)`, len(res.Hits), err)
	}
	for _, h := range res.Hits {
		if h.EntryID < "e00050" {
			t.Errorf("hit %s; want only the %d newest entries", h.EntryID, store.PendingScanEntries)
		}
	}
}

func jsonOrNull(s string) string {
	if s == "" {
		return "null"
	}
	return jsonString(s)
}

// TestIndexAndImportWaitForLock: while another connection holds the write
// lock, Index and Import with NoWait give up at once with ErrLocked,
// writing nothing; without it they say they wait (once) and finish when
// the lock is released, no file failing.
func TestIndexAndImportWaitForLock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	s := openStoreAt(t, path)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s1"}))
	b.user("u1", "jasper")
	files := fixturePaths(piFixtures(t))[:3]
	release := testdb.HoldWriteLock(t, path)

	start := time.Now()
	if n, err := s.Index(ctx, store.IndexOptions{NoWait: true}); !errors.Is(err, sessiontree.ErrLocked) || n != 0 {
		t.Errorf("Index(NoWait) while locked = %d, %v; want 0, ErrLocked", n, err)
	}
	rep, err := s.Import(ctx, files, store.ImportOptions{NoWait: true})
	if !errors.Is(err, sessiontree.ErrLocked) || len(rep.Files) != 0 {
		t.Errorf("Import(NoWait) while locked = %d files, %v; want none, ErrLocked", len(rep.Files), err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("NoWait took %v; want under a second each", d)
	}

	waits := 0
	waiting, done := make(chan struct{}), make(chan error, 1)
	go func() {
		rep, err = s.Import(ctx, files, store.ImportOptions{Waiting: func() {
			if waits++; waits == 1 {
				close(waiting)
			}
		}})
		if err == nil {
			_, err = s.Index(ctx, store.IndexOptions{})
		}
		done <- err
	}()
	// Released once the import says it waits (not after a fixed second):
	// it cannot have written anything before. One that never says so is
	// released after a while, and fails the wait count below.
	select {
	case <-waiting:
	case err := <-done:
		t.Fatalf("Import and Index ended while the lock was held: %v", err)
	case <-time.After(10 * time.Second):
	}
	release()
	if err := <-done; err != nil {
		t.Fatalf("Import and Index waiting for the lock: %v", err)
	}
	if waits != 1 || rep.Count(store.OutcomeNew) != len(files) {
		t.Errorf("Import waiting for the lock: %d waits told, %d of %d files new; want 1 wait, every file new", waits, rep.Count(store.OutcomeNew), len(files))
	}
	if got := search(t, s, "jasper", store.SearchOptions{}); len(got) != 1 {
		t.Errorf("%d hits; want 1", len(got))
	}
}
