package pgengine_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/pgengine"
	"github.com/sessiontree/sessiontree/store"
)

// TestPushMeetsAWriter pushes a session's new entries into PostgreSQL
// while a writer on the target has appended an entry of its own and not
// yet committed: the push must wait for it and report a conflict (its
// check that the target still has the entries it planned on), not
// append the source's entries after the writer's, which would leave the
// writer's entry off the active path and the target no copy of the
// source.
func TestPushMeetsAWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.Migrated.Database(t)
	from, err := store.Open(ctx, filepath.Join(t.TempDir(), "source.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { from.Close() })
	to, err := store.OpenURL(ctx, url, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { to.Close() })
	src, err := from.Create(ctx, store.CreateOptions{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	appendTexts := func(s sessiontree.Storage, texts ...string) {
		t.Helper()
		for _, text := range texts {
			if _, err := s.Append(ctx, userDraft(text), sessiontree.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	appendTexts(src, "a", "b")
	if rep, err := store.Push(ctx, from, to, store.PushOptions{}); err != nil || !rep.OK() {
		t.Fatalf("first push = %+v, %v", rep, err)
	}
	appendTexts(src, "c", "d")

	release := holdAppend(t, openWith(t, url, pgengine.Options{}), src.ID(), "t0000001")
	pushed := make(chan store.PushReport, 1)
	go func() {
		rep, err := store.Push(ctx, from, to, store.PushOptions{})
		if err != nil {
			t.Errorf("second push: %v", err)
		}
		pushed <- rep
	}()
	waitForLockWait(t, url)
	release()
	rep := <-pushed
	if len(rep.Results) != 1 || rep.Results[0].Status != store.PushConflict || !errors.Is(rep.Results[0].Err, sessiontree.ErrConflict) {
		t.Errorf("push meeting a writer = %+v; want a conflict", rep.Results)
	}
	info, err := to.Info(ctx, src.ID())
	if err != nil || info.Entries != 3 {
		t.Errorf("target has %d entries (%v); want 3, the writer's after the first push's 2", info.Entries, err)
	}
}

// TestTryUpdateMeetsAHeldRow: a read of a session's row in TryUpdate
// that meets the row held by another writer is refused with ErrLocked,
// and WaitForLock then waits for that row, not returning at once (the
// store's gate would try again and again meanwhile).
func TestTryUpdateMeetsAHeldRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openDB(t)
	st := newSession(t, db)
	release := holdAppend(t, db, st.ID(), "held0001")
	for _, read := range []func(tx sessiontree.DatabaseTx) error{
		func(tx sessiontree.DatabaseTx) error { _, err := tx.SessionInfo(st.ID()); return err },
		func(tx sessiontree.DatabaseTx) error { _, err := tx.SessionEntryCount(st.ID()); return err },
	} {
		if err := db.TryUpdate(ctx, read); !errors.Is(err, sessiontree.ErrLocked) {
			t.Fatalf("TryUpdate reading a held row = %v; want ErrLocked", err)
		}
		brief, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err := db.WaitForLock(brief)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("WaitForLock while the row is held = %v; want it to wait (DeadlineExceeded)", err)
		}
	}
	release()
	// Update, not TryUpdate: a WaitForLock cut short leaves its backend
	// waiting for the row until the server notices, a moment.
	if err := db.Update(ctx, func(tx sessiontree.DatabaseTx) error { _, err := tx.SessionInfo(st.ID()); return err }); err != nil {
		t.Errorf("Update reading the row released = %v", err)
	}
}

// holdAppend appends an entry with id under session id's leaf in a
// write transaction of db that holds the session's row until release
// is called, which commits it.
func holdAppend(t testing.TB, db *pgengine.DB, id, entryID string) (release func()) {
	t.Helper()
	ctx := context.Background()
	wrote, commit, done := make(chan error, 1), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- db.Update(ctx, func(tx sessiontree.DatabaseTx) error {
			st, err := tx.Session(id)
			if err != nil {
				return err
			}
			leaf, err := st.Leaf(ctx)
			if err != nil {
				return err
			}
			e, err := sessiontree.BuildEntry(userDraft("held"), entryID, leaf, sessiontree.FormatTime(time.Now()))
			if err == nil {
				err = tx.AppendEntries(st, []sessiontree.Entry{e})
			}
			wrote <- err
			<-commit
			return err
		})
	}()
	if err := <-wrote; err != nil {
		close(commit)
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			close(commit)
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(release) // a test that failed before releasing it
	return release
}

// waitForLockWait returns once a connection to the database at url waits
// for a lock.
func waitForLockWait(t testing.TB, url string) {
	t.Helper()
	conn := connect(t, url)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no connection waits for a lock within 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
