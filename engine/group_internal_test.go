package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sessiontree/sessiontree"
)

// The group commit's tests make groups on purpose: they hold the write
// connection in a transaction of their own, start the appends, wait until
// all of them are queued (the leader waits for the connection and takes
// the queue only once it has begun), and then let go, so the appends run
// in one group whatever the scheduling.

func openGroupDB(t testing.TB) *DB {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "g.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Check(ctx, ""); err != nil {
			t.Errorf("Check() = %v", err)
		}
		db.Close()
	})
	return db
}

func groupSession(t testing.TB, db *DB) *Storage {
	t.Helper()
	st, err := db.CreateSession(context.Background(), sessiontree.SessionMeta{Cwd: "/work/group"})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func userDraft(text string) sessiontree.Draft {
	return sessiontree.Draft{Type: sessiontree.TypeMessage,
		Fields: []byte(fmt.Sprintf(`{"message":{"role":"user","content":%q}}`, text))}
}

// holdWriter holds the write connection in a transaction until release
// is called.
func holdWriter(t testing.TB, db *DB) (release func()) {
	t.Helper()
	held, done, ended := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		ended <- db.update(context.Background(), true, func(w q) error {
			close(held)
			<-done
			return nil
		})
	}()
	<-held
	return func() {
		close(done)
		if err := <-ended; err != nil {
			t.Errorf("holding the writer: %v", err)
		}
	}
}

