package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
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
	db      *engine.DB
	noWait  bool
	waiting func()
	grace   time.Duration
}

// update runs fn in a write transaction, with the gate's rule for a lock
// another process holds. fn may run more than once, as for
// engine.DB.Update.
func (g gate) update(ctx context.Context, fn func(tx *engine.Tx) error) error {
	for {
		err := g.db.TryUpdate(ctx, fn)
		if !errors.Is(err, sessiontree.ErrLocked) {
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
		err := g.db.WaitForLock(brief)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			return err
		}
	}
	if g.noWait {
		return lockedError(g.db)
	}
	if g.waiting != nil {
		g.waiting()
	}
	return g.db.WaitForLock(ctx)
}

// lockedError says that another process holds db's write lock.
func lockedError(db *engine.DB) error {
	return fmt.Errorf("another process is writing to %s: %w", db.Path(), sessiontree.ErrLocked)
}
