package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/canceltest"
)

// AppendStep appends a custom entry numbered i to s, as a writer of a
// followed session does, and returns it.
func AppendStep(t testing.TB, s sessiontree.Storage, i int) sessiontree.Entry {
	t.Helper()
	e, err := s.Append(context.Background(), stepDraft(t, i), sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// stepDraft is the draft of the step numbered i.
func stepDraft(t testing.TB, i int) sessiontree.Draft {
	t.Helper()
	fields, err := sessiontree.Fields("customType", "step", "data", map[string]int{"i": i})
	if err != nil {
		t.Fatal(err)
	}
	return sessiontree.Draft{Type: sessiontree.TypeCustom, Fields: fields}
}

// appendStepsAtOnce appends the steps numbered 0 to n-1 to s, in one
// write (AppendAll) where s is a database's session, else one by one: a
// log to read, whose writes are not what is tested (pgengine's 1,500
// appends one by one took its serial TestFollowCancel 2-4 s of its
// 17-26 s under the race detector).
func appendStepsAtOnce(t testing.TB, s sessiontree.Storage, n int) {
	t.Helper()
	ds, ok := s.(sessiontree.DatabaseSession)
	if !ok {
		AppendSteps(t, s, 0, n, 0)
		return
	}
	drafts := make([]sessiontree.Draft, n)
	for i := range drafts {
		drafts[i] = stepDraft(t, i)
	}
	if _, err := ds.AppendAll(context.Background(), drafts, sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
}

// AppendSteps appends the steps numbered from to from+n-1 to s, as
// AppendStep does, pausing pause after each (none when 0), and returns
// their ids in order: a writer of a followed session.
func AppendSteps(t testing.TB, s sessiontree.Storage, from, n int, pause time.Duration) []string {
	t.Helper()
	ids := make([]string, 0, n)
	for i := range n {
		ids = append(ids, AppendStep(t, s, from+i).ID)
		if pause > 0 {
			time.Sleep(pause)
		}
	}
	return ids
}

// RunFollow checks [sessiontree.Follow] on reader while writer (the same
// session, through another handle when the backend has one: another
// connection pool or process) appends: before entries are there first,
// Follow starts after the first of them, sees the rest, then each of
// three more appends as it is committed, in order, each with its Seq,
// and ends with context.Canceled when its context is.
func RunFollow(t *testing.T, before int, reader, writer sessiontree.Storage) {
	want := AppendSteps(t, writer, 0, before, 0)[1:] // Follow starts after the first
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
		want = append(want, AppendStep(t, writer, before+i).ID)
		check(len(want)-1, next())
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Follow after cancel = %v; want context.Canceled", err)
	}
}

// RunFollowClosed checks that [sessiontree.Follow] on st, waiting for
// entries, ends with an error matching [sessiontree.ErrClosed] within
// 10 s of closeDB closing st's database.
func RunFollowClosed(t *testing.T, st sessiontree.Storage, closeDB func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		done <- sessiontree.Follow(context.Background(), st, 0, func(sessiontree.Entry) error { return nil })
	}()
	// Most likely Follow is waiting by then; if not, its Watch or Log
	// meets the closed database, with the same error.
	time.Sleep(100 * time.Millisecond)
	if err := closeDB(); err != nil {
		t.Errorf("Close = %v", err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, sessiontree.ErrClosed) {
			t.Errorf("Follow on a closed database = %v; want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Follow did not end within 10 s of Close")
	}
}

// RunFollowDeleted checks that [sessiontree.Follow] on st, waiting for
// entries, ends with an error matching [sessiontree.ErrNotFound] within
// 10 s of del deleting st's session (by another handle, as another
// process would): a follow of a session that is gone has nothing left
// to wait for.
func RunFollowDeleted(t *testing.T, st sessiontree.Storage, del func() error) {
	t.Helper()
	AppendStep(t, st, 0)
	seen := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- sessiontree.Follow(context.Background(), st, 0, func(sessiontree.Entry) error {
			seen <- struct{}{}
			return nil
		})
	}()
	select {
	case <-seen: // Follow has read the log; it waits next
	case err := <-done:
		t.Fatalf("Follow returned %v before the first entry", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no entry within 10 s")
	}
	time.Sleep(100 * time.Millisecond)
	if err := del(); err != nil {
		t.Fatalf("delete: %v", err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, sessiontree.ErrNotFound) {
			t.Errorf("Follow of a deleted session = %v; want ErrNotFound", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Follow did not end within 10 s of the session's deletion")
	}
}

// RunFollowCancel stops a Follow of s at every point it checks its
// context (a spread of at most points of them), following n entries
// appended first: each Follow returns its context's error, and once it
// has, nothing it started is left (the watch's goroutines and
// connection).
func RunFollowCancel(t *testing.T, s sessiontree.Storage, n, points int) {
	t.Helper()
	appendStepsAtOnce(t, s, n)
	var warm canceltest.Resources
	canceltest.Sweep(t, points, func(ctx context.Context) error {
		stop := ctx.(*canceltest.Ctx).Stop
		seen := 0
		err := sessiontree.Follow(ctx, s, 0, func(sessiontree.Entry) error {
			if seen++; seen == n {
				stop()
			}
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Follow = %v; want its context's error", err)
		}
		return nil // stopped, as every run is
	}, func(k int64, _ error) {
		if k == 0 {
			warm = canceltest.Take()
			return
		}
		warm.Settled(t, "after a stopped Follow")
	})
}