// waitQueued waits until n appends are queued.
func waitQueued(t testing.TB, db *DB, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := db.group.Len()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d appends queued; want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

type groupCall struct {
	name string
	run  func(ctx context.Context) ([]sessiontree.Entry, error)
}

type groupResult struct {
	out []sessiontree.Entry
	err error
}

// inOneGroup runs calls as one group and returns their results by name.
func inOneGroup(t *testing.T, db *DB, calls []groupCall) map[string]groupResult {
	t.Helper()
	release := holdWriter(t, db)
	var mu sync.Mutex
	res := map[string]groupResult{}
	var wg sync.WaitGroup
	for _, c := range calls {
		wg.Go(func() {
			out, err := c.run(context.Background())
			mu.Lock()
			res[c.name] = groupResult{out, err}
			mu.Unlock()
		})
	}
	waitQueued(t, db, len(calls))
	release()
	wg.Wait()
	return res
}

func appendCall(name string, st *Storage, opts sessiontree.AppendOptions, drafts ...sessiontree.Draft) groupCall {
	return groupCall{name, func(ctx context.Context) ([]sessiontree.Entry, error) {
		return st.AppendAll(ctx, drafts, opts)
	}}
}

func entryCount(t *testing.T, st *Storage) int {
	t.Helper()
	log, err := st.Log(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(log)
}

// TestGroupFailureIsItsOwn: in one group, each append that fails (a guard
// that does not hold, an id already used, a label of a missing entry, a
// second draft that fails after the first was written) fails alone; the
// others commit. Only the last, which wrote before it failed, makes its
// group run again in savepoints.
func TestGroupFailureIsItsOwn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openGroupDB(t)
	a, b, c, d, e := groupSession(t, db), groupSession(t, db), groupSession(t, db), groupSession(t, db), groupSession(t, db)
	if _, err := a.Append(ctx, userDraft("a0"), sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	dup := userDraft("c0")
	dup.ID = "dup00001"
	if _, err := c.Append(ctx, dup, sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	label := sessiontree.Draft{Type: sessiontree.TypeLabel, Fields: []byte(`{"targetId":"missing1","label":"x"}`)}
	twice := userDraft("e0")
	twice.ID = "twice001"
	res := inOneGroup(t, db, []groupCall{
		appendCall("a ok", a, sessiontree.AppendOptions{}, userDraft("a1")),
		appendCall("b guard", b, sessiontree.IfLeaf("nope0001"), userDraft("b0")),
		appendCall("b ok", b, sessiontree.AppendOptions{}, userDraft("b1")),
		appendCall("c dup", c, sessiontree.AppendOptions{}, dup),
		appendCall("d label", d, sessiontree.AppendOptions{}, label),
	})
	// None of these failures wrote anything: the group ran once, without
	// savepoints. The second draft of e's append fails after the first
	// was written: that group runs again in savepoints.
	if n := db.group.redone.Load(); n != 0 {
		t.Errorf("%d groups run again for failures that wrote nothing; want 0", n)
	}
	for k, v := range inOneGroup(t, db, []groupCall{
		appendCall("a ok2", a, sessiontree.AppendOptions{}, userDraft("a2")),
		appendCall("e twice", e, sessiontree.AppendOptions{}, twice, twice),
	}) {
		res[k] = v
	}
	if n := db.group.redone.Load(); n != 1 {
		t.Errorf("%d groups run again; want 1, for the append that failed after it wrote", n)
	}
	for name, r := range map[string]groupResult{"a ok": res["a ok"], "a ok2": res["a ok2"], "b ok": res["b ok"]} {
		if r.err != nil || len(r.out) != 1 {
			t.Errorf("%s: AppendAll() = %d entries, %v; want 1, nil", name, len(r.out), r.err)
		}
	}
	var ce *sessiontree.ConflictError
	if err := res["b guard"].err; !errors.As(err, &ce) {
		t.Errorf("b guard: AppendAll() = %v; want a ConflictError", err)
	}
	for _, name := range []string{"c dup", "e twice"} {
		if err := res[name].err; !errors.Is(err, sessiontree.ErrConflict) || res[name].out != nil {
			t.Errorf("%s: AppendAll() = %v, %v; want ErrConflict", name, res[name].out, err)
		}
	}
	if err := res["d label"].err; !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("d label: AppendAll() = %v; want ErrNotFound", err)
	}
	for st, want := range map[*Storage]int{a: 3, b: 1, c: 1, d: 0, e: 0} {
		if got := entryCount(t, st); got != want {
			t.Errorf("session %s has %d entries; want %d", st.ID(), got, want)
		}
	}
	// The heads the group remembered are right: appends after it
	// continue each chain (Check, at cleanup, compares every counter).
	for _, st := range []*Storage{a, b, c, d, e} {
		if _, err := st.Append(ctx, userDraft("after"), sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGroupCommitErrorFailsAll: when the group's commit fails, every
// append of the group fails with the commit's error (one that failed on
// its own keeps its own), nothing is kept, and later appends work.
func TestGroupCommitErrorFailsAll(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openGroupDB(t)
	sts := []*Storage{groupSession(t, db), groupSession(t, db), groupSession(t, db)}
	for _, st := range sts {
		if _, err := st.Append(ctx, userDraft("before"), sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A row that breaks a deferred foreign key: the commit refuses it.
	db.group.beforeCommit = func(w q) error {
		if _, err := w.exec(`PRAGMA defer_foreign_keys = ON`); err != nil {
			return err
		}
		_, err := w.exec(`INSERT INTO branch (session, depth, entry) VALUES (999999, 1, 1)`)
		return err
	}
	calls := []groupCall{appendCall("guard", sts[0], sessiontree.IfLeaf("nope0001"), userDraft("x"))}
	for i, st := range sts {
		calls = append(calls, appendCall(fmt.Sprint(i), st, sessiontree.AppendOptions{}, userDraft("lost")))
	}
	res := inOneGroup(t, db, calls)
	db.group.beforeCommit = nil
	var ce *sessiontree.ConflictError
	if err := res["guard"].err; !errors.As(err, &ce) {
		t.Errorf("guard: AppendAll() = %v; want its own ConflictError", err)
	}
	for i := range sts {
		r := res[fmt.Sprint(i)]
		var se *sqlite.Error
		if !errors.As(r.err, &se) || se.Code() != sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY || r.out != nil {
			t.Errorf("append %d: AppendAll() = %v, %v; want the commit's foreign key error", i, r.out, r.err)
		}
	}
	for _, st := range sts {
		if got := entryCount(t, st); got != 1 {
			t.Errorf("session %s has %d entries after the failed commit; want 1", st.ID(), got)
		}
		if _, err := st.Append(ctx, userDraft("after"), sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := entryCount(t, st); got != 2 {
			t.Errorf("session %s has %d entries; want 2", st.ID(), got)
		}
	}
}

// TestGroupOutlivesCancelledLeader: the leader's cancelled context fails
// its own append, not the group it leads.
func TestGroupOutlivesCancelledLeader(t *testing.T) {
	t.Parallel()
	db := openGroupDB(t)
	lead, other := groupSession(t, db), groupSession(t, db)
	release := holdWriter(t, db)
	cctx, cancel := context.WithCancel(context.Background())
	var leadErr, otherErr error
	var wg sync.WaitGroup
	wg.Go(func() { _, leadErr = lead.Append(cctx, userDraft("lead"), sessiontree.AppendOptions{}) })
	waitQueued(t, db, 1)
	wg.Go(func() {
		_, otherErr = other.Append(context.Background(), userDraft("other"), sessiontree.AppendOptions{})
	})
	waitQueued(t, db, 2)
	cancel()
	release()
	wg.Wait()
	if !errors.Is(leadErr, context.Canceled) {
		t.Errorf("leader: Append() = %v; want context.Canceled", leadErr)
	}
	if otherErr != nil {
		t.Errorf("other: Append() = %v; want nil", otherErr)
	}
	if n := entryCount(t, lead); n != 0 {
		t.Errorf("the cancelled append wrote %d entries; want 0", n)
	}
}

// TestGroupIfLeafRace: appends guarded on the same leaf, in one group:
// exactly one wins, the others see the winner as the leaf.
func TestGroupIfLeafRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openGroupDB(t)
	st := groupSession(t, db)
	first, err := st.Append(ctx, userDraft("root"), sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var calls []groupCall
	for i := range 8 {
		calls = append(calls, appendCall(fmt.Sprint(i), st, sessiontree.IfLeaf(first.ID), userDraft(fmt.Sprint(i))))
	}
	res := inOneGroup(t, db, calls)
	var winner string
	for name, r := range res {
		if r.err == nil {
			if winner != "" {
				t.Fatalf("appends %s and another both won the guard on %s", name, first.ID)
			}
			winner = r.out[0].ID
		}
	}
	if winner == "" {
		t.Fatal("no append won the guard")
	}
	for name, r := range res {
		var ce *sessiontree.ConflictError
		if r.err != nil && (!errors.As(r.err, &ce) || ce.Got != winner) {
			t.Errorf("append %s: AppendAll() = %v; want a ConflictError naming the leaf %s", name, r.err, winner)
		}
	}
	if n := entryCount(t, st); n != 2 {
		t.Errorf("session has %d entries; want 2", n)
	}
}

// TestGroupManyWriters: writers appending at once, two per session, all
// commit, each session is one chain in append order, and each writer's
// entries are in its session's log in the order its appends returned.
func TestGroupManyWriters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openGroupDB(t)
	const sessions, perSession, each = 8, 2, 30
	sts := make([]*Storage, sessions)
	for i := range sts {
		sts[i] = groupSession(t, db)
	}
	got := make([][]sessiontree.Entry, sessions*perSession)
	errs := make(chan error, len(got))
	var wg sync.WaitGroup
	for w := range got {
		wg.Go(func() {
			st := sts[w%sessions]
			for i := range each {
				e, err := st.Append(ctx, userDraft(fmt.Sprintf("w%d-%d", w, i)), sessiontree.AppendOptions{})
				if err != nil {
					errs <- err
					return
				}
				got[w] = append(got[w], e)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, st := range sts {
		log, err := st.Log(ctx, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != perSession*each {
			t.Fatalf("session %d has %d entries; want %d", i, len(log), perSession*each)
		}
		bySeq := map[int64]string{}
		for j, e := range log {
			want := ""
			if j > 0 {
				want = log[j-1].ID
			}
			if e.ParentID != want || e.Seq != int64(j+1) {
				t.Fatalf("session %d entry %d: parent %q, seq %d; want %q, %d", i, j, e.ParentID, e.Seq, want, j+1)
			}
			bySeq[e.Seq] = e.ID
		}
		for w := i; w < len(got); w += sessions {
			for k, e := range got[w] {
				if bySeq[e.Seq] != e.ID || k > 0 && e.Seq <= got[w][k-1].Seq {
					t.Fatalf("writer %d's append %d (seq %d, %s) is not in the log as returned", w, k, e.Seq, e.ID)
				}
			}
		}
	}
}

// waiting reports whether a leader waits for its group to fill.
func waiting(db *DB) bool {
	return db.group.Gathering()
}

// TestGroupGathers: after a group of three, the next leader waits until
// three appends are queued, and no longer, and they commit as one group.
// The wait's bound is an hour here: a leader that did not wait would
// make more than one group, and one that was not woken by the third
// append would hang the test.
func TestGroupGathers(t *testing.T) {
	ctx := context.Background()
	db := openGroupDB(t)
	sts := []*Storage{groupSession(t, db), groupSession(t, db), groupSession(t, db)}
	groups := 0
	db.group.beforeCommit = func(q) error { groups++; return nil }
	db.group.SetWait(time.Hour)
	db.group.SetLast(len(sts))
	var wg sync.WaitGroup
	errs := make([]error, len(sts))
	for i, st := range sts {
		wg.Go(func() { _, errs[i] = st.Append(ctx, userDraft("x"), sessiontree.AppendOptions{}) })
		if i+1 < len(sts) {
			waitQueued(t, db, i+1)
			for !waiting(db) {
				time.Sleep(time.Millisecond)
			}
		}
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("append %d: %v", i, err)
		}
	}
	if groups != 1 {
		t.Errorf("the appends made %d groups; want 1", groups)
	}
	// The first single append after it waits groupq.DefaultWait at most; then
	// a single writer, whose last group was itself, does not wait.
	db.group.SetWait(0)
	for i := range 3 {
		if _, err := sts[0].Append(ctx, userDraft("y"), sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		db.group.SetWait(time.Hour)
		if groups != 2+i {
			t.Errorf("%d groups after %d single appends; want %d", groups, i+1, 2+i)
		}
	}
}
