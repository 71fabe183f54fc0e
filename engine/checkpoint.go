package engine

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
)

// Checkpoints in the background.
//
// Under WAL, SQLite copies the log back into the database file (a
// checkpoint) once the log holds wal_autocheckpoint pages (1000 by
// default), and it does so inside the commit that crossed the mark: that
// commit, an append like any other, pays for copying every page changed
// since the last checkpoint and for two fsyncs, so that one append in a
// couple of hundred takes milliseconds (about an eighth of the appends'
// wall time in bench_test.go on a busy machine). The engine's write
// connection turns that off and counts the pages its commits write
// instead; at the same mark it wakes a goroutine that runs the same
// checkpoint (PASSIVE: it neither waits for nor blocks readers and
// writers) on a connection of its own. The log is synced and copied as
// often as before, so durability is unchanged; the appends no longer wait
// for it.

// checkpointPages is how many pages the log takes before a checkpoint:
// SQLite's own default.
const checkpointPages = 1000

// The log starts over from its beginning only when a write transaction
// begins while every frame of it is copied back; under a steady stream
// of commits (a fleet of agents) that moment never comes, and PASSIVE
// checkpoints alone let the log grow without bound: 1.3 GB in 3 s of
// BenchmarkFleet, every commit writing pages of the file the kernel had
// never cached. So once the log holds restartFrames frames, the
// checkpointer also runs a RESTART checkpoint, holding
// the write connection meanwhile so that this process's writers leave it
// the write lock: it copies what the last commits added, waits for the
// readers of the log to move on, and leaves the log to start over at the
// next commit. It waits at most restartWait for a lock (another
// process's writer, a reader of an old snapshot), the time the appends
// wait for it then, and otherwise leaves it to the next wake-up.
//
// Readers that always hold a snapshot (a server, searches, exports, in
// this process or others, each overlapping the one before) leave no
// moment when the whole log is copied back: a PASSIVE checkpoint stops at
// the oldest reader's snapshot. The RESTART is then tried anyway, since it
// waits for those readers (readers that begin meanwhile read the file
// alone), but a reader that holds its snapshot longer than the wait
// outlasts it every time, and the log grew by every page written. So each
// RESTART that fails waits twice as long the next time, up to
// restartWaitMax, and one that succeeds halves it, down to restartWait:
// the appends pay a longer wait only while readers keep the log from
// starting over.
const (
	restartFrames  = 8 * checkpointPages
	restartWait    = 5 * time.Millisecond
	restartWaitMax = 320 * time.Millisecond
)

// checkpoint runs a PASSIVE checkpoint on c, then a RESTART one when the
// log is restartAt frames long or more (see restartFrames), waiting for
// its locks as long as cp says. Errors (another process checkpointing, a
// lock held longer than the wait: busy) leave the work to the next
// wake-up.
func (db *DB) checkpoint(ctx context.Context, c *conn, cp *checkpointer) {
	if !longLog(ctx, c, cp.restartAt.Load()) {
		return
	}
	if err := cp.waitOn(ctx, c); err != nil {
		return
	}
	ok := false
	_ = withConn(ctx, db.w.DB, func(*conn) error {
		ok = restart(ctx, c)
		return nil
	})
	cp.restarted(ok)
}

// longLog runs a PASSIVE checkpoint on c and tells whether the log holds
// restartAt frames or more: a RESTART is due.
func longLog(ctx context.Context, c *conn, restartAt int64) bool {
	var busy, frames, copied int64
	err := c.row(ctx, `PRAGMA wal_checkpoint(PASSIVE)`, nil, &busy, &frames, &copied)
	return err == nil && frames >= restartAt
}

// restart runs a RESTART checkpoint on c, waiting for its locks as long
// as c's busy timeout, and tells whether the log is to start over.
func restart(ctx context.Context, c *conn) bool {
	var busy, frames, copied int64
	err := c.row(ctx, `PRAGMA wal_checkpoint(RESTART)`, nil, &busy, &frames, &copied)
	return err == nil && busy == 0
}

// waitOn sets c's busy timeout to the wait of the next RESTART
// checkpoint, when it changed.
func (cp *checkpointer) waitOn(ctx context.Context, c *conn) error {
	if cp.wait == cp.waitSet {
		return nil
	}
	if _, err := c.exec(ctx, `PRAGMA busy_timeout = `+strconv.FormatInt(cp.wait.Milliseconds(), 10)); err != nil {
		return err
	}
	cp.waitSet = cp.wait
	return nil
}

// restarted sets the next RESTART checkpoint's wait: half the last, down
// to restartWait, after one that succeeded; twice the last, up to
// restartWaitMax, after one that did not (see restartWaitMax).
func (cp *checkpointer) restarted(ok bool) {
	if ok {
		cp.wait = max(cp.wait/2, restartWait)
	} else {
		cp.wait = min(2*cp.wait, restartWaitMax)
	}
}

