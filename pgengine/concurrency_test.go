package pgengine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/pgengine"
)

func userDraft(text string) sessiontree.Draft {
	f, err := sessiontree.Fields("message", map[string]any{"role": "user", "content": text})
	if err != nil {
		panic(err)
	}
	return sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: f}
}

// TestParallelSessions: writers to different sessions, each through its
// own Storage, all get their entries, each session one chain.
func TestParallelSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openDB(t)
	const sessions, each = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	ids := make([]string, sessions)
	for i := range sessions {
		st := newSession(t, db)
		ids[i] = st.ID()
		wg.Go(func() {
			for j := range each {
				if _, err := st.Append(ctx, userDraft(fmt.Sprintf("s%d e%d", i, j)), sessiontree.AppendOptions{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, id := range ids {
		st, err := db.OpenSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		leaf, _ := st.Leaf(ctx)
		path, err := st.FullPath(ctx, leaf)
		if err != nil || len(path) != each {
			t.Errorf("session %s: FullPath = %d entries, %v; want %d", id, len(path), err, each)
		}
	}
}

// TestGuardedWritersOnOneSession: writers on one session, each appending
// only on the leaf it read (IfLeaf) and reading again on a conflict,
// make one chain holding every write; conflicts are reported, never lost
// writes or forks.
func TestGuardedWritersOnOneSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openDB(t)
	first := newSession(t, db)
	const writers, each = 6, 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	conflicts := 0
	errs := make(chan error, writers)
	for w := range writers {
		st, err := db.OpenSession(ctx, first.ID())
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for j := 0; j < each; {
				leaf, err := st.Leaf(ctx)
				if err != nil {
					errs <- err
					return
				}
				_, err = st.Append(ctx, userDraft(fmt.Sprintf("w%d e%d", w, j)), sessiontree.IfLeaf(leaf))
				var ce *sessiontree.ConflictError
				switch {
				case errors.As(err, &ce):
					mu.Lock()
					conflicts++
					mu.Unlock()
				case err != nil:
					errs <- err
					return
				default:
					j++
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	leaf, _ := first.Leaf(ctx)
	path, err := first.FullPath(ctx, leaf)
	if err != nil || len(path) != writers*each {
		t.Fatalf("FullPath = %d entries, %v; want one chain of %d", len(path), err, writers*each)
	}
	log, _ := first.Log(ctx, 0, 0)
	if len(log) != writers*each {
		t.Errorf("log has %d entries; want %d (a refused guarded write must leave nothing)", len(log), writers*each)
	}
	t.Logf("%d guarded writes refused as conflicts", conflicts)
}

// TestClaimTakeoverRace: takers on their own pools race to take over an
// expired claim. Exactly one must win, one fence above the expired
// claim's; every other is refused naming the winner, and the expired
// claim's holder can no longer write.
func TestClaimTakeoverRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var clock sync.Mutex
	at := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { clock.Lock(); defer clock.Unlock(); return at }
	_, url := openDB(t)
	st := newSession(t, openWith(t, url, pgengine.Options{Now: now}))
	old, err := st.Claim(ctx, "old", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	clock.Lock()
	at = at.Add(2 * time.Minute) // the old claim has expired
	clock.Unlock()
	const takers = 8
	got := make([]sessiontree.Claim, takers)
	errs := make([]error, takers)
	var start, wg sync.WaitGroup
	start.Add(1)
	for i := range takers {
		s, err := openWith(t, url, pgengine.Options{Now: now}).OpenSession(ctx, st.ID())
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			start.Wait()
			got[i], errs[i] = s.(*pgengine.Storage).Claim(ctx, fmt.Sprintf("taker-%d", i), time.Minute)
		})
	}
	start.Done()
	wg.Wait()
	var winner sessiontree.Claim
	for i, c := range got {
		if errs[i] == nil {
			if winner != nil {
				t.Fatalf("two takers won: %s (fence %d) and %s (fence %d)", winner.Holder(), winner.Fence(), c.Holder(), c.Fence())
			}
			winner = c
		}
	}
	if winner == nil {
		t.Fatalf("no taker won: %v", errs)
	}
	if winner.Fence() != old.Fence()+1 {
		t.Errorf("winner's fence = %d; want %d", winner.Fence(), old.Fence()+1)
	}
	for i, err := range errs {
		var ce *sessiontree.ClaimedError
		if err != nil && (!errors.As(err, &ce) || ce.Holder != winner.Holder()) {
			t.Errorf("taker %d = %v; want a ClaimedError naming %s", i, err, winner.Holder())
		}
	}
	if _, err := old.Append(ctx, userDraft("late"), sessiontree.AppendOptions{}); !errors.Is(err, sessiontree.ErrStaleClaim) {
		t.Errorf("append through the expired claim = %v; want ErrStaleClaim", err)
	}
}
