package pgengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/migrate"
)

// Connection faults at chosen points of the protocol (pgtest.Proxy):
// whatever the fault, every append acknowledged is stored once, and an
// append that failed is stored at most once.

// faultDB opens a database of t's own twice: through a fault proxy
// (what the test drives) and directly (what it reads back with, and
// checks when t ends).
func faultDB(t *testing.T) (proxied, direct *DB, p *pgtest.Proxy) {
	t.Helper()
	url := pgtest.Migrated.Database(t)
	p = pgtest.NewProxy(t, url)
	var err error
	if direct, err = Open(context.Background(), url, Options{}); err != nil {
		t.Fatal(err)
	}
	if proxied, err = Open(context.Background(), p.URL(url), Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.SetFault(nil)
		proxied.Close()
		if err := direct.Check(context.Background(), ""); err != nil {
			t.Errorf("integrity check: %v", err)
		}
		direct.Close()
	})
	return proxied, direct, p
}

// faultSetup is a database of a test's own, opened through a fault proxy
// and directly (faultDB), and a session of it with one entry, written
// through the proxy.
type faultSetup struct {
	proxied, direct *DB
	p               *pgtest.Proxy
	st              *Storage
	first           sessiontree.Entry
}

// faultSession makes a faultSetup for t.
func faultSession(t *testing.T) faultSetup {
	t.Helper()
	var f faultSetup
	f.proxied, f.direct, f.p = faultDB(t)
	f.st = newStorage(t, f.proxied)
	var err error
	if f.first, err = f.st.Append(context.Background(), customDraft(0), sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	return f
}

// once is a fault that answers act to the first message match accepts,
// and passes every other.
func once(act pgtest.Action, match func(m pgtest.Message) bool) pgtest.Fault {
	var done atomic.Bool
	return func(_ int, m pgtest.Message) pgtest.Action {
		if match(m) && done.CompareAndSwap(false, true) {
			return act
		}
		return pgtest.Pass
	}
}

// signalling is once(act, match) that also closes the channel it
// returns when it acts.
func signalling(act pgtest.Action, match func(m pgtest.Message) bool) (pgtest.Fault, <-chan struct{}) {
	acted := make(chan struct{})
	f := once(act, match)
	return func(n int, m pgtest.Message) pgtest.Action {
		a := f(n, m)
		if a != pgtest.Pass {
			close(acted)
		}
		return a
	}, acted
}

// committed matches the server's reply to a COMMIT that committed.
func committed(m pgtest.Message) bool { return !m.FromClient && m.Tag == "COMMIT" }

// sending matches a statement on its way to the server whose SQL holds s.
func sending(s string) func(m pgtest.Message) bool {
	return func(m pgtest.Message) bool { return m.FromClient && strings.Contains(m.SQL, s) }
}

// logOf returns the log of session id, read on db.
func logOf(t *testing.T, db *DB, id string) []sessiontree.Entry {
	t.Helper()
	st, err := db.OpenStorage(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	log, err := st.Log(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return log
}

// TestAppendTerminatedAfterCommit: the server commits an append and is
// then told to stop (pg_terminate_backend, a fast shutdown) before it
// reads the batch's Sync, so the client reads the COMMIT's reply and then
// a FATAL error (57P01). The append committed: it is not tried again,
// which stored the entry a second time under the first, and returns the
// entry. Both ways of the batch: from the row the Storage kept, and from
// the row locked after another writer's append.
func TestAppendTerminatedAfterCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faultSession(t)
	direct, p, st := f.direct, f.p, f.st
	other, err := direct.OpenStorage(ctx, st.ID())
	if err != nil {
		t.Fatal(err)
	}
	for i, kept := range []bool{true, false} {
		if !kept {
			if _, err := other.Append(ctx, customDraft(10), sessiontree.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		before := len(logOf(t, direct, st.ID()))
		p.SetFault(once(pgtest.Terminate, committed))
		e, err := st.Append(ctx, customDraft(i+1), sessiontree.AppendOptions{})
		p.SetFault(nil)
		if err != nil {
			t.Errorf("kept row %v: Append = %v; want the entry: its COMMIT's reply arrived", kept, err)
		}
		if log := logOf(t, direct, st.ID()); len(log) != before+1 || log[before].ID != e.ID {
			t.Errorf("kept row %v: Append = %s; the log grew by %d entries; want that one", kept, e.ID, len(log)-before)
		}
	}
}

// faultGroup appends to n sessions of proxied, each with one entry, in
// one group while f acts, and returns the sessions and the appends'
// entries and errors.
func faultGroup(t *testing.T, proxied *DB, p *pgtest.Proxy, n int, f pgtest.Fault) ([]*Storage, []sessiontree.Entry, []error) {
	t.Helper()
	sts, _ := groupSessions(t, proxied, n)
	groupOf(proxied, n)
	ds := make([]sessiontree.Draft, n)
	for i := range ds {
		ds[i] = customDraft(i + 1)
	}
	p.SetFault(f)
	defer p.SetFault(nil)
	out, errs := appendEach(sts, ds, make([]sessiontree.AppendOptions, n))
	return sts, out, errs
}

// TestGroupTerminatedAfterCommit: the same fault on a group's commit.
// Its members committed: none runs again alone (each would store its
// entry a second time), and each is answered its entry.
func TestGroupTerminatedAfterCommit(t *testing.T) {
	t.Parallel()
	proxied, direct, p := faultDB(t)
	sts, out, errs := faultGroup(t, proxied, p, 4, once(pgtest.Terminate, committed))
	if g := proxied.group.groups.Load(); g != 1 {
		t.Fatalf("%d groups; want the 4 appends in 1", g)
	}
	for i, st := range sts {
		if errs[i] != nil {
			t.Errorf("append %d = %v; want the entry: the group's COMMIT's reply arrived", i, errs[i])
		}
		if log := logOf(t, direct, st.ID()); len(log) != 2 || log[1].ID != out[i].ID {
			t.Errorf("session %d holds %d entries; want 2, the second %s", i, len(log), out[i].ID)
		}
	}
}

// TestAppendRetriesConnectionDroppedIdle: the network drops the pool's
// connections while they are idle (no error from the server: a proxy or
// a NAT forgetting them), and the next append's batch has a statement
// its connection has not prepared, so pgx's preparation (a Parse and a
// Describe, which run nothing) is what meets the dropped connection.
// Nothing was run: the append is tried again on a new connection and
// stored once, not reported as a commit whose outcome is unknown.
func TestAppendRetriesConnectionDroppedIdle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faultSession(t)
	direct, p, st := f.direct, f.p, f.st
	p.CutAll()
	e, err := st.Append(ctx, customDraft(1), sessiontree.AppendOptions{})
	if err != nil {
		t.Errorf("Append after the connections dropped = %v; want it tried again on a new one", err)
	}
	if log := logOf(t, direct, st.ID()); len(log) != 2 || log[1].ID != e.ID {
		t.Errorf("the log holds %d entries; want 2, the second %s", len(log), e.ID)
	}
}

// TestAppendRetriesPreparedConnectionDropped: as above, but the
// connection has every statement of the append's batch prepared, so the
// batch itself is what is sent on the connection the server closed (a
// server restarted, no FATAL sent) while it was idle. The server's close
// was there to see before the batch was sent: it never reached the
// server, and the append is tried again, not reported as a commit whose
// outcome is unknown.
func TestAppendRetriesPreparedConnectionDropped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faultSession(t)
	for i := 1; i <= 2; i++ { // the kept row's batch prepared too
		if _, err := f.st.Append(ctx, customDraft(i), sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	f.p.CutAll()
	e, err := f.st.Append(ctx, customDraft(3), sessiontree.AppendOptions{})
	if err != nil {
		t.Errorf("Append after the connection was dropped = %v; want it tried again on a new one", err)
	}
	if log := logOf(t, f.direct, f.st.ID()); len(log) != 4 || log[3].ID != e.ID {
		t.Errorf("the log holds %d entries; want 4, the last %s", len(log), e.ID)
	}
}

// wantUnknown fails t unless err says the commit's outcome is unknown.
func wantUnknown(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, sessiontree.ErrCommitUnknown) || !errors.Is(err, sessiontree.ErrStorage) {
		t.Errorf("%s = %v; want ErrCommitUnknown and ErrStorage", what, err)
	}
}

// TestAppendCommitReplyLost: the connection is lost after the server
// committed an append and before its reply: the append is not tried
// again (stored once), its error says the outcome is unknown, and an
// append of the draft again with its id is refused as the doc says.
func TestAppendCommitReplyLost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faultSession(t)
	direct, p, st := f.direct, f.p, f.st
	d := customDraft(1)
	d.ID = "0000c0de"
	p.SetFault(once(pgtest.Cut, committed))
	_, err := st.Append(ctx, d, sessiontree.AppendOptions{})
	p.SetFault(nil)
	wantUnknown(t, "Append", err)
	if _, err := st.Append(ctx, d, sessiontree.AppendOptions{}); !errors.Is(err, sessiontree.ErrConflict) {
		t.Errorf("Append of the draft again = %v; want ErrConflict: it was stored", err)
	}
	if log := logOf(t, direct, st.ID()); len(log) != 2 || log[1].ID != d.ID {
		t.Errorf("the log holds %d entries; want 2, the second %s", len(log), d.ID)
	}
}

// TestAppendCancelledDuringCommit: the append's context ends while the
// server's reply to its COMMIT is on its way (held by the proxy): the
// append committed, and its error, which matches context.Canceled, says
// the outcome is unknown, not that the append was cancelled.
func TestAppendCancelledDuringCommit(t *testing.T) {
	t.Parallel()
	f := faultSession(t)
	direct, p, st := f.direct, f.p, f.st
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p.SetFault(func(_ int, m pgtest.Message) pgtest.Action {
		if committed(m) {
			cancel()
			time.Sleep(50 * time.Millisecond) // the reply arrives after the client gave up
		}
		return pgtest.Pass
	})
	_, err := st.Append(ctx, customDraft(1), sessiontree.AppendOptions{})
	p.SetFault(nil)
	wantUnknown(t, "Append", err)
	if log := logOf(t, direct, st.ID()); len(log) != 2 {
		t.Errorf("the log holds %d entries; want 2", len(log))
	}
}

// TestGroupCommitReplyLost: the same loss on a group's commit answers
// every member that the outcome is unknown; none runs again alone, and
// each session holds its entry once.
func TestGroupCommitReplyLost(t *testing.T) {
	t.Parallel()
	proxied, direct, p := faultDB(t)
	sts, _, errs := faultGroup(t, proxied, p, 3, once(pgtest.Cut, committed))
	for i, st := range sts {
		wantUnknown(t, fmt.Sprintf("append %d", i), errs[i])
		if log := logOf(t, direct, st.ID()); len(log) != 2 {
			t.Errorf("session %d holds %d entries; want 2", i, len(log))
		}
	}
}

// TestWriteCommitReplyLost: the same loss on the writes of the general
// path (database/sql's transaction): a leaf move, a batch, a claim, its
// release. Each is stored once and says the outcome is unknown; a claim
// taken again gets a fence above the one lost; a release tried again
// succeeds (the claim was released).
func TestWriteCommitReplyLost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faultSession(t)
	direct, p, st, first := f.direct, f.p, f.st, f.first
	lost := func(what string, write func() error) {
		t.Helper()
		p.SetFault(once(pgtest.Cut, committed))
		err := write()
		p.SetFault(nil)
		wantUnknown(t, what, err)
	}
	lost("SetLeaf", func() error { _, err := st.SetLeaf(ctx, first.ID, sessiontree.AppendOptions{}); return err })
	e, err := sessiontree.BuildEntry(customDraft(1), "0000ba7c", first.ID, "2026-12-07T00:00:00.000Z")
	if err != nil {
		t.Fatal(err)
	}
	lost("AppendBatch", func() error { return st.AppendBatch(ctx, []sessiontree.Entry{e}) })
	if log := logOf(t, direct, st.ID()); len(log) != 3 || log[1].Type != sessiontree.TypeLeaf || log[2].ID != e.ID {
		t.Errorf("the log holds %d entries; want 3: the first, the leaf move, %s", len(log), e.ID)
	}
	lost("Claim", func() error { _, err := st.Claim(ctx, "agent", time.Minute); return err })
	c, err := st.Claim(ctx, "agent", time.Minute)
	if err != nil || c.Fence() != 2 {
		t.Fatalf("Claim again = %v; want fence 2, above the lost claim's", err)
	}
	lost("Release", func() error { return c.Release(ctx) })
	if err := c.Release(ctx); err != nil {
		t.Errorf("Release again after its outcome was unknown = %v; want nil: it was released", err)
	}
}

// TestAppendsUnderRandomFaults: writers append to their sessions at
// once (alone and in groups) while the proxy cuts connections at random
// points, either way, ends some after a COMMIT's reply as a server told
// to stop does, and answers some replies with a pooler's error. Afterwards every append acknowledged is stored
// once, one whose error says the outcome is unknown at most once, and
// every other failed append not at all; Check (the cleanup) finds the
// counters and branches sound.
func TestAppendsUnderRandomFaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	proxied, direct, p := faultDB(t)
	const writers, each = 4, 12
	sts := make([]*Storage, writers)
	for i := range sts {
		sts[i] = newStorage(t, proxied)
	}
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(15, 15))
	p.SetFault(func(_ int, m pgtest.Message) pgtest.Action {
		mu.Lock()
		defer mu.Unlock()
		switch x := r.IntN(1000); {
		case x < 5:
			return pgtest.Cut
		case x < 150 && committed(m):
			return pgtest.Terminate
		case x < 8 && !m.FromClient:
			return pgtest.PoolerLost
		}
		return pgtest.Pass
	})
	errs := make([][]error, writers)
	var wg sync.WaitGroup
	for w, st := range sts {
		errs[w] = make([]error, each)
		wg.Go(func() {
			for i := range each {
				_, errs[w][i] = st.Append(ctx, customDraft(i), sessiontree.AppendOptions{})
			}
		})
	}
	wg.Wait()
	p.SetFault(nil)
	failed, unknown := 0, 0
	for w, st := range sts {
		stored := make(map[int]int)
		for _, e := range logOf(t, direct, st.ID()) {
			var f struct{ Data int }
			if err := json.Unmarshal(e.Raw, &f); err != nil {
				t.Fatal(err)
			}
			stored[f.Data]++
		}
		for i, err := range errs[w] {
			n := stored[i]
			switch {
			case err == nil && n != 1:
				t.Errorf("writer %d, append %d acknowledged: stored %d times", w, i, n)
			case errors.Is(err, sessiontree.ErrCommitUnknown) && n > 1:
				t.Errorf("writer %d, append %d: %v; stored %d times", w, i, err, n)
			case err != nil && !errors.Is(err, sessiontree.ErrCommitUnknown) && n != 0:
				t.Errorf("writer %d, append %d: %v; stored %d times, want none", w, i, err, n)
			}
			if err != nil {
				failed++
			}
			if errors.Is(err, sessiontree.ErrCommitUnknown) {
				unknown++
			}
		}
	}
	t.Logf("%d appends failed, %d of them with the outcome unknown; groups %d", failed, unknown, proxied.group.groups.Load())
}

