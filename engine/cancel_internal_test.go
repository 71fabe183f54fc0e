package engine

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
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
	switch {
	case testing.Short():
		tries = 2500 // about one meeting: the full run's catch it
	case raceEnabled:
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

// TestEndedTransactionReportsContext: database/sql rolls a transaction
// back as soon as its context ends, while the function given to Update or
// View still runs. What the function does after that must not run
// outside the transaction (a read of another snapshot, a session it made
// found missing), and Update and View must report the context's error,
// not what the statements or the commit met then ("session ... not
// found", an ErrNotFound, for a session the same transaction made;
// "commit: sql: transaction has already been committed or rolled back",
// an ErrStorage, for one whose outcome is plain).
func TestEndedTransactionReportsContext(t *testing.T) {
	t.Parallel()
	db := openPath(t, filepath.Join(t.TempDir(), "c.db"))
	bg := context.Background()
	a, err := db.CreateSession(bg, sessiontree.SessionMeta{Cwd: "/work/ended"})
	if err != nil {
		t.Fatal(err)
	}
	// endThen ends ctx and waits for database/sql's rollback.
	endThen := func(cancel context.CancelFunc) {
		cancel()
		time.Sleep(50 * time.Millisecond)
	}
	tests := []struct {
		name string
		run  func(ctx context.Context, cancel context.CancelFunc) error
	}{
		{"update reads its own session", func(ctx context.Context, cancel context.CancelFunc) error {
			return db.Update(ctx, func(tx *Tx) error {
				if _, err := tx.CreateSession(sessiontree.SessionMeta{ID: "made-in-tx", Cwd: "/work/ended"}); err != nil {
					return err
				}
				endThen(cancel)
				_, err := tx.OpenSession("made-in-tx")
				return err
			})
		}},
		{"update commits", func(ctx context.Context, cancel context.CancelFunc) error {
			return db.Update(ctx, func(tx *Tx) error {
				if _, err := tx.CreateSession(sessiontree.SessionMeta{ID: "made-in-tx", Cwd: "/work/ended"}); err != nil {
					return err
				}
				endThen(cancel)
				return nil
			})
		}},
		{"view reads again", func(ctx context.Context, cancel context.CancelFunc) error {
			return db.readView(ctx, func(tx *Tx) error {
				if _, err := tx.OpenSession(a.ID()); err != nil {
					return err
				}
				endThen(cancel)
				_, err := tx.OpenSession(a.ID())
				return err
			})
		}},
	}
	for _, tt := range tests {
		ctx, cancel := context.WithCancel(bg)
		err := tt.run(ctx, cancel)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s, its context ended: %v; want context.Canceled", tt.name, err)
		}
		if _, err := db.OpenSession(bg, "made-in-tx"); !errors.Is(err, sessiontree.ErrNotFound) {
			t.Errorf("%s: the session the transaction made: %v; want ErrNotFound", tt.name, err)
		}
	}
}
