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
