package engine

import (
	"context"
	"sync"
	"sync/atomic"

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

// checkpointer runs the checkpoints of a DB. It starts with the first
// commit (see committed): a process that only reads has none.
type checkpointer struct {
	wake chan struct{} // buffered: a wake-up pending
	stop chan struct{}
	done sync.WaitGroup

	// pages written since the last wake-up; only the holder of the write
	// connection touches it.
	pages int
	// written counts every page the write connection's commits wrote,
	// for BenchmarkFleet's pages per entry.
	written atomic.Int64
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
					c = dc.(*conn)
				}
				// Errors (another process checkpointing: busy) leave the
				// work to the next wake-up.
				_, _ = c.exec(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`)
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
// afterwards.
func (db *DB) stopCheckpointer() {
	db.cpOnce.Do(func() {})
	if db.cp != nil {
		close(db.cp.stop)
		db.cp.done.Wait()
	}
}
