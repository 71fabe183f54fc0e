package engine_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// holdLock holds the write lock of db in a transaction until the returned
// function is called.
func holdLock(t *testing.T, db *engine.DB) (release func()) {
	t.Helper()
	held, done := make(chan struct{}), make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- db.Update(context.Background(), func(tx *engine.Tx) error {
			close(held)
			<-done
			return nil
		})
	}()
	select {
	case <-held:
	case err := <-errc:
		t.Fatalf("Update() = %v", err)
	}
	return func() {
		close(done)
		if err := <-errc; err != nil {
			t.Errorf("holder's Update() = %v", err)
		}
	}
}

// TestTryUpdate: while another connection holds the write lock, TryUpdate
// fails at once with ErrLocked without running its function, and the
// connection keeps its busy timeout for the writes after it;
// WaitForLock returns once the lock is free, or when its context ends.
func TestTryUpdate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	a := openDB(t, path, engine.Options{BusyTimeout: 2 * time.Second})
	b := openDB(t, path, engine.Options{})
	release := holdLock(t, b)

	start := time.Now()
	ran := false
	err := a.TryUpdate(ctx, func(*engine.Tx) error { ran = true; return nil })
	if !errors.Is(err, sessiontree.ErrLocked) || ran {
		t.Fatalf("TryUpdate() while locked = %v (ran %v); want ErrLocked, not run", err, ran)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("TryUpdate() while locked took %v; want at once", d)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	if err := a.WaitForLock(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitForLock() while locked = %v; want the context's deadline", err)
	}
	cancel()

	// The busy timeout is back: an Update waits for the holder.
	done := make(chan error, 1)
	go func() {
		done <- a.Update(ctx, func(tx *engine.Tx) error {
			_, err := tx.CreateSession(sessiontree.SessionMeta{Cwd: "/waited"})
			return err
		})
	}()
	time.Sleep(300 * time.Millisecond)
	release()
	if err := <-done; err != nil {
		t.Fatalf("Update() waiting for the holder = %v; want it to wait and succeed", err)
	}
	if err := a.WaitForLock(ctx); err != nil {
		t.Fatalf("WaitForLock() when free = %v", err)
	}
	if err := a.TryUpdate(ctx, func(*engine.Tx) error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("TryUpdate() when free = %v (ran %v); want it run", err, ran)
	}
}

// TestMaxSize: a database bounded by Options.MaxSize refuses the write
// that would grow it beyond, with ErrDiskFull (and ErrStorage) named as
// such, and keeps everything committed before.
func TestMaxSize(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	db := openDB(t, path, engine.Options{MaxSize: 256 << 10})
	st := newSession(t, db)
	text := strings.Repeat("x", 4000)
	var err error
	n := 0
	for ; n < 1000 && err == nil; n++ {
		fields := fmt.Sprintf(`{"message":{"role":"user","content":"%d %s"}}`, n, text)
		_, err = st.Append(ctx, sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: []byte(fields)}, sessiontree.AppendOptions{})
	}
	if !errors.Is(err, sessiontree.ErrDiskFull) || !errors.Is(err, sessiontree.ErrStorage) || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("append %d to a database bounded at 256 KiB = %v; want ErrDiskFull, saying disk full", n, err)
	}
	log, lerr := st.Log(ctx, 0, 0)
	if lerr != nil || len(log) != n-1 {
		t.Fatalf("after the refused append the log has %d entries, %v; want the %d committed", len(log), lerr, n-1)
	}
}
