package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sessiontree/sessiontree"
)

// lockGrace is how long a store write waits for the write lock, silently,
// before it says it is waiting ([ImportOptions.Waiting]) or gives up
// ([ImportOptions.NoWait]): the writes that hold the lock a moment, such
// as an append, end well within it.
const lockGrace = 250 * time.Millisecond

// gate runs the writes of an import or an index catch-up with their rule
// for another process's write lock: wait as long as the context allows
// (telling waiting once a wait outlasts the grace), or, with noWait, give
// up after the grace with an error matching sessiontree.ErrLocked. The
// rule is one for the whole operation, so a held lock costs it one wait,
// not the busy timeout per file or chunk.
type gate struct {
	d       sessiontree.Database
	noWait  bool
	waiting func()
	grace   time.Duration
}

// write runs fn in a write transaction, with the gate's rule for a lock
// another process holds. fn may run more than once, as for
// [sessiontree.Database.Update].
func (g gate) write(ctx context.Context, fn func(tx sessiontree.DatabaseTx) error) error {
	return g.retry(ctx, func() error { return g.d.TryUpdate(ctx, fn) })
}

// retry runs try until it does not meet a lock another process holds,
// waiting by the gate's rule in between.
func (g gate) retry(ctx context.Context, try func() error) error {
	for {
		err := try()
		if !lockHeld(err) {
			return err
		}
		if err := g.wait(ctx); err != nil {
			return err
		}
	}
}

// wait waits for the write lock to be free, by the gate's rule.
func (g gate) wait(ctx context.Context) error {
	if g.grace > 0 {
		brief, cancel := context.WithTimeout(ctx, g.grace)
		err := g.d.WaitForLock(brief)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			return err
		}
	}
	if g.noWait {
		return lockedError(g.d)
	}
	if g.waiting != nil {
		g.waiting()
	}
	return g.d.WaitForLock(ctx)
}

// lockHeld tells whether err says another process holds the write lock
// (or an import gave up waiting for it, NoWait), which waiting can end.
// A writer's claim on a session (a *sessiontree.ClaimedError, which
// matches sessiontree.ErrLocked too) is not: the write met it inside its
// transaction, the lock is free, and only the claim's holder ends it, so
// a write that waited for the lock and tried again met it again, without
// end.
func lockHeld(err error) bool {
	var claimed *sessiontree.ClaimedError
	return errors.Is(err, sessiontree.ErrLocked) && !errors.As(err, &claimed)
}

// lockedError says that another process holds db's write lock.
func lockedError(db interface{ Path() string }) error {
	return fmt.Errorf("another process is writing to %s: %w", db.Path(), sessiontree.ErrLocked)
}
