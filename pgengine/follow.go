package pgengine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sessiontree/sessiontree"
)

var _ sessiontree.Watcher = (*Storage)(nil)

// followChannel is the channel every write that adds entries to a
// watched session notifies, from a trigger on the sessions row
// (migrate/postgres/0003, 0006 and 0009), with the payload "<session pk> <entry
// count>", and a delete of a watched session (sessionDeletes), with
// "<session pk> deleted".
const followChannel = "sessiontree_appends"

// watchCheck is how long a watch waits for a notification before it looks
// whether its database was closed meanwhile: a Close must end a Follow
// that nothing else would wake.
const watchCheck = 500 * time.Millisecond

// Watch starts a watch of the session for sessiontree.Follow: a
// connection of its own, outside the pool, listening on the channel
// every commit that adds entries notifies (LISTEN/NOTIFY), from this
// process or any other on any machine. Only the session's own commits
// wake it. A connection lost while waiting (a server restarting, say) is
// opened again, for as long as the server stays away, and the wait then
// returns, so that Follow reads the log and misses nothing committed
// meanwhile. Close the watch when done.
func (s *Storage) Watch(ctx context.Context) (sessiontree.Changes, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	w := &watch{s: s, mine: strconv.FormatInt(s.pk, 10) + " "}
	if err := w.connect(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

var _ sessiontree.Reconnecter = (*watch)(nil)

// watch is a [Storage.Watch]: its listening connection, nil after one
// was lost. Not safe for concurrent use.
type watch struct {
	s    *Storage
	mine string // the payload prefix of the session's notifications
	conn *pgx.Conn
}

// connect opens the watch's first listening connection, trying a bounded
// number of times as a write does: a server that cannot be reached when
// the watch starts is an error.
func (w *watch) connect(ctx context.Context) error {
	return w.s.db.retry(ctx, w.op(), func() error { return w.dial(ctx) })
}

// reconnect opens the listening connection again after it was lost:
// while the server is away (lostConnection: down, restarting, not yet
// accepting connections), it tries again, pausing longer each time up to
// watchCheck, until ctx is done or the database is closed.
func (w *watch) reconnect(ctx context.Context) error {
	pause := backoff{max: watchCheck}
	for {
		if err := w.s.check(ctx); err != nil {
			return err
		}
		err := w.dial(ctx)
		if err == nil {
			return nil
		}
		if !lostConnection(err) {
			return opErr(w.op(), err)
		}
		if err := pause.wait(ctx); err != nil {
			return err
		}
	}
}

// op names the watch in errors.
func (w *watch) op() string { return "watch session " + w.s.meta.ID }

// dial opens a listening connection and registers it.
func (w *watch) dial(ctx context.Context) error {
	c, err := pgx.ConnectConfig(ctx, w.s.db.cfg.Copy())
	if err != nil {
		return err
	}
	if err := w.register(ctx, c); err != nil {
		_ = c.Close(context.Background())
		return err
	}
	w.conn = c
	return nil
}

// register registers c's backend as a watcher of the session and sets
// the row's watched flag (migrate/postgres/0006 and 0009), so that its
// writes notify, and then listens on c; updating the session's row, it
// waits for a write in progress to commit, and for a watch closing (which
// may clear the flag). Rows of backends that are gone are removed on the
// way.
func (w *watch) register(ctx context.Context, c *pgx.Conn) error {
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(`DELETE FROM watchers WHERE backend NOT IN (SELECT pid FROM pg_stat_activity WHERE pid IS NOT NULL)`)
	b.Queue(`INSERT INTO watchers (session, backend) VALUES ($1, pg_backend_pid()) ON CONFLICT DO NOTHING`, w.s.pk)
	b.Queue(`UPDATE sessions SET watched = true WHERE pk = $1`, w.s.pk)
	b.Queue(`COMMIT`)
	if err := c.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	// A write that commits before LISTEN runs is in the log Follow reads
	// next; one after it notifies. LISTEN is a statement of its own, the
	// connection's last: a batch prepares all its statements first.
	_, err := c.Exec(ctx, "LISTEN "+followChannel)
	return err
}

// unregister removes c's backend from the session's watchers and, the
// session's row locked first (so that the next statement sees every
// registration committed before), clears the row's watched flag unless
// another watcher remains.
func (w *watch) unregister(ctx context.Context, c *pgx.Conn) error {
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(`SELECT 1 FROM sessions WHERE pk = $1 FOR NO KEY UPDATE`, w.s.pk)
	b.Queue(`DELETE FROM watchers WHERE session = $1 AND backend = pg_backend_pid()`, w.s.pk)
	b.Queue(`UPDATE sessions SET watched = false
		WHERE pk = $1 AND watched AND NOT EXISTS (SELECT 1 FROM watchers WHERE session = $1)`, w.s.pk)
	b.Queue(`COMMIT`)
	err := c.SendBatch(ctx, b).Close()
	return errors.Join(err, rollback(ctx, c))
}

// Wait returns once a commit added entries to the session, or once the
// listening connection was lost and opened again (a commit may have
// come meanwhile).
func (w *watch) Wait(ctx context.Context) error {
	for {
		if err := w.s.check(ctx); err != nil {
			return err
		}
		if w.conn == nil {
			return w.reconnect(ctx)
		}
		wctx, cancel := context.WithTimeout(ctx, watchCheck)
		n, err := w.conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			if strings.HasPrefix(n.Payload, w.mine) {
				return nil
			}
		case ctx.Err() != nil:
			return ctx.Err()
		case wctx.Err() != nil && !w.conn.IsClosed():
			// watchCheck passed: look at the database again.
		default:
			w.drop()
		}
	}
}

// Lost reports whether err, from a read of the log, came of the server
// going away (lostConnection). The listening connection is then dropped
// too, so that the next Wait opens it again, waiting for the server to
// come back, before Follow reads the log again.
func (w *watch) Lost(err error) bool {
	if !lostConnection(err) {
		return false
	}
	if w.conn != nil {
		w.drop()
	}
	return true
}

// drop closes a connection that failed.
func (w *watch) drop() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = w.conn.Close(ctx)
	w.conn = nil
}

// Close closes the listening connection.
func (w *watch) Close() error {
	if w.conn == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := errors.Join(w.unregister(ctx, w.conn), w.conn.Close(ctx))
	w.conn = nil
	if err != nil {
		return fmt.Errorf("close watch of session %s: %w", w.s.meta.ID, storageErr(err))
	}
	return nil
}