// TestReadCommitReplyLost: the connection of a read that takes a
// snapshot (a path, a View) is lost after the server ended the read-only
// transaction and before its reply. Nothing was written and everything
// was read: the read is tried again on a new connection, not failed as
// a commit whose outcome is unknown.
func TestReadCommitReplyLost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faultSession(t)
	proxied, p, st, e := f.proxied, f.p, f.st, f.first
	p.SetFault(once(pgtest.Cut, committed))
	path, err := st.Path(ctx, e.ID)
	if err != nil || len(path) != 1 {
		t.Errorf("Path = %d entries, %v; want 1", len(path), err)
	}
	p.SetFault(once(pgtest.Terminate, committed))
	var in sessiontree.SessionInfo
	err = proxied.View(ctx, func(tx sessiontree.DatabaseTx) error {
		var err error
		in, err = tx.SessionInfo(st.ID())
		return err
	})
	if err != nil || in.Entries != 1 {
		t.Errorf("View(SessionInfo) = %+v, %v; want 1 entry", in, err)
	}
}

// TestReadRetriesConnectionDropped: reads of one statement on the pool
// (the leaf, an entry, the labels, the state, the log) each meet a
// connection the network dropped while idle, and are tried again on a
// new one.
func TestReadRetriesConnectionDropped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faultSession(t)
	p, st, e := f.p, f.st, f.first
	for _, r := range []struct {
		name string
		read func() error
	}{
		{"Leaf", func() error { _, err := st.Leaf(ctx); return err }},
		{"Entry", func() error { _, err := st.Entry(ctx, e.ID); return err }},
		{"Labels", func() error { _, err := st.Labels(ctx); return err }},
		{"State", func() error { _, err := st.State(ctx, e.ID); return err }},
		{"Log", func() error { _, err := st.Log(ctx, 0, 0); return err }},
	} {
		if err := r.read(); err != nil { // a connection to the pool
			t.Fatal(err)
		}
		p.CutAll()
		if err := r.read(); err != nil {
			t.Errorf("%s after the connections dropped = %v; want it tried again on a new one", r.name, err)
		}
	}
}

