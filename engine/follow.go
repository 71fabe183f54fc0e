package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/sessiontree/sessiontree"
)

var _ sessiontree.Watcher = (*Storage)(nil)

// followPoll is how often a watch reads the database's data version. The
// read is a pragma on a connection of the watch's own, which costs
// microseconds and touches no page of the database (SQLite compares a
// counter in the WAL index), so a tail shows a commit within this.
const followPoll = 50 * time.Millisecond

// Watch starts a watch of the database for sessiontree.Follow: it holds
// a read connection of its own, outside the pool, and reports each
// change of SQLite's data version, which every commit to the file moves,
// by this process or another. A commit to any session of the database
// wakes it. Close the watch when done.
func (s *Storage) Watch(ctx context.Context) (sessiontree.Changes, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	dc, err := s.db.rc.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("watch session %s: %w", s.meta.ID, translate(err))
	}
	w := &watch{s: s, c: dc.(*conn)}
	if w.version, err = w.read(ctx); err != nil {
		w.c.Close()
		return nil, err
	}
	return w, nil
}

// watch is a [Storage.Watch]: its connection and the data version last
// seen on it. Not safe for concurrent use.
type watch struct {
	s       *Storage
	c       *conn
	version int64
}

// read returns the data version seen on the watch's connection.
func (w *watch) read(ctx context.Context) (int64, error) {
	var v int64
	if err := w.c.row(ctx, `PRAGMA data_version`, nil, &v); err != nil {
		return 0, fmt.Errorf("watch session %s: %w", w.s.meta.ID, translate(err))
	}
	return v, nil
}

// Wait returns once the data version moved, checking every followPoll.
func (w *watch) Wait(ctx context.Context) error {
	t := time.NewTicker(followPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if err := w.s.check(ctx); err != nil {
			return err
		}
		v, err := w.read(ctx)
		if err != nil {
			return err
		}
		if v != w.version {
			w.version = v
			return nil
		}
	}
}

// Close closes the watch's connection.
func (w *watch) Close() error { return w.c.Close() }
