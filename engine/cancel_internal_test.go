package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestCancelledBeginLeavesNoTransaction: a context that ends while BEGIN
// runs can make the driver return the context's error for a BEGIN that
// did begin. The write or read that asked for it must not leave its
// connection inside that transaction: the next BEGIN on it failed with
// "cannot start a transaction within a transaction", every write of the
// DB failed so from then on, and the write connection held the file's
// write lock, so that other processes' writes failed too.
func TestCancelledBeginLeavesNoTransaction(t *testing.T) {
	t.Parallel()
	db := openPath(t, filepath.Join(t.TempDir(), "c.db"))
	bg := context.Background()
	noop := func(q) error { return nil }
	// The context must end in the moment between the BEGIN's step and the
	// driver's return, which about 1 try in 2,500 meets.
	tries := 20000
	if raceEnabled {
		tries = 5000
	}
	for i := range tries {
		ctx, cancel := context.WithTimeout(bg, time.Duration(i%20)*time.Microsecond)
		_ = db.update(ctx, false, noop)
		_ = db.view(ctx, noop)
		cancel()
		if err := db.update(bg, false, noop); err != nil {
			t.Fatalf("try %d: a write after one whose context ended: %v", i, err)
		}
		if err := db.view(bg, noop); err != nil {
			t.Fatalf("try %d: a read after one whose context ended: %v", i, err)
		}
	}
}

// TestCancelledTryUpdateKeepsBusyTimeout: TryUpdate sets the write
// connection's busy timeout to 0 for its BEGIN and back after it. A
// context that ends as the first PRAGMA returns (the driver then returns
// the context's error for a PRAGMA that ran) must not leave the
// connection without its busy timeout, which the pool would hand to every
// later write.
func TestCancelledTryUpdateKeepsBusyTimeout(t *testing.T) {
	t.Parallel()
	db := openPath(t, filepath.Join(t.TempDir(), "c.db"))
	bg := context.Background()
	want := db.opts.BusyTimeout.Milliseconds()
	// On main about 1 try in 100 left it so.
	tries := 3000
	if raceEnabled {
		tries = 1000
	}
	for i := range tries {
		ctx, cancel := context.WithTimeout(bg, time.Duration(i%20)*time.Microsecond)
		_ = db.TryUpdate(ctx, func(*Tx) error { return nil })
		cancel()
		var got int64
		if err := withConn(bg, db.w.DB, func(c *conn) error { return c.row(bg, `PRAGMA busy_timeout`, nil, &got) }); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("try %d: the write connection's busy_timeout is %d after a TryUpdate whose context ended; want %d", i, got, want)
		}
	}
}
