//go:build unix

package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
)

// The WAL VFS's tests are not parallel: walStats counts every -wal file
// of the process.

// TestWALWritesGathered: each commit of an append reaches the kernel as
// one write of the log, where SQLite made two per frame, and another
// handle on the file (its own connections and file descriptors, as
// another process has) reads every entry as soon as its append returned.
func TestWALWritesGathered(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	db := openWALDB(t, path)
	st := groupSession(t, db)
	other := openWALDB(t, path)
	const n = 50
	writes0, calls0 := walStats()
	for i := range n {
		e, err := st.Append(ctx, userDraft(fmt.Sprintf("gathered %d", i)), sessiontree.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		seen, err := other.OpenSession(ctx, st.ID())
		if err != nil {
			t.Fatal(err)
		}
		if leaf, err := seen.Leaf(ctx); err != nil || leaf != e.ID {
			t.Fatalf("append %d: the other handle's leaf is %q, %v; want %s", i, leaf, err, e.ID)
		}
	}
	writes, calls := walStats()
	writes, calls = writes-writes0, calls-calls0
	// Every append writes a page of several b-trees, so SQLite wrote at
	// least four times per commit (two frames, two writes each).
	if calls != n || writes < 4*n {
		t.Errorf("%d appends: SQLite wrote the log %d times, the kernel %d times; want at least %d and exactly %d", n, writes, calls, 4*n, n)
	}
	t.Logf("%d appends: %d writes of the log gathered into %d", n, writes, calls)
}

// TestWALLargeTransaction: a transaction larger than walBufMax, and one
// whose pages spill into the log and are read back before it commits
// (a write connection with a tiny page cache), commit whole.
func TestWALLargeTransaction(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	db := openWALDB(t, path)
	for _, small := range []bool{false, true} {
		if small {
			if _, err := db.w.ExecContext(ctx, `PRAGMA cache_size = 20`); err != nil {
				t.Fatal(err)
			}
			if _, err := db.w.ExecContext(ctx, `PRAGMA cache_spill = 20`); err != nil {
				t.Fatal(err)
			}
		}
		st := groupSession(t, db)
		drafts := make([]sessiontree.Draft, 200)
		for i := range drafts {
			drafts[i] = userDraft(fmt.Sprintf("large %d %s", i, strings.Repeat("x", 3000)))
		}
		writes0, calls0 := walStats()
		added, err := st.AppendAll(ctx, drafts, sessiontree.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		writes, calls := walStats()
		writes, calls = writes-writes0, calls-calls0
		// 200 entries of 3 KB: more than 150 pages of the log, five or
		// more of walBufMax. With the small cache SQLite reads pages
		// back from the log while it writes, and each read writes out
		// what was gathered first.
		if !small && (calls < 5 || calls*8 > writes) || small && calls >= writes {
			t.Errorf("small cache %v: SQLite wrote the log %d times, the kernel %d times; want 5 or more, gathered", small, writes, calls)
		}
		other := openWALDB(t, path)
		seen, err := other.OpenSession(ctx, st.ID())
		if err != nil {
			t.Fatal(err)
		}
		path, err := seen.Path(ctx, added[len(added)-1].ID)
		if err != nil || len(path) != len(drafts) {
			t.Fatalf("small cache %v: the other handle reads %d entries, %v; want %d", small, len(path), err, len(drafts))
		}
		t.Logf("small cache %v: %d writes of the log in %d calls", small, writes, calls)
	}
}

// openWALDB opens the database at path (openPath), checked at the end,
// and checks that its write connections open it through walVFS.
func openWALDB(t *testing.T, path string) *DB {
	t.Helper()
	db := openPath(t, path)
	if !db.wc.walVFS || !strings.Contains(db.wc.dsn, "vfs="+walVFSName) {
		t.Fatalf("write connections open %s; want VFS %s", db.wc.dsn, walVFSName)
	}
	t.Cleanup(func() { // before openPath's Close
		if err := db.Check(context.Background(), ""); err != nil {
			t.Errorf("Check() = %v", err)
		}
	})
	return db
}

// TestWALFailedFlush: when the write of a commit's gathered frames fails
// (a full disk), the append fails with ErrDiskFull and nothing of it
// stays: the next append follows the one before, and another handle
// never sees the failed entry.
func TestWALFailedFlush(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	db := openWALDB(t, path)
	st := groupSession(t, db)
	a, err := st.Append(ctx, userDraft("before"), sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	walFailWrites.Store(1)
	_, err = st.Append(ctx, userDraft("lost"), sessiontree.AppendOptions{})
	walFailWrites.Store(0)
	if !errors.Is(err, sessiontree.ErrDiskFull) {
		t.Fatalf("append with the log's write failing = %v; want ErrDiskFull", err)
	}
	c, err := st.Append(ctx, userDraft("after"), sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.ParentID != a.ID {
		t.Fatalf("the append after the failed one has parent %v; want %s", c.ParentID, a.ID)
	}
	seen, err := openWALDB(t, path).OpenSession(ctx, st.ID())
	if err != nil {
		t.Fatal(err)
	}
	got, err := seen.Path(ctx, c.ID)
	if err != nil || len(got) != 2 || got[0].ID != a.ID || got[1].ID != c.ID {
		t.Fatalf("the other handle reads %d entries, %v; want %s then %s", len(got), err, a.ID, c.ID)
	}
}

// TestLogStartsOverUnderLoad: under a steady stream of commits, which
// leaves no moment when the log is all copied back and no write has
// begun, the checkpointer still makes it start over (a RESTART
// checkpoint once it holds restartFrames frames, here 1,000), so the
// -wal file stays a few times that long instead of growing with every
// commit.
func TestLogStartsOverUnderLoad(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	db := openWALDB(t, path)
	const writers = 16
	sessions := make([]*Storage, writers)
	for i := range sessions {
		sessions[i] = groupSession(t, db)
	}
	const restartAt = checkpointPages
	db.startCheckpointer()
	db.cp.restartAt.Store(restartAt)
	// Eight times restartAt (SQLite writes a frame in two): without the
	// RESTART checkpoints the log would be more than 8×restartAt frames
	// long at the end.
	writes0, _ := walStats()
	goal := writes0 + 2*8*restartAt
	reached := func() bool { w, _ := walStats(); return w >= goal }
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for _, st := range sessions {
		wg.Go(func() {
			for !reached() {
				if _, err := st.Append(ctx, userDraft(strings.Repeat("steady ", 40)), sessiontree.AppendOptions{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	var longest int64
	for done := false; !done; {
		select {
		case err := <-errs:
			t.Fatal(err)
		default:
		}
		if fi, err := os.Stat(path + "-wal"); err == nil {
			longest = max(longest, fi.Size())
		}
		done = reached()
		time.Sleep(time.Millisecond)
	}
	wg.Wait()
	// Without a start-over the log would hold all 8×restartAt frames; how
	// soon the checkpointer wins its lock depends on the scheduler (4.7×
	// and 5.9× seen with other test binaries on two cores), so the bound
	// is 7×, which only a start-over keeps under.
	const frame = 24 + pageSize
	if longest > 7*restartAt*frame {
		t.Errorf("the log grew to %d frames while %d were written; want at most %d", longest/frame, 8*restartAt, 7*restartAt)
	}
	t.Logf("%d frames written, the log at most %d frames long", 8*restartAt, longest/frame)
}

// TestWALRollbackAfterSpill: a write transaction whose pages spilled into
// the log, then rolled back, leaves frames gathered that no commit will
// flush. Another handle (another process, for SQLite) then commits
// frames at those places in the log. The frames of the rollback must not
// reach the file after that: written over the other's commit, they
// would destroy it.
func TestWALRollbackAfterSpill(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	a := openWALDB(t, path)
	st := groupSession(t, a)
	if _, err := st.Append(ctx, userDraft("first"), sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	spillAndRollBack(t, a)
	b := openWALDB(t, path)
	other := groupSession(t, b)
	var want []string
	for i := range 40 {
		e, err := other.Append(ctx, userDraft(fmt.Sprintf("committed %d %s", i, strings.Repeat("y", 500))), sessiontree.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, e.ID)
	}
	// a's write connection reads the log again: its next append.
	if _, err := st.Append(ctx, userDraft("after"), sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	fresh := openPath(t, path)
	seen, err := fresh.OpenSession(ctx, other.ID())
	if err != nil {
		t.Fatal(err)
	}
	got, err := seen.EntriesByType(ctx, sessiontree.TypeMessage)
	if err != nil {
		t.Fatalf("the other handle's session after a's rollback: %v", err)
	}
	var ids []string
	for _, e := range got {
		ids = append(ids, e.ID)
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("the other handle's session holds %d entries; want its %d", len(ids), len(want))
	}
}

// spillAndRollBack runs, on db's write connection, a transaction that
// writes more pages than its page cache holds, so that they spill into
// the log, and rolls it back, right after the log started over (so that
// the rollback reads nothing back from the log). It asserts that the
// spilled frames were gathered and that none stay gathered after the
// rollback.
func spillAndRollBack(t *testing.T, db *DB) {
	t.Helper()
	if gathered := spillRollBack(t, db, true); gathered == 0 {
		t.Fatal("no spilled frames gathered: the test does not test")
	}
	if n := walGathered(); n != 0 {
		t.Errorf("%d bytes of the rolled back transaction stay gathered", n)
	}
}

// spillRollBack runs the transaction of spillAndRollBack, after starting
// the log over if restart, and returns how many bytes of frames were
// gathered before its rollback.
func spillRollBack(t *testing.T, db *DB, restart bool) (gathered int) {
	t.Helper()
	ctx := context.Background()
	conn, err := db.w.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var cache, spill int
	if err := conn.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&cache); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRowContext(ctx, `PRAGMA cache_spill`).Scan(&spill); err != nil {
		t.Fatal(err)
	}
	exec := func(stmts ...string) {
		for _, stmt := range stmts {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
	}
	exec(`PRAGMA cache_size = 10`, `PRAGMA cache_spill = 10`)
	if restart {
		exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	}
	exec(`BEGIN IMMEDIATE`, `CREATE TABLE spill (x TEXT)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20) INSERT INTO spill SELECT printf('%.3000c', 'z') FROM n`)
	gathered = walGathered()
	exec(`ROLLBACK`, fmt.Sprintf(`PRAGMA cache_size = %d`, cache), fmt.Sprintf(`PRAGMA cache_spill = %d`, spill))
	return gathered
}

// walGathered returns how many bytes the open -wal files have gathered.
func walGathered() (n int) {
	walFiles.Range(func(_, v any) bool {
		n += len(v.(*walBuf).buf)
		return true
	})
	return n
}

// TestWALTwoHandlesMixed: two handles on one database (their own
// connections and -wal file descriptors, as two processes have) take
// turns at appends, transactions that spill pages into the log and roll
// back, and checkpoints that start the log over, in an order drawn from
// a fixed seed. Every acknowledged append must be there at the end, in
// order, and the database must check clean (openWALDB's cleanup).
func TestWALTwoHandlesMixed(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	dbs := []*DB{openWALDB(t, path), openWALDB(t, path)}
	sessions := []*Storage{groupSession(t, dbs[0]), groupSession(t, dbs[1])}
	want := make([][]string, 2)
	rng := rand.New(rand.NewPCG(17, 4))
	for step := range 300 {
		i := rng.IntN(2)
		switch op := rng.IntN(10); {
		case op < 6:
			e, err := sessions[i].Append(ctx, userDraft(fmt.Sprintf("step %d %s", step, strings.Repeat("m", rng.IntN(3000)))), sessiontree.AppendOptions{})
			if err != nil {
				t.Fatalf("step %d: append on handle %d: %v", step, i, err)
			}
			want[i] = append(want[i], e.ID)
		case op < 9:
			spillRollBack(t, dbs[i], rng.IntN(2) == 0)
		default:
			if _, err := dbs[i].w.ExecContext(ctx, `PRAGMA wal_checkpoint(RESTART)`); err != nil {
				t.Fatalf("step %d: checkpoint: %v", step, err)
			}
		}
	}
	fresh := openPath(t, path)
	for i, st := range sessions {
		seen, err := fresh.OpenSession(ctx, st.ID())
		if err != nil {
			t.Fatal(err)
		}
		got, err := seen.EntriesByType(ctx, sessiontree.TypeMessage)
		if err != nil {
			t.Fatalf("handle %d's session: %v", i, err)
		}
		var ids []string
		for _, e := range got {
			ids = append(ids, e.ID)
		}
		if !slices.Equal(ids, want[i]) {
			t.Errorf("handle %d's session holds %d entries; want its %d acknowledged", i, len(ids), len(want[i]))
		}
	}
}

// crashPoint is the database and -wal files as a crash right after one
// of the log's writes leaves them, with what was acknowledged then.
type crashPoint struct {
	db, wal   []byte
	acked     int // entries whose call had returned
	inFlight  int // entries of the call running, which may or may not be there
	synchrony Synchronous
}

// TestWALCrashAtEveryWrite: the files are copied at every write of the
// log (between the gathered write and the sync that may follow it),
// while appends, a batch whose pages spill into the log and are changed
// again (a write connection with a 20-page cache) and appends after it
// commit, with synchronous NORMAL and FULL. Every copy, opened as after a
// crash, passes Check and holds exactly the entries acknowledged before
// the copy, plus those of the call in flight, all or none. The batch
// writes some frames again, so SQLite rewrites their checksums up to its
// commit frame's: under NORMAL, a rewritten header gathered and dropped
// left every later copy without the batch and the appends after it.
func TestWALCrashAtEveryWrite(t *testing.T) {
	batch := 1500
	if testing.Short() || raceEnabled {
		batch = 600
	}
	for _, sync := range []Synchronous{SyncNormal, SyncFull} {
		points, session, ids := writeThroughCrashes(t, sync, batch)
		checkCrashPoints(t, points, session, ids)
	}
}

// writeThroughCrashes writes, to a new database with synchronous sync,
// three appends, a batch of batch entries that spills and writes frames
// again, and three appends, taking a crash point at every write of the
// log. It returns them, the session and the entries written.
func writeThroughCrashes(t *testing.T, sync Synchronous, batch int) ([]crashPoint, string, []string) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	db, err := Open(ctx, path, Options{Synchronous: sync})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() }) // closed below unless the test fails first
	st, first := spillingSession(t, db)
	ids := []string{first.ID}
	var points []crashPoint
	inFlight := 0
	after := func() {
		p := crashPoint{acked: len(ids), inFlight: inFlight, synchrony: sync}
		p.db, _ = os.ReadFile(path)
		p.wal, _ = os.ReadFile(path + "-wal")
		points = append(points, p)
	}
	walAfterWrite.Store(&after)
	defer walAfterWrite.Store(nil)
	appendThree := func(label string) {
		for i := range 3 {
			inFlight = 1
			e, err := st.Append(ctx, userDraft(fmt.Sprintf("%s %d", label, i)), sessiontree.AppendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, e.ID)
		}
	}
	appendThree("before")
	drafts := make([]sessiontree.Draft, batch)
	for i := range drafts {
		drafts[i] = userDraft(fmt.Sprintf("batch %d", i))
	}
	inFlight = len(drafts)
	rewrites := walRewrites.Load()
	added, err := st.AppendAll(ctx, drafts, sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if walRewrites.Load() == rewrites {
		t.Fatal("the batch wrote no frame again: the test does not test")
	}
	for _, e := range added {
		ids = append(ids, e.ID)
	}
	appendThree("after")
	walAfterWrite.Store(nil)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return points, st.ID(), ids
}

// spillingSession makes a session in db with one entry, and leaves db's
// write connection a page cache of 20 pages, so that a transaction of
// more pages spills them into the log and SQLite writes some of them
// again in place, then rewrites their checksums.
func spillingSession(t *testing.T, db *DB) (*Storage, sessiontree.Entry) {
	t.Helper()
	ctx := context.Background()
	st := groupSession(t, db)
	first, err := st.Append(ctx, userDraft("first"), sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{`PRAGMA cache_size = 20`, `PRAGMA cache_spill = 20`} {
		if _, err := db.w.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	return st, first
}

// checkCrashPoints opens each crash point's files and checks them; one
// in four and the last under the race detector, where it is many times
// slower.
func checkCrashPoints(t *testing.T, points []crashPoint, session string, ids []string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	stride, checked := 1, 0
	if raceEnabled {
		stride = 4
	}
	for i, p := range points {
		if i%stride != 0 && i != len(points)-1 {
			continue
		}
		checked++
		path := filepath.Join(dir, fmt.Sprintf("crash%d.db", i))
		if err := os.WriteFile(path, p.db, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path+"-wal", p.wal, 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatalf("synchronous %s, crash at write %d: open: %v", p.synchrony.pragma(), i, err)
		}
		if err := db.Check(ctx, ""); err != nil {
			t.Errorf("synchronous %s, crash at write %d: Check() = %v", p.synchrony.pragma(), i, err)
		}
		got := crashedIDs(t, db, session)
		if n := len(got); n != p.acked && n != p.acked+p.inFlight || !slices.Equal(got, ids[:n]) {
			t.Errorf("synchronous %s, crash at write %d: the session holds %d entries (%v…); want the %d acknowledged, or %d with those in flight",
				p.synchrony.pragma(), i, n, got[:min(n, 3)], p.acked, p.acked+p.inFlight)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d crash points of %d checked", checked, len(points))
}

// crashedIDs returns the ids of the session's entries in db.
func crashedIDs(t *testing.T, db *DB, session string) []string {
	t.Helper()
	ctx := context.Background()
	st, err := db.OpenSession(ctx, session)
	if err != nil {
		t.Fatal(err)
	}
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(log))
	for i, e := range log {
		ids[i] = e.ID
	}
	return ids
}

// TestWALFailedWriteMidTransaction: a batch whose pages spill into the
// log (a write connection with a 20-page cache) meets a full disk at its
// kth write of the log, for several k (a write of gathered frames, a
// checksum rewritten): the batch fails with ErrDiskFull
// and leaves nothing, the connection goes on (the next append follows
// the last one acknowledged), and the files as a crash right then leaves
// them open clean, without the batch.
func TestWALFailedWriteMidTransaction(t *testing.T) {
	ctx := context.Background()
	drafts := make([]sessiontree.Draft, 600)
	for i := range drafts {
		drafts[i] = userDraft(fmt.Sprintf("batch %d", i))
	}
	t.Cleanup(func() { walAfterWrite.Store(nil); walFailWrites.Store(0) })
	// The batch writes the log some 36 times: a few writes of gathered
	// frames, then the headers of the frames it wrote again.
	ks := []int{1, 2, 3, 4, 5, 8, 13, 21}
	switch {
	case raceEnabled:
		ks = []int{3, 8} // one of each kind
	case testing.Short():
		ks = []int{1, 3, 5, 13}
	}
	for _, k := range ks {
		path := filepath.Join(t.TempDir(), "w.db")
		db := openWALDB(t, path)
		st, first := spillingSession(t, db)
		writes := 0
		after := func() {
			if writes++; writes == k-1 {
				walFailWrites.Store(1)
			}
		}
		if k == 1 {
			walFailWrites.Store(1)
		}
		walAfterWrite.Store(&after)
		_, err := st.AppendAll(ctx, drafts, sessiontree.AppendOptions{})
		walAfterWrite.Store(nil)
		if !errors.Is(err, sessiontree.ErrDiskFull) {
			t.Fatalf("batch failing at write %d of the log = %v (%d writes); want ErrDiskFull", k, err, writes)
		}
		walFailWrites.Store(0)
		crashed := filepath.Join(t.TempDir(), "crashed.db")
		copyCrashed(t, path, crashed)
		if got := crashedIDs(t, openWALDB(t, crashed), st.ID()); !slices.Equal(got, []string{first.ID}) {
			t.Errorf("write %d failed: after a crash the session holds %d entries; want the 1 acknowledged", k, len(got))
		}
		e, err := st.Append(ctx, userDraft("after"), sessiontree.AppendOptions{})
		if err != nil {
			t.Fatalf("append after the batch failing at write %d: %v", k, err)
		}
		if got := crashedIDs(t, db, st.ID()); !slices.Equal(got, []string{first.ID, e.ID}) {
			t.Errorf("write %d failed: the session holds %d entries; want the 2 acknowledged", k, len(got))
		}
	}
}

// TestWALOneFrameCommitAfterRecovery: a write connection that recovers
// the log (a database opened after a crash, whose -wal file holds a
// frame past its last commit, here one of zeros) last read that frame,
// where its next commit writes its first frame. A commit of one page
// then writes a commit frame's header there that is no rewritten
// checksum: its page must reach the file too, for another connection
// to read, and after a crash.
func TestWALOneFrameCommitAfterRecovery(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	w := openRawWAL(t, path)
	for _, stmt := range []string{
		`CREATE TABLE one (x TEXT); INSERT INTO one VALUES ('old'); CREATE TABLE two (y TEXT)`,
		`PRAGMA wal_checkpoint(TRUNCATE)`, // so that the log holds only the next commit
		`INSERT INTO two VALUES ('other')`,
	} {
		if _, err := w.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	crashed := filepath.Join(t.TempDir(), "crashed.db")
	copyCrashed(t, path, crashed)
	f, err := os.OpenFile(crashed+"-wal", os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		_, err = f.Write(make([]byte, walFrameHeader+pageSize))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openRawWAL(t, crashed).ExecContext(ctx, `UPDATE one SET x = 'new'`); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", "file:"+crashed)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var x string
	if err := other.QueryRowContext(ctx, `SELECT x FROM one`).Scan(&x); err != nil || x != "new" {
		t.Fatalf("another connection reads %q, %v; want new", x, err)
	}
	again := filepath.Join(t.TempDir(), "again.db")
	copyCrashed(t, crashed, again)
	if err := openRawWAL(t, again).QueryRowContext(ctx, `SELECT x FROM one`).Scan(&x); err != nil || x != "new" {
		t.Fatalf("after a crash the table holds %q, %v; want new", x, err)
	}
}

// openRawWAL opens the SQLite database at path in WAL mode on one
// connection through walVFS, as the engine's write connection, without
// the engine.
func openRawWAL(t *testing.T, path string) *sql.DB {
	t.Helper()
	if err := registerWALVFS(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?vfs="+walVFSName+"&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// copyCrashed copies the database at from and its -wal file to to, as a
// crash leaves them (no -shm file).
func copyCrashed(t *testing.T, from, to string) {
	t.Helper()
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(from + suffix)
		if err == nil {
			err = os.WriteFile(to+suffix, data, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