// TestAppendPoolerLostServerAfterCommit: between the engine and the
// server a pooler (PgBouncer) loses its connection to the server after
// the server ran an append's whole batch, COMMIT included, and answers
// its own error (08P01) in place of the batch's first reply. The error
// answers a statement before the COMMIT, but it is not the server's: the
// outcome is unknown, and the append is not tried again (which stored
// it a second time).
func TestAppendPoolerLostServerAfterCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faultSession(t)
	direct, p, st := f.direct, f.p, f.st
	// The server answers the batch at its Sync, once every statement ran.
	p.SetFault(once(pgtest.PoolerLost, func(m pgtest.Message) bool { return !m.FromClient && m.Tag == "BEGIN" }))
	_, err := st.Append(ctx, customDraft(1), sessiontree.AppendOptions{})
	p.SetFault(nil)
	wantUnknown(t, "Append", err)
	if log := logOf(t, direct, st.ID()); len(log) > 2 {
		t.Errorf("the log holds %d entries; want at most 2", len(log))
	}
}

// TestQueuedAppendLeavesAtItsDeadline: an append (without a deadline)
// leads, and the network stops delivering its batch, without a word: it
// waits until the connection is cut. Appends to other sessions queued
// behind it, each with a deadline, return at their deadlines, not once
// the stalled append is done (the operating system gives up on such a
// connection after many minutes); they were not stored.
func TestQueuedAppendLeavesAtItsDeadline(t *testing.T) {
	t.Parallel()
	f := faultSession(t)
	others, _ := groupSessions(t, f.proxied, 3)
	stall, stalled := signalling(pgtest.Stall, sending("INSERT INTO entries"))
	f.p.SetFault(stall)
	lead := make(chan error, 1)
	go func() {
		_, err := f.st.Append(context.Background(), customDraft(1), sessiontree.AppendOptions{})
		lead <- err
	}()
	<-stalled
	errs := make(chan error, len(others))
	for _, st := range others {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			_, err := st.Append(ctx, customDraft(2), sessiontree.AppendOptions{})
			errs <- err
		}()
	}
	for range others {
		select {
		case err := <-errs:
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("queued append = %v; want context.DeadlineExceeded", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("queued appends still wait for the stalled one, past their deadlines")
		}
	}
	var err error
	select {
	case err = <-lead:
		t.Errorf("the stalled append returned (%v) before its connection was cut", err)
	default:
		f.p.CutAll()
		err = <-lead
	}
	wantUnknown(t, "stalled Append", err)
	for i, st := range others {
		if log := logOf(t, f.direct, st.ID()); len(log) != 1 {
			t.Errorf("session %d holds %d entries; want its first alone", i, len(log))
		}
	}
}

