package pgengine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/canceltest"
	"github.com/sessiontree/sessiontree/internal/childenv"
	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/pgengine"
	"github.com/sessiontree/sessiontree/storetest"
)

// openWith opens the database at url with opts for t, closed when t ends.
func openWith(t testing.TB, url string, opts pgengine.Options) *pgengine.DB {
	t.Helper()
	db, err := pgengine.Open(context.Background(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestClaims runs the writer-claim suite, shared with the SQLite engine:
// the other handle is a second pool of connections on the database.
func TestClaims(t *testing.T) {
	t.Parallel()
	storetest.RunClaims(t, storetest.ClaimHarness{
		New: func(t testing.TB, now func() time.Time) (sessiontree.Storage, sessiontree.Storage) {
			url := pgtest.Migrated.Database(t)
			st := newSession(t, openWith(t, url, pgengine.Options{Now: now}))
			other, err := openWith(t, url, pgengine.Options{Now: now}).OpenSession(context.Background(), st.ID())
			if err != nil {
				t.Fatal(err)
			}
			return st, other
		},
		Delete: func(ctx context.Context, st sessiontree.Storage, opts sessiontree.DeleteOptions) error {
			s := st.(*pgengine.Storage)
			return s.DB().DeleteSession(ctx, s.ID(), opts)
		},
		TxBatch: func(ctx context.Context, s sessiontree.Storage, entries []sessiontree.Entry) error {
			st := s.(*pgengine.Storage)
			return st.DB().Update(ctx, func(tx sessiontree.DatabaseTx) error { return tx.AppendEntries(st, entries) })
		},
	})
}

// TestFollow follows a session through LISTEN/NOTIFY while another pool
// of connections appends.
func TestFollow(t *testing.T) {
	t.Parallel()
	url := pgtest.Migrated.Database(t)
	st := newSession(t, openWith(t, url, pgengine.Options{}))
	other, err := openWith(t, url, pgengine.Options{}).OpenSession(context.Background(), st.ID())
	if err != nil {
		t.Fatal(err)
	}
	storetest.RunFollow(t, 3, st, other)
}

// TestWatchOwnSession: a commit to another session of the database does
// not wake a watch; one to its own does, and a rolled-back write (here a
// guarded append refused) sends nothing.
func TestWatchOwnSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openDB(t)
	mine, theirs := newSession(t, db), newSession(t, db)
	ch, err := mine.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	storetest.AppendStep(t, theirs, 0)
	if _, err := mine.Append(ctx, userDraft("refused"), sessiontree.IfLeaf("nope")); !errors.Is(err, sessiontree.ErrConflict) {
		t.Fatalf("guarded Append = %v; want ErrConflict", err)
	}
	short, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	if err := ch.Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait after another session's commit = %v; want it to time out", err)
	}
	storetest.AppendStep(t, mine, 0)
	long, cancel2 := context.WithTimeout(ctx, 10*time.Second)
	defer cancel2()
	if err := ch.Wait(long); err != nil {
		t.Fatalf("Wait after a commit to the session = %v", err)
	}
}

// TestNotifyOnlyWatched: a commit to a session nobody watches sends no
// notification (pg_notify's cluster-wide commit lock would serialize
// every writer), one to a watched session does, while one of its
// watches remains open, and a closed watch leaves no watcher row and no
// watched flag behind (migrate/postgres/0009).
func TestNotifyOnlyWatched(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := openDB(t)
	st := newSession(t, db)
	conn := connect(t, url)
	if _, err := conn.Exec(ctx, `LISTEN sessiontree_appends`); err != nil {
		t.Fatal(err)
	}
	step := 0
	appendNotifies := func() bool {
		storetest.AppendStep(t, st, step)
		step++
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		_, err := conn.WaitForNotification(short)
		return err == nil
	}
	if appendNotifies() {
		t.Error("an append to an unwatched session notified")
	}
	first, err := st.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	second, err := st.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !appendNotifies() {
		t.Error("an append to a watched session sent no notification")
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if !appendNotifies() {
		t.Error("an append to a session one watch still watches sent no notification")
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	if appendNotifies() {
		t.Error("an append after the last watch closed notified")
	}
	var n int
	var watched bool
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM watchers`).Scan(&n); err != nil || n != 0 {
		t.Errorf("watchers after Close = %d, %v; want 0", n, err)
	}
	if err := conn.QueryRow(ctx, `SELECT watched FROM sessions WHERE id = $1`, st.ID()).Scan(&watched); err != nil || watched {
		t.Errorf("watched after the last Close = %v, %v; want false", watched, err)
	}
}

// TestFollowReconnect kills the watch's connection on the server while
// Follow waits, appends while it is gone, and checks that Follow sees
// every entry, in order, none missed.
func TestFollowReconnect(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, url := openDB(t)
	st := newSession(t, db)
	got := make(chan sessiontree.Entry, 16)
	done := make(chan error, 1)
	go func() {
		done <- sessiontree.Follow(ctx, st, 0, func(e sessiontree.Entry) error { got <- e; return nil })
	}()
	admin := connect(t, url)
	var want []string
	for round := range 3 {
		// Wait until the watch listens, then cut it off.
		deadline := time.Now().Add(10 * time.Second)
		for {
			var n int
			err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN%'`).Scan(&n)
			if err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: no listening connection within 10 s", round)
			}
			time.Sleep(20 * time.Millisecond)
		}
		want = append(want, storetest.AppendSteps(t, st, round*2, 2, 0)...)
	}
	for i, id := range want {
		select {
		case e := <-got:
			if e.ID != id || e.Seq != int64(i+1) {
				t.Fatalf("entry %d followed = %s (seq %d); want %s (seq %d)", i, e.ID, e.Seq, id, i+1)
			}
		case err := <-done:
			t.Fatalf("Follow returned %v", err)
		case <-time.After(10 * time.Second):
			t.Fatalf("entry %d (%s) not followed within 10 s", i, id)
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Follow after cancel = %v; want context.Canceled", err)
	}
}

