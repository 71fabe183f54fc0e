package watch_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/watch"
)

// TestMain runs more tests at once than go test's default: they mostly
// wait for the watcher (settle times, rescans, a server's restart).
func TestMain(m *testing.M) { os.Exit(pgtest.RunWaiting(m)) }

// TestWatchRidesOutServerRestart imports into PostgreSQL, on a cluster
// of the test's own, while the server is down: the import of lines pi
// appended meanwhile fails in the store, not on the file, so once the
// server is back the watch must import them at its next rescan, though
// the file does not change again (pi's session may be over), instead of
// taking the file as imported at its size.
func TestWatchRidesOutServerRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, s, a := ownServer(t, 2)
	w := startWatch(t, s, []string{filepath.Dir(a.path)}, watch.Options{Rescan: 100 * time.Millisecond})
	w.caughtUp(a.id, 2)
	if err := c.Down(ctx); err != nil {
		t.Fatal(err)
	}
	a.add(2)
	w.waitFor("the import failing with the server down", func(e watch.Event) bool {
		return e.Kind == watch.Unsettled && e.Path == a.path
	})
	if err := c.Up(ctx); err != nil {
		t.Fatal(err)
	}
	w.caughtUp(a.id, 4)
}

// TestWatchIndexRidesOutServerRestart: the server goes down between an
// import and the search index's catch-up that follows it. The watch
// says the index is behind and goes on: once the server is back, the
// line is searchable, though no file changes again. It used to end the
// watch ("watch: index: ... storage failure"), as if the store were
// closed.
func TestWatchIndexRidesOutServerRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, s, a := ownServer(t, 1)
	down := false
	opts := watch.Options{Rescan: 100 * time.Millisecond, Report: func(e watch.Event) {
		// Called between the import and the index's catch-up.
		if e.Kind == watch.Imported && e.Result.Outcome == store.OutcomeGrown && !down {
			down = true
			if err := c.Down(ctx); err != nil {
				t.Error(err)
			}
		}
	}}
	w := startWatch(t, s, []string{filepath.Dir(a.path)}, opts)
	w.caughtUp(a.id, 1)
	a.add(1)
	e := w.waitFor("the index failing with the server down", func(e watch.Event) bool { return e.Kind == watch.IndexFailed })
	if !errors.Is(e.Err, sessiontree.ErrStorage) {
		t.Errorf("IndexFailed's error %v does not match ErrStorage", e.Err)
	}
	if err := c.Up(ctx); err != nil {
		t.Fatal(err)
	}
	w.caughtUp(a.id, 2)
	res, err := s.Search(ctx, `"message 2 of aaaa-session"`, store.SearchOptions{})
	if err != nil || len(res.Hits) != 1 {
		t.Fatalf("Search for the line imported while the server went down = %+v, %v; want one hit", res.Hits, err)
	}
}

// ownServer starts a PostgreSQL cluster of the test's own, which it may
// stop and start, opens a store on it, and writes a session file of n
// entries in a new folder.
func ownServer(t *testing.T, n int) (*pgtest.Cluster, *store.Store, *sessionFile) {
	t.Helper()
	c := pgtest.Own(t)
	s, err := store.OpenURL(context.Background(), c.URL, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	a := newSessionFile(t, filepath.Join(t.TempDir(), "a.jsonl"), "aaaa-session")
	a.add(n)
	return c, s, a
}
