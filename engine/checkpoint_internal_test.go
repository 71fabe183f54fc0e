package engine

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
)

// TestCheckpointerConnectsOnFirstCheckpoint checks that opening a
// database starts no checkpoint (the checkpointer's connection opens at
// its first wake-up), and that once the write connection has written a
// checkpoint's worth of pages the checkpointer still copies the log into
// the database file, without a Close.
func TestCheckpointerConnectsOnFirstCheckpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openGroupDB(t)
	st := groupSession(t, db)
	path := db.Path()
	size := func() int64 {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	// About 1.5 checkpoints' worth of pages, in appends of 64 KiB.
	text := strings.Repeat("x", 64<<10)
	drafts := make([]sessiontree.Draft, 8)
	for i := range drafts {
		drafts[i] = userDraft(text)
	}
	for written := 0; written < checkpointPages*3/2*pageSize; written += len(drafts) * len(text) {
		if _, err := st.AppendAll(ctx, drafts, sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The checkpoint runs in the background: wait for it, bounded.
	for deadline := time.Now().Add(30 * time.Second); size() <= before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("database file still %d bytes after writing %d pages: no checkpoint ran", size(), checkpointPages*3/2)
		}
	}
}

// TestLogStartsOverUnderReaders: readers that always hold a snapshot (two
// of them, one of this DB's pool and one of another handle on the file,
// as another process, each holding its transaction readerHold, started
// half of it apart) while one session appends. A PASSIVE checkpoint then
// never finds the whole log copied back, since some reader always reads
// an older snapshot, and a RESTART that waits restartWait never outlasts
// the readers; without more the -wal file grew by every page written
// (15,999 frames of 16,000 written). The checkpointer must still make the
// log start over: its RESTART waits longer each time one fails, so the
// log grows by a few times restartAt before one succeeds (up to 7,900
// frames seen at a load of 10), and then starts over.
func TestLogStartsOverUnderReaders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	db := openPath(t, path)
	other := openPath(t, path)
	st := groupSession(t, db)
	const restartAt = checkpointPages
	db.startCheckpointer()
	db.cp.restartAt.Store(restartAt)
	defer holdSnapshots(t, db, other)()
	var longest int64
	text := strings.Repeat("steady ", 400)
	written := int64(24 * restartAt)
	if raceEnabled {
		written = 16 * restartAt // 24 took 12 s
	}
	for db.cp.written.Load() < written {
		if _, err := st.Append(ctx, userDraft(text), sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path + "-wal"); err == nil {
			longest = max(longest, fi.Size())
		}
	}
	// Without a RESTART the log holds every page written; one that finds
	// its window when it can keeps it well under that: 3,400-7,900 frames
	// of 24,000 on a quiet machine, 12,936 once with the whole suite
	// running beside it. The bound is three quarters of what was written.
	const frame = 24 + pageSize
	if bound := written * 3 / 4; longest > bound*frame {
		t.Errorf("the log grew to %d frames while %d pages were written under readers; want at most %d", longest/frame, db.cp.written.Load(), bound)
	}
	t.Logf("%d pages written, the log at most %d frames long", db.cp.written.Load(), longest/frame)
}

// readerHold is how long holdSnapshots's readers hold a snapshot.
const readerHold = 20 * time.Millisecond

// holdSnapshots starts a reader on each of dbs, each always holding a
// snapshot readerHold long, started half of it apart, so that some
// snapshot is always held; stop ends them.
func holdSnapshots(t *testing.T, dbs ...*DB) (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	for i, db := range dbs {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * readerHold / 2)
			for !done.Load() {
				if err := holdSnapshot(context.Background(), db, readerHold); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	return func() {
		done.Store(true)
		wg.Wait()
	}
}

// holdSnapshot reads in a transaction of db's read pool that it holds for
// d.
func holdSnapshot(ctx context.Context, db *DB, d time.Duration) error {
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sessions`).Scan(&n); err != nil {
		return err
	}
	time.Sleep(d)
	return nil
}

// TestLogBoundedUnderShortWriters: while one handle keeps the database
// open (a server, a follower), others each open it, append five entries
// and close, as the sessiontree command's appends do. None writes a
// checkpoint's worth, so none wakes its checkpointer, and SQLite's own
// checkpoint at close runs only for the last connection to the file: the
// -wal file grew by every page they wrote (2,900 frames after 80 of
// them). Each must leave the log copied back at Close, so that it starts
// over and stays short; and when the handle kept open always holds a
// snapshot, which keeps a copy back from making the log start over, the
// log must still start over once it is restartAt long (here 1,000; it
// grew by 1,800 frames every 50 writers).
func TestLogBoundedUnderShortWriters(t *testing.T) {
	t.Parallel()
	for _, readers := range []bool{false, true} {
		t.Run(fmt.Sprintf("readers=%v", readers), func(t *testing.T) {
			t.Parallel()
			longest, writers := shortWriters(t, readers)
			const frame = 24 + pageSize
			if longest > 2*checkpointPages*frame {
				t.Errorf("the log grew to %d frames under %d writers of five appends each while another handle kept the database open; want at most %d", longest/frame, writers, 2*checkpointPages)
			}
			t.Logf("%d writers: the log at most %d frames long", writers, longest/frame)
		})
	}
}

// shortWriters opens and closes a database many times, appending five
// entries each time, while another handle keeps it open and, with
// readers, always holds a snapshot; it returns the longest -wal file
// seen, and how many writers there were.
func shortWriters(t *testing.T, readers bool) (longest int64, writers int) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	first := openPath(t, path)
	id := groupSession(t, first).ID()
	reader := openPath(t, path)
	if _, err := reader.OpenSession(ctx, id); err != nil {
		t.Fatal(err)
	}
	first.Close()
	if readers {
		defer holdSnapshots(t, reader, reader)()
	}
	writers = 100
	if raceEnabled {
		writers = 40
	}
	text := strings.Repeat("short ", 700)
	for range writers {
		w, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		w.startCheckpointer()
		w.cp.restartAt.Store(checkpointPages)
		st, err := w.OpenSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			if _, err := st.Append(ctx, userDraft(text), sessiontree.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path + "-wal"); err == nil {
			longest = max(longest, fi.Size())
		}
	}
	if st, err := reader.OpenSession(ctx, id); err != nil {
		t.Fatal(err)
	} else if log, err := st.Log(ctx, 0, 0); err != nil || len(log) != 5*writers {
		t.Fatalf("the reader sees %d entries, %v; want %d", len(log), err, 5*writers)
	}
	return longest, writers
}
