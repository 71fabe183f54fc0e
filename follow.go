package sessiontree

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Watcher is implemented by storage that can tell when something may
// have been committed to its session, by this or another process: the
// SQLite engine polls the database's data version, a server database can
// listen for notifications. [Follow] uses it.
type Watcher interface {
	// Watch starts watching. Every commit after Watch returns makes a
	// later [Changes.Wait] return.
	Watch(ctx context.Context) (Changes, error)
}

// Changes is a watch started by [Watcher.Watch]. It need not be safe for
// concurrent use.
type Changes interface {
	// Wait returns once something may have been committed since Watch or
	// the last Wait returned; it may also return when nothing was (a
	// commit to another session of the same database, say). It returns
	// ctx's error when ctx is done first.
	Wait(ctx context.Context) error
	// Close ends the watch.
	Close() error
}

// Reconnecter is implemented by a [Changes] over a connection to a server
// that may go away and come back (a restart): Lost reports whether err,
// which a read of the log returned, came of the server being away. When
// it does, [Follow] waits with the watch (its Wait returning once the
// server is back, or with ctx's error) and reads the log again, instead
// of returning err.
type Reconnecter interface {
	Changes
	Lost(err error) bool
}

// FollowPoll is how often [Follow] reads the log of a storage that is not
// a [Watcher] (the memory and JSONL backends).
const FollowPoll = 250 * time.Millisecond

// followBatch is how many entries Follow reads at once.
const followBatch = 1000

// Follow calls fn with every entry of s whose Seq is greater than after,
// in append order, then with each entry appended later, as it is
// committed, until ctx is done (it then returns ctx's error) or fn or a
// read fails (it returns that error; a session deleted meanwhile, by
// this process or another, is an error matching [ErrNotFound]). after 0
// starts at the first entry; the Seq of the last entry seen resumes
// where a Follow stopped. Nothing is missed between the entries already
// there and those that follow: the watch starts before the first read.
func Follow(ctx context.Context, s Storage, after int64, fn func(Entry) error) error {
	var ch Changes
	if w, ok := s.(Watcher); ok {
		var err error
		if ch, err = w.Watch(ctx); err != nil {
			return err
		}
		defer ch.Close()
	} else {
		ch = pollChanges{}
	}
	for {
		list, err := s.Log(ctx, after, followBatch)
		if err == nil && len(list) == 0 {
			err = stillThere(ctx, s)
		}
		if r, ok := ch.(Reconnecter); ok && err != nil && r.Lost(err) {
			list, err = nil, nil // read again once Wait has the server back
		}
		if err != nil {
			return err
		}
		for _, e := range list {
			if err := fn(e); err != nil {
				return err
			}
			after = e.Seq
		}
		if len(list) == followBatch {
			continue
		}
		if err := ch.Wait(ctx); err != nil {
			return err
		}
	}
}

// pollChanges is the watch of a storage that cannot tell its commits:
// every FollowPoll may have one.
type pollChanges struct{}

func (pollChanges) Wait(ctx context.Context) error {
	t := time.NewTimer(FollowPoll)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (pollChanges) Close() error { return nil }

// stillThere returns the error of reading s's leaf, which matches
// [ErrNotFound] once the session was deleted: a read of its log then
// finds nothing, as it would of a session that is only idle, and Follow
// asks when it finds nothing new.
func stillThere(ctx context.Context, s Storage) error {
	_, err := s.Leaf(ctx)
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("follow: the session was deleted (%w)", err)
	}
	return err
}
