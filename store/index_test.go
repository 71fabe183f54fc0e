package store_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/sessiontree/sessiontree/internal/testdb"
	"slices"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

func mustIndex(t *testing.T, s *store.Store) (int64, []store.IndexProgress) {
	t.Helper()
	var seen []store.IndexProgress
	n, err := s.Index(context.Background(), store.IndexOptions{Progress: func(p store.IndexProgress) { seen = append(seen, p) }})
	if err != nil {
		t.Fatalf("Index: %v", err)
	}
	return n, seen
}

func mustCheck(t *testing.T, s *store.Store, id string) {
	t.Helper()
	if err := s.Check(context.Background(), id); err != nil {
		t.Fatalf("Check(%q): %v", id, err)
	}
}

// TestIndexCatchesUp: appends leave their entries pending, Check accepts
// that, Index indexes exactly what is pending once, and a search finds it.
func TestIndexCatchesUp(t *testing.T) {
	t.Parallel()
	onEngines(t, testIndexCatchesUp)
}

func testIndexCatchesUp(t *testing.T, open opener) {
	s := open(t)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s1"}))
	b.user("u1", "alpha quartz")
	b.assistant("a1", "beta quartz")
	b.label("l1", "u1", "start")
	mustCheck(t, s, "")
	if n, seen := mustIndex(t, s); n != 3 || !slices.Equal(seen, []store.IndexProgress{{0, 3}, {3, 3}}) {
		t.Errorf("Index = %d with progress %v; want 3, [{0 3} {3 3}]", n, seen)
	}
	if n, seen := mustIndex(t, s); n != 0 || len(seen) != 0 {
		t.Errorf("Index with nothing pending = %d with progress %v; want 0 and no progress", n, seen)
	}
	mustCheck(t, s, "s1")
	b.user("u2", "gamma quartz")
	if n, _ := mustIndex(t, s); n != 1 {
		t.Errorf("Index after one append = %d; want 1", n)
	}
	if got := hitKeys(search(t, s, "quartz", store.SearchOptions{})); !slices.Equal(got, []string{"s1/a1", "s1/u1", "s1/u2"}) {
		t.Errorf("hits = %v; want s1/a1 s1/u1 s1/u2", got)
	}
	mustCheck(t, s, "")
}

// TestIndexInChunks: a backlog larger than a chunk is indexed in several
// transactions, each reported, and the result is the same index.
func TestIndexInChunks(t *testing.T) {
	t.Parallel()
	onEngines(t, testIndexInChunks)
}

func testIndexInChunks(t *testing.T, open opener) {
	s := open(t)
	store.SetIndexChunk(s, 3)
	for _, id := range []string{"s1", "s2"} {
		b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: id}))
		for i := range 4 {
			b.user(fmt.Sprintf("u%d", i), "opal text")
		}
	}
	n, seen := mustIndex(t, s)
	var done []int64
	for _, p := range seen {
		if p.Total != 8 {
			t.Errorf("progress %v; want a total of 8", p)
		}
		done = append(done, p.Done)
	}
	if n != 8 || !slices.Equal(done, []int64{0, 3, 6, 8}) {
		t.Errorf("Index = %d, progress done %v; want 8, [0 3 6 8]", n, done)
	}
	mustCheck(t, s, "")
	if got := search(t, s, "opal", store.SearchOptions{Limit: 20}); len(got) != 8 {
		t.Errorf("%d hits; want 8", len(got))
	}
}

// TestIndexDeletePending: deleting a session whose newest entries are not
// indexed yet removes what the index holds and nothing else.
func TestIndexDeletePending(t *testing.T) {
	t.Parallel()
	onEngines(t, testIndexDeletePending)
}

func testIndexDeletePending(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	keep := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "keep"}))
	keep.user("k1", "amber kept")
	gone := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "gone"}))
	gone.user("g1", "amber indexed")
	mustIndex(t, s)
	gone.user("g2", "amber pending")
	if _, err := s.Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s, "")
	if got := hitKeys(search(t, s, "amber", store.SearchOptions{})); !slices.Equal(got, []string{"keep/k1"}) {
		t.Errorf("hits after the delete = %v; want keep/k1", got)
	}
}

