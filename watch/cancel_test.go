package watch_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree/internal/canceltest"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/storetest"
	"github.com/sessiontree/sessiontree/watch"
)

// TestCancelWatch stops a watch at every point it checks its context
// before it has caught up with a folder (its first round's imports and
// catch-up of the search index): Watch returns nil, being stopped is how
// it ends; its file watcher, goroutines and the import's files are gone
// once the store is closed; and an import of the folder afterwards
// leaves the store as one into a new store does.
func TestCancelWatch(t *testing.T) {
	dir := t.TempDir()
	newSessionFile(t, filepath.Join(dir, "a.jsonl"), "aaaa-session").add(30)
	newSessionFile(t, filepath.Join(dir, "sub", "b.jsonl"), "bbbb-session").add(20)
	var want map[string]string
	points := 1 << 20 // every check
	switch {
	case testing.Short():
		points = 12
	case storetest.RaceEnabled:
		points = 60 // spread over the checks; every one took 33 s of CI's race run, serially
	}
	canceltest.Sweep(t, points, func(ctx context.Context) error {
		before := canceltest.Take()
		path := filepath.Join(t.TempDir(), "sessions.db")
		emptyStore.CopyTo(t, path)
		s, err := store.Open(context.Background(), path, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		stop := ctx.(*canceltest.Ctx).Stop
		_, err = watch.Watch(ctx, s, []string{dir}, watch.Options{Settle: time.Hour, Report: func(e watch.Event) {
			if e.Kind == watch.CaughtUp {
				stop()
			}
		}})
		if err != nil {
			t.Errorf("Watch = %v; want nil once stopped", err)
		}
		if _, err := s.Import(context.Background(), []string{dir}, store.ImportOptions{}); err != nil {
			t.Fatal(err)
		}
		got := contentOf(t, s)
		if want == nil {
			want = got
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("store after a stopped watch and an import (-first run +this run):\n%s", diff)
		}
		if err := s.Check(context.Background(), ""); err != nil {
			t.Errorf("Check: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		before.Settled(t, "after a stopped watch and Close")
		return err
	}, func(int64, error) {})
}

// contentOf returns every session of s as its export, by id.
func contentOf(t testing.TB, s *store.Store) map[string]string {
	t.Helper()
	infos, err := s.ListN(context.Background(), store.ListOptions{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, info := range infos {
		var b bytes.Buffer
		if err := s.Export(context.Background(), info.ID, &b, store.ExportOptions{}); err != nil {
			t.Fatal(err)
		}
		out[info.ID] = b.String()
	}
	return out
}