// TestFollowClosed checks that a watch ends when its database closes.
func TestFollowClosed(t *testing.T) {
	t.Parallel()
	url := pgtest.Migrated.Database(t)
	db, err := pgengine.Open(context.Background(), url, pgengine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	storetest.RunFollowClosed(t, newSession(t, db), db.Close)
}

// TestFollowDeleted checks that a watch ends when another pool (another
// machine, as far as the watch can tell) deletes its session.
func TestFollowDeleted(t *testing.T) {
	t.Parallel()
	url := pgtest.Migrated.Database(t)
	db, err := pgengine.Open(context.Background(), url, pgengine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	other, err := pgengine.Open(context.Background(), url, pgengine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	st := newSession(t, db)
	storetest.RunFollowDeleted(t, st, func() error { return other.DeleteSession(context.Background(), st.ID(), sessiontree.DeleteOptions{}) })
}

const liveChildEnv = "PGENGINE_TEST_LIVE_CHILD"

// TestLiveProcesses claims a session here and appends through the claim
// while a child process, refused a claim and a write of its own (naming
// the holder), follows the session: it must see every entry, in order.
func TestLiveProcesses(t *testing.T) {
	t.Parallel()
	if os.Getenv(liveChildEnv) != "" {
		return // the child's work is in TestLiveChild
	}
	ctx := context.Background()
	db, url := openDB(t)
	st := newSession(t, db)
	a, err := st.Claim(ctx, "parent-agent", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	cmd := exec.Command(os.Args[0], "-test.run=^TestLiveChild$", "-test.count=1", "-test.v")
	cmd.Env = childenv.Env(fmt.Sprintf("%s=%s|%s|%d", liveChildEnv, url, st.ID(), n))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	want := storetest.AppendSteps(t, a, 0, n, 5*time.Millisecond)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, out.String())
	}
	if line := "followed " + strings.Join(want, ","); !strings.Contains(out.String(), line) {
		t.Errorf("child output:\n%s\nwant the line %q", out.String(), line)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestLiveChild is the child of TestLiveProcesses: it checks that the
// parent's claim refuses it, then follows the session until it has seen
// n entries and prints their ids.
func TestLiveChild(t *testing.T) {
	spec := os.Getenv(liveChildEnv)
	if spec == "" {
		t.Skip("run by TestLiveProcesses")
	}
	f := strings.Split(spec, "|")
	var n int
	fmt.Sscan(f[2], &n)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := pgengine.Open(ctx, f[0], pgengine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := db.OpenSession(ctx, f[1])
	if err != nil {
		t.Fatal(err)
	}
	storetest.CheckClaimed(t, st, "parent-agent")
	var ids []string
	stop := errors.New("seen all")
	err = sessiontree.Follow(ctx, st, 0, func(e sessiontree.Entry) error {
		if e.Seq != int64(len(ids)+1) {
			return fmt.Errorf("entry %s has seq %d after %d entries", e.ID, e.Seq, len(ids))
		}
		if ids = append(ids, e.ID); len(ids) == n {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Follow = %v after %d entries", err, len(ids))
	}
	fmt.Printf("followed %s\n", strings.Join(ids, ","))
}

// TestFollowRidesOutRestart restarts the server under a Follow, on a
// cluster of the test's own: once while Follow waits for a commit (the
// entries appended as soon as the server is back must come, though the
// watch may still be reconnecting), once right after Follow read a full
// batch, so that its next read of the log meets the server down. Follow
// must keep trying until the server is back and then see every entry,
// in order, none twice.
func TestFollowRidesOutRestart(t *testing.T) {
	// Long beyond the ~75 ms of retries after which Follow used to give
	// up, short enough to keep the suite quick.
	const serverDown = 500 * time.Millisecond
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := pgtest.Own(t)
	db := openWith(t, c.URL, pgengine.Options{})
	st := newSession(t, db)
	writer, err := openWith(t, c.URL, pgengine.Options{}).OpenSession(ctx, st.ID())
	if err != nil {
		t.Fatal(err)
	}
	const full = 1000 // sessiontree.Follow's batch: Follow reads the log again at once
	downAt := make(chan struct{})
	got := make(chan sessiontree.Entry, 2*full)
	done := make(chan error, 1)
	go func() {
		done <- sessiontree.Follow(ctx, st, 0, func(e sessiontree.Entry) error {
			got <- e
			if e.Seq == 5+full {
				close(downAt)
				return c.Down(ctx) // Follow's next read meets the server down
			}
			return nil
		})
	}()
	var want []string
	expect := func(ids []string) {
		t.Helper()
		want = append(want, ids...)
		for len(got) > 0 || len(want) > 0 {
			select {
			case e := <-got:
				if len(want) == 0 || e.ID != want[0] {
					t.Fatalf("followed %s (seq %d); want %v next", e.ID, e.Seq, want[:min(len(want), 1)])
				}
				want = want[1:]
			case err := <-done:
				t.Fatalf("Follow returned %v with %d entries to come", err, len(want))
			case <-time.After(30 * time.Second):
				t.Fatalf("%d entries not followed within 30 s", len(want))
			}
		}
	}
	expect(storetest.AppendSteps(t, writer, 0, 2, 0))
	if err := c.Down(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(serverDown)
	if err := c.Up(ctx); err != nil {
		t.Fatal(err)
	}
	expect(storetest.AppendSteps(t, writer, 2, 3, 0))

	drafts := make([]sessiontree.Draft, full)
	for i := range drafts {
		drafts[i] = sessiontree.Draft{Type: sessiontree.TypeCustom, Fields: mustFields(t, "customType", "bulk")}
	}
	bulk, err := writer.AppendAll(ctx, drafts, sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range bulk {
		want = append(want, e.ID)
	}
	select {
	case <-downAt:
	case err := <-done:
		t.Fatalf("Follow returned %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("Follow did not reach the end of the bulk append within 30 s")
	}
	time.Sleep(serverDown)
	if err := c.Up(ctx); err != nil {
		t.Fatal(err)
	}
	expect(storetest.AppendSteps(t, writer, 5, 2, 0))
	select {
	case e := <-got:
		t.Fatalf("followed %s (seq %d) twice or from nowhere", e.ID, e.Seq)
	case err := <-done:
		t.Fatalf("Follow returned %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	if err := <-done; !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		t.Errorf("Follow after cancel = %v; want the context's error", err)
	}
}

// TestFollowCancel stops a Follow at every point it checks its context:
// its LISTEN connection and goroutines are gone once it has returned.
func TestFollowCancel(t *testing.T) {
	if !runAlone(t) { // it counts the process's goroutines and files
		return
	}
	points, n := 200, 1500 // more than Follow reads at once
	if testing.Short() {
		points, n = 6, 100
	}
	storetest.RunFollowCancel(t, newSession(t, openWith(t, pgtest.Migrated.Database(t), pgengine.Options{})), n, points)
}

// TestCancelWrites runs storetest.RunWriteCancel: AppendAll (a pipelined
// group's), AppendBatch and SetLeaf cancelled at each point they check
// their context store all or nothing.
func TestCancelWrites(t *testing.T) {
	t.Parallel()
	db, _ := openDB(t)
	st := newSession(t, db)
	points := 200
	switch {
	case testing.Short():
		points = 12
	case storetest.RaceEnabled:
		points = 60 // spread over the checks; 200 took 52 s of CI's race run
	}
	storetest.RunWriteCancel(t, st, func(ctx context.Context) error { return db.Check(ctx, st.ID()) }, points)
}

// emptyDatabase is a database without the engine's schema, for Opens
// that migrate it.
var emptyDatabase = pgtest.NewTemplate(func(context.Context, string) error { return nil })

// TestCancelOpen cancels Open at every point it checks its context (a
// spread of them), on a new database (its migrations) and on a migrated
// one, each in a child process of its own (runAlone), the two at once: a
// cancelled Open returns the context's error and leaves no connection or
// goroutine behind, and the database opens afterwards and checks clean.
func TestCancelOpen(t *testing.T) {
	t.Parallel()
	points, cases := 60, []struct {
		name string
		tmpl *pgtest.Template
	}{{"new", emptyDatabase}, {"migrated", pgtest.Migrated}}
	switch {
	case testing.Short():
		points, cases = 3, cases[1:] // migrating costs a second a run
	case storetest.RaceEnabled:
		points = 20 // 60 took 22 s of CI's race run, serially
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !runAlone(t) { // it counts the process's goroutines and files
				return
			}
			// A run on a migrated database leaves it as it was (nothing to
			// migrate, nothing written), so one copy serves every run, as a
			// copy each cost ~0.4 s of the server's CPU (copied, reset or
			// dropped); a lock or connection a run left behind would now also
			// stop the next run's Open. A run on a new database migrates it:
			// each takes a copy of its own.
			var migrated string
			if c.tmpl == pgtest.Migrated {
				migrated = c.tmpl.Database(t)
			}
			canceltest.Sweep(t, points, func(ctx context.Context) error {
				url := migrated
				if url == "" {
					url = c.tmpl.Database(t)
				}
				before := canceltest.Take()
				db, err := pgengine.Open(ctx, url, pgengine.Options{})
				if err == nil {
					err = db.Close()
				}
				before.Settled(t, "after Open and Close")
				openURL(t, url) // its cleanup checks the database and closes it
				return err
			}, func(int64, error) {})
		})
	}
}

// aloneEnv names, in a child process of the test binary, the test the
// child runs alone (runAlone).
const aloneEnv = "PGENGINE_TEST_ALONE"

// runAlone runs t, a test that counts the process's goroutines and open
// files (canceltest) and so cannot share its process, in a child process
// of the test binary that runs t alone, on this process's server; it
// reports whether the caller is that child, to run the test. The parent
// waits for the child in parallel with the other tests: run serially,
// as before, such a test held every parallel test back until it ended
// (TestCancelOpen alone took 47-60 s of the race run's wall time at a
// load of 13). The parent passes when the child's run passed, skips when
// it skipped and fails with its output otherwise.
func runAlone(t *testing.T) bool {
	t.Helper()
	if os.Getenv(aloneEnv) == t.Name() {
		return true
	}
	t.Parallel()
	run := strings.Split(t.Name(), "/") // a subtest's: ^Test$/^sub$
	for i, name := range run {
		run[i] = "^" + regexp.QuoteMeta(name) + "$"
	}
	args := []string{"-test.run=" + strings.Join(run, "/"), "-test.count=1", "-test.v"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	cmd := exec.Command(os.Args[0], args...)
	// The child uses this process's server: its TestMain starts none.
	cmd.Env = childenv.Env(aloneEnv+"="+t.Name(), pgtest.EnvURL+"="+pgtest.URL(t))
	out, err := cmd.CombinedOutput()
	switch {
	case err != nil:
		t.Fatalf("%s in a child process: %v\n%s", t.Name(), err, out)
	case strings.Contains(string(out), "--- SKIP: "+t.Name()+" "):
		t.Skipf("skipped in its child process:\n%s", out)
	case !strings.Contains(string(out), "--- PASS: "+t.Name()+" "):
		t.Fatalf("%s in a child process did not pass:\n%s", t.Name(), out)
	}
	return false
}
