package sessiontree_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/memory"
	"github.com/sessiontree/sessiontree/storetest"
)

// TestFollow follows a session while a writer appends to it: through the
// engine's watch (the writer on another connection pool of the file) and
// through polling (the memory backend).
func TestFollow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		before int // entries there before Follow starts
		open   func(t *testing.T) (reader, writer sessiontree.Storage)
	}{
		{"engine", 3, func(t *testing.T) (sessiontree.Storage, sessiontree.Storage) {
			path := filepath.Join(t.TempDir(), "s.db")
			st, err := openEngine(t, path, true).CreateSession(context.Background(), sessiontree.SessionMeta{})
			if err != nil {
				t.Fatal(err)
			}
			other, err := openEngine(t, path, false).OpenSession(context.Background(), st.ID())
			if err != nil {
				t.Fatal(err)
			}
			return st, other
		}},
		// More than Follow reads at once, so it reads in several batches.
		{"memory", 2500, func(t *testing.T) (sessiontree.Storage, sessiontree.Storage) {
			st, err := memory.New(sessiontree.SessionMeta{ID: "s"}, memory.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return st, st
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reader, writer := tt.open(t)
			storetest.RunFollow(t, tt.before, reader, writer)
		})
	}
}

// TestFollowStops checks that an error of the callback ends Follow with
// that error.
func TestFollowStops(t *testing.T) {
	st, err := memory.New(sessiontree.SessionMeta{ID: "s"}, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	storetest.AppendSteps(t, st, 0, 3, 0)
	stop := errors.New("stop")
	var seen int
	err = sessiontree.Follow(context.Background(), st, 0, func(e sessiontree.Entry) error {
		if seen++; seen == 2 {
			return fmt.Errorf("at %d: %w", e.Seq, stop)
		}
		return nil
	})
	if !errors.Is(err, stop) || seen != 2 {
		t.Errorf("Follow = %v after %d entries; want stop after 2", err, seen)
	}
}

// TestFollowClosed checks that a watch ends when its database closes.
func TestFollowClosed(t *testing.T) {
	db, err := engine.Open(context.Background(), filepath.Join(t.TempDir(), "s.db"), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := db.CreateSession(context.Background(), sessiontree.SessionMeta{})
	if err != nil {
		t.Fatal(err)
	}
	storetest.RunFollowClosed(t, st, db.Close)
}

// TestFollowDeleted checks that a watch ends when another handle on the
// file (another process, as far as the watch can tell) deletes its
// session.
func TestFollowDeleted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	st, err := openEngine(t, path, true).CreateSession(context.Background(), sessiontree.SessionMeta{})
	if err != nil {
		t.Fatal(err)
	}
	other := openEngine(t, path, false)
	storetest.RunFollowDeleted(t, st, func() error { return other.DeleteSession(context.Background(), st.ID(), sessiontree.DeleteOptions{}) })
}

// TestFollowCancel stops a Follow of the SQLite engine at every point it
// checks its context: its watch's goroutines are gone once it has
// returned.
func TestFollowCancel(t *testing.T) {
	points := 200
	if testing.Short() {
		points = 12
	}
	st, err := openEngine(t, filepath.Join(t.TempDir(), "s.db"), true).CreateSession(context.Background(), sessiontree.SessionMeta{})
	if err != nil {
		t.Fatal(err)
	}
	storetest.RunFollowCancel(t, st, 1500, points)
}