// TestIndexCheckFindsLostPending: a session with pending entries missing
// from search_pending (searches would never index them) is reported as
// corrupt by Check.
func TestIndexCheckFindsLostPending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s1"}))
	b.user("u1", "jade")
	mustCheck(t, s, "s1")
	err := testdb.Update(ctx, s.Path(), func(tx *sqlx.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM search_pending`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"", "s1"} {
		if err := s.Check(ctx, id); !errors.Is(err, sessiontree.ErrCorrupt) {
			t.Errorf("Check(%q) with the pending list emptied = %v; want ErrCorrupt", id, err)
		}
	}
	// Repair it, or the helper's closing check fails the test.
	err = testdb.Update(ctx, s.Path(), func(tx *sqlx.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO search_pending (session) SELECT pk FROM sessions`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s, "")
}

// TestIndexWhileAppending: searches (each indexing what is pending) run
// while another goroutine appends; no entry is indexed twice or missed,
// and every search sees at least what was appended before it began.
func TestIndexWhileAppending(t *testing.T) {
	t.Parallel()
	onEngines(t, testIndexWhileAppending)
}

func testIndexWhileAppending(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	st := mustCreate(t, s, store.CreateOptions{ID: "busy"})
	const n = 60
	appended := make(chan int, n)
	failed := make(chan error, 1)
	go func() {
		defer close(appended)
		for i := range n {
			_, err := st.Append(ctx, sessiontree.Draft{Type: sessiontree.TypeMessage,
				Fields: []byte(`{"message":{"role":"user","content":"topaz line","timestamp":1}}`)}, sessiontree.AppendOptions{})
			if err != nil {
				failed <- err
				return
			}
			appended <- i + 1
		}
	}()
	seen := 0
	for k := range appended {
		seen = max(seen, k)
		res, err := s.Search(ctx, "topaz", store.SearchOptions{Limit: store.MaxSearchLimit})
		if err != nil {
			t.Fatal(err)
		}
		hits := res.Hits
		if len(hits) < seen {
			t.Fatalf("search found %d entries after %d were appended", len(hits), seen)
		}
	}
	select {
	case err := <-failed:
		t.Fatalf("append: %v", err)
	default:
	}
	mustCheck(t, s, "")
	if got := search(t, s, "topaz", store.SearchOptions{Limit: store.MaxSearchLimit}); len(got) != n {
		t.Errorf("%d hits after all appends; want %d", len(got), n)
	}
}

// TestCheckFindsDamagedIndex: Check, which writes nothing, finds damage
// in the structure of the search index: SQLite's integrity_check, which
// the engine's check runs, runs FTS5's own check too.
func TestCheckFindsDamagedIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s1"}))
	for i := range 20 {
		b.user(fmt.Sprintf("u%d", i), fmt.Sprintf("jade and amber number %d", i))
	}
	mustIndex(t, s)
	mustCheck(t, s, "")
	const segment = `(SELECT min(id) FROM entries_fts_data WHERE id > 10)` // the first segment's first page
	var good []byte
	if err := testdb.View(ctx, s.Path(), func(tx *sqlx.Tx) error {
		return tx.GetContext(ctx, &good, `SELECT block FROM entries_fts_data WHERE id = `+segment)
	}); err != nil {
		t.Fatal(err)
	}
	rewrite := func(b []byte) {
		t.Helper()
		err := testdb.Update(ctx, s.Path(), func(tx *sqlx.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE entries_fts_data SET block = ? WHERE id = `+segment, b)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	bad := slices.Clone(good)
	for i := len(bad) / 2; i < len(bad); i++ {
		bad[i] ^= 0x55
	}
	rewrite(bad)
	for _, id := range []string{"", "s1"} {
		if err := s.Check(ctx, id); !errors.Is(err, sessiontree.ErrCorrupt) {
			t.Errorf("Check(%q) with a damaged index segment = %v; want ErrCorrupt", id, err)
		}
	}
	rewrite(good) // or the helper's closing check fails the test
	mustCheck(t, s, "")
}