// emptyDB gives a test an empty database, for Open to migrate.
var emptyDB = pgtest.NewTemplate(func(context.Context, string) error { return nil })

// TestOpenRetriesConnectionLostInMigration: Open migrating an empty
// database through the proxy loses its connection at a step, either
// before the step ran (a statement cut on its way) or after it committed
// (its COMMIT's reply cut: an unknown outcome), or at its read, after
// the migrations, of what they left to Go (afterMigrations: a read of
// one statement on the pool, tried again as every other is; Open failed
// with 'after the migrations: storage failure: ... connection reset by
// peer', met by TestFleet's client behind the cutting proxy). Open tries
// again and succeeds, the step that committed found recorded, not
// applied twice, and the schema is the latest.
func TestOpenRetriesConnectionLostInMigration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault pgtest.Fault
	}{
		{"statement cut", once(pgtest.Cut, sending("advisory_xact_lock"))},
		{"commit reply cut", once(pgtest.Cut, committed)},
		{"after the migrations", once(pgtest.Cut, sending("EXISTS (SELECT 1 FROM derived_redo)"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := emptyDB.Database(t)
			p := pgtest.NewProxy(t, url)
			p.SetFault(tc.fault)
			db, err := Open(context.Background(), p.URL(url), Options{})
			if err != nil {
				t.Fatalf("Open with the connection lost in a migration = %v; want it tried again", err)
			}
			defer db.Close()
			migs, err := migrate.Load(migrate.PostgresFiles)
			if err != nil {
				t.Fatal(err)
			}
			if v, err := migrate.Postgres.Version(context.Background(), db.db); err != nil || v != migrate.Latest(migs) {
				t.Errorf("version after Open = %d, %v; want %d", v, err, migrate.Latest(migs))
			}
			var n int
			if err := db.db.GetContext(context.Background(), &n, `SELECT count(*) FROM `+migrate.Table); err != nil || n != len(migs) {
				t.Errorf("migration records = %d, %v; want %d, one each", n, err, len(migs))
			}
		})
	}
}