// checkpointer runs the checkpoints of a DB. It starts with the first
// commit (see committed): a process that only reads has none.
type checkpointer struct {
	wake chan struct{} // buffered: a wake-up pending
	stop chan struct{}
	done sync.WaitGroup
	// ctx ends with stop: a RESTART checkpoint waiting for the write
	// connection gives up.
	ctx    context.Context
	cancel context.CancelFunc

	// pages written since the last wake-up; only the holder of the write
	// connection touches it.
	pages int
	// written counts every page the write connection's commits wrote,
	// for BenchmarkFleet's pages per entry.
	written atomic.Int64
	// restartAt is restartFrames; tests make it smaller.
	restartAt atomic.Int64
	// wait is how long the next RESTART checkpoint waits for a lock,
	// waitSet the busy timeout its connection has (0: none set yet);
	// only the checkpointer's goroutine touches them.
	wait, waitSet time.Duration
}

// startCheckpointer starts the goroutine that runs the checkpoints, once,
// unless the DB is closing; its connection opens at the first checkpoint.
func (db *DB) startCheckpointer() {
	db.cpOnce.Do(func() {
		if !db.closed.Load() {
			db.cp = newCheckpointer(db)
		}
	})
}

func newCheckpointer(db *DB) *checkpointer {
	cp := &checkpointer{wake: make(chan struct{}, 1), stop: make(chan struct{})}
	cp.ctx, cp.cancel = context.WithCancel(context.Background())
	cp.restartAt.Store(restartFrames)
	cp.wait = restartWait
	cp.done.Add(1)
	go func() {
		defer cp.done.Done()
		// The connection opens at the first wake-up, not with the
		// database: a process that writes less than a checkpoint's worth
		// (every read command, most write commands) never pays for
		// opening and closing it.
		var c *conn
		defer func() {
			if c != nil {
				c.Close()
			}
		}()
		for {
			select {
			case <-cp.stop:
				return
			case <-cp.wake:
				if c == nil {
					dc, err := db.wc.Connect(context.Background())
					if err != nil {
						continue // as a failed checkpoint: the next wake-up tries again
					}
					// Only a RESTART checkpoint waits (PASSIVE never
					// does), as long as cp.wait (see waitOn).
					c, cp.waitSet = dc.(*conn), 0
				}
				db.checkpoint(cp.ctx, c, cp)
			}
		}
	}()
	return cp
}

// committed counts the pages the write connection c has written since it
// was last asked, and wakes the checkpointer when they reach the mark.
func (db *DB) committed(c *conn) {
	st, ok := c.Conn.(sqlite.DBStatus)
	if !ok {
		return
	}
	if db.startCheckpointer(); db.cp == nil {
		return
	}
	n, _, err := st.Status(sqlite.DBStatusCacheWrite, true)
	if err != nil || n == 0 {
		return
	}
	cp := db.cp
	cp.written.Add(int64(n))
	if cp.pages += n; cp.pages >= checkpointPages {
		cp.pages = 0
		select {
		case cp.wake <- struct{}{}:
		default:
		}
	}
}

// stopCheckpointer stops the goroutine and waits for it; none starts
// afterwards. Then, when the write connection has written pages since
// the last checkpoint, it runs a PASSIVE one on it.
//
// A process that writes less than a checkpoint's worth never wakes its
// checkpointer, and SQLite checkpoints at close only when the last
// connection to the database, of any process, closes. So while one
// process keeps the database open (a server, a follower, an agent that
// reads), commands that each append a few entries and exit left every
// page they wrote in the log, which grew by all of them (22,000 frames,
// 86 MB, after 600 processes of five appends each). The checkpoint at
// Close copies what this process's commits left, and what others left
// before them, as the last connection's close does when nobody else has
// the database open; the next writer then starts the log over. When
// readers always hold a snapshot that would not be enough (the log grew
// by 1,800 frames every 50 such processes), so once the log holds
// restartAt frames the checkpoint at Close is also a RESTART, which
// waits restartWaitMax at most for them: a process that lives less long
// than a checkpoint's worth of writes cannot learn the wait the
// checkpointer would (see restartWaitMax), and only a long log costs it.
func (db *DB) stopCheckpointer() {
	db.cpOnce.Do(func() {})
	if db.cp == nil {
		return
	}
	close(db.cp.stop)
	db.cp.cancel()
	db.cp.done.Wait()
	ctx := context.Background()
	_ = withConn(ctx, db.w.DB, func(c *conn) error {
		if db.cp.pages == 0 || !longLog(ctx, c, db.cp.restartAt.Load()) {
			return nil
		}
		if _, err := c.exec(ctx, `PRAGMA busy_timeout = `+strconv.FormatInt(restartWaitMax.Milliseconds(), 10)); err == nil {
			restart(ctx, c)
		}
		return nil
	})
}
