package sessiontree_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/memory"
)

func appendStep(t *testing.T, s sessiontree.Storage, i int) sessiontree.Entry {
	t.Helper()
	fields, err := sessiontree.Fields("customType", "step", "data", map[string]int{"i": i})
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.Append(context.Background(), sessiontree.Draft{Type: sessiontree.TypeCustom, Fields: fields}, sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestFollow follows a session while a writer appends to it: through the
// engine's watch (the writer on another connection pool of the file) and
// through polling (the memory backend).
func TestFollow(t *testing.T) {
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
			var want []string
			for i := range tt.before {
				want = append(want, appendStep(t, writer, i).ID)
			}
			want = want[1:] // Follow starts after the first
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			got := make(chan sessiontree.Entry)
			done := make(chan error, 1)
			go func() {
				done <- sessiontree.Follow(ctx, reader, 1, func(e sessiontree.Entry) error {
					got <- e
					return nil
				})
			}()
			next := func() sessiontree.Entry {
				t.Helper()
				select {
				case e := <-got:
					return e
				case err := <-done:
					t.Fatalf("Follow returned %v before the entries came", err)
				case <-time.After(10 * time.Second):
					t.Fatal("no entry within 10 s")
				}
				return sessiontree.Entry{}
			}
			check := func(i int, e sessiontree.Entry) {
				t.Helper()
				if e.ID != want[i] || e.Seq != int64(i+2) {
					t.Fatalf("entry %d followed = %s (seq %d); want %s (seq %d)", i, e.ID, e.Seq, want[i], i+2)
				}
			}
			for i := range want {
				check(i, next())
			}
			for i := range 3 {
				want = append(want, appendStep(t, writer, tt.before+i).ID)
				check(len(want)-1, next())
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("Follow after cancel = %v; want context.Canceled", err)
			}
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
	for i := range 3 {
		appendStep(t, st, i)
	}
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
	done := make(chan error, 1)
	go func() {
		done <- sessiontree.Follow(context.Background(), st, 0, func(sessiontree.Entry) error { return nil })
	}()
	// Most likely Follow is waiting by then; if not, its Watch or Log
	// meets the closed database, with the same error.
	time.Sleep(100 * time.Millisecond)
	db.Close()
	select {
	case err := <-done:
		if !errors.Is(err, sessiontree.ErrClosed) {
			t.Errorf("Follow on a closed database = %v; want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Follow did not end within 10 s of Close")
	}
}
