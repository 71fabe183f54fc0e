package watch_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/watch"
)

// TestWatchRidesOutServerRestart imports into PostgreSQL, on a cluster
// of the test's own, while the server is down: the import of lines pi
// appended meanwhile fails in the store, not on the file, so once the
// server is back the watch must import them at its next rescan, though
// the file does not change again (pi's session may be over), instead of
// taking the file as imported at its size.
func TestWatchRidesOutServerRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := pgtest.Own(t)
	s, err := store.OpenURL(ctx, c.URL, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	dir := t.TempDir()
	a := newSessionFile(t, filepath.Join(dir, "a.jsonl"), "aaaa-session")
	a.add(2)
	w := startWatch(t, s, []string{dir}, watch.Options{Rescan: 100 * time.Millisecond})
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
