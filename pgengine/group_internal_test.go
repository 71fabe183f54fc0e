package pgengine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/pgtest"
)

// groupOf makes db's next group wait until n appends are queued (for 10
// s at most), so that n concurrent appends form one group.
func groupOf(db *DB, n int) {
	var once sync.Once
	db.group.beforeTake = func() {
		once.Do(func() {
			for end := time.Now().Add(10 * time.Second); db.group.Len() < n && time.Now().Before(end); {
				time.Sleep(time.Millisecond)
			}
		})
	}
}

// appendEach appends ds[i] with opts[i] to sts[i], all at once, and
// returns the entries and errors.
func appendEach(sts []*Storage, ds []sessiontree.Draft, opts []sessiontree.AppendOptions) ([]sessiontree.Entry, []error) {
	out, errs := make([]sessiontree.Entry, len(sts)), make([]error, len(sts))
	var wg sync.WaitGroup
	for i, st := range sts {
		wg.Go(func() { out[i], errs[i] = st.Append(context.Background(), ds[i], opts[i]) })
	}
	wg.Wait()
	return out, errs
}

// groupFixture is n sessions of one DB, each with one entry.
func groupFixture(t *testing.T, n int) (*DB, []*Storage, []sessiontree.Entry) {
	t.Helper()
	db := openTestDB(t, Options{})
	sts, firsts := groupSessions(t, db, n)
	return db, sts, firsts
}

// groupSessions is n sessions of db, each with one entry.
func groupSessions(t *testing.T, db *DB, n int) ([]*Storage, []sessiontree.Entry) {
	t.Helper()
	sts, firsts := make([]*Storage, n), make([]sessiontree.Entry, n)
	for i := range sts {
		sts[i] = newStorage(t, db)
		var err error
		if firsts[i], err = sts[i].Append(context.Background(), customDraft(0), sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return sts, firsts
}

// usageDraft is an assistant message with usage: input tokens, 1 output
// token, $0.5.
func usageDraft(t *testing.T, input int) sessiontree.Draft {
	t.Helper()
	f, err := sessiontree.Fields("message", map[string]any{"role": "assistant", "content": []any{},
		"provider": "p", "model": "m", "usage": map[string]any{"input": input, "output": 1, "cost": map[string]any{"total": 0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	return sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: f}
}

// TestGroupSharesATransaction: four concurrent appends to four sessions
// of one DB, two of them with usage, commit in one transaction (one
// xmin), each under its own session's leaf, with its session's counters
// and usage rows (Check compares them with the log).
func TestGroupSharesATransaction(t *testing.T) {
	t.Parallel()
	db, sts, firsts := groupFixture(t, 4)
	groupOf(db, 4)
	ds := []sessiontree.Draft{customDraft(1), usageDraft(t, 7), customDraft(3), usageDraft(t, 9)}
	out, errs := appendEach(sts, ds, make([]sessiontree.AppendOptions, 4))
	for i := range sts {
		if errs[i] != nil || out[i].ParentID != firsts[i].ID || out[i].Seq != 2 {
			t.Errorf("append %d = %+v, %v; want seq 2 under %s", i, out[i], errs[i], firsts[i].ID)
		}
		if leaf, err := sts[i].Leaf(context.Background()); err != nil || leaf != out[i].ID {
			t.Errorf("session %d: Leaf = %q, %v; want %s", i, leaf, err, out[i].ID)
		}
	}
	for i, want := range []int64{0, 7, 0, 9} {
		if stats, err := sts[i].Stats(context.Background()); err != nil || stats.Tokens.Input != want {
			t.Errorf("session %d: Stats = %+v, %v; want %d input tokens", i, stats, err, want)
		}
	}
	if g, m := db.group.groups.Load(), db.group.members.Load(); g != 1 || m != 4 {
		t.Errorf("%d groups of %d appends in all, want 1 of 4", g, m)
	}
	wantOneWriter(t, db, out)
}

// TestGroupMemberGuardFailsAlone: a member whose IfLeaf guard does not
// hold is left out of the group and answered ErrConflict alone; the
// others commit together.
func TestGroupMemberGuardFailsAlone(t *testing.T) {
	t.Parallel()
	db, sts, _ := groupFixture(t, 4)
	groupOf(db, 4)
	stale := "0000dead"
	opts := make([]sessiontree.AppendOptions, 4)
	opts[2].IfLeaf = &stale
	ds := []sessiontree.Draft{customDraft(1), customDraft(2), customDraft(3), customDraft(4)}
	out, errs := appendEach(sts, ds, opts)
	for i, err := range errs {
		if want := i == 2; errors.Is(err, sessiontree.ErrConflict) != want || (!want && err != nil) {
			t.Errorf("append %d: %v (guard failing: %v)", i, err, want)
		}
	}
	if n := writers(t, db, []sessiontree.Entry{out[0], out[1], out[3]}); n != 1 {
		t.Errorf("the other three entries were written by %d transactions, want 1", n)
	}
	if a := db.group.aborted.Load(); a != 0 {
		t.Errorf("%d groups aborted, want none (the guard is checked before anything is sent)", a)
	}
	if stats, err := sts[2].Stats(context.Background()); err != nil || stats.Entries != 1 {
		t.Errorf("guarded session: Stats = %+v, %v; want its 1 entry", stats, err)
	}
}

// TestAbortedGroupRerunsMembers: a member whose draft's id its session
// has, and one whose session another handle has claimed, abort the
// group's transaction on the server; every member then runs again alone,
// so those two fail (ErrConflict, a ClaimedError) and the other two
// commit.
func TestAbortedGroupRerunsMembers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, sts, firsts := groupFixture(t, 4)
	other, err := db.OpenStorage(ctx, sts[3].ID())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Claim(ctx, "agent", time.Minute); err != nil {
		t.Fatal(err)
	}
	groupOf(db, 4)
	ds := []sessiontree.Draft{customDraft(1), customDraft(2), customDraft(3), customDraft(4)}
	ds[1].ID = firsts[1].ID
	out, errs := appendEach(sts, ds, make([]sessiontree.AppendOptions, 4))
	var ce *sessiontree.ClaimedError
	if !errors.Is(errs[1], sessiontree.ErrConflict) {
		t.Errorf("append of a taken id: %v, want ErrConflict", errs[1])
	}
	if !errors.As(errs[3], &ce) || ce.Holder != "agent" {
		t.Errorf("append past another's claim: %v, want a ClaimedError naming agent", errs[3])
	}
	for _, i := range []int{0, 2} {
		if errs[i] != nil || out[i].ParentID != firsts[i].ID {
			t.Errorf("append %d = %+v, %v; want it under %s", i, out[i], errs[i], firsts[i].ID)
		}
	}
	if a, alone := db.group.aborted.Load(), db.group.alone.Load(); a != 1 || alone != 4 {
		t.Errorf("%d groups aborted, %d members run again alone; want 1 and 4", a, alone)
	}
	for i, want := range []int64{2, 1, 2, 1} {
		if stats, err := sts[i].Stats(ctx); err != nil || stats.Entries != want {
			t.Errorf("session %d: Stats = %+v, %v; want %d entries", i, stats, err, want)
		}
	}
}

// TestGroupClaimRefusesItsGroup: one member's session claimed by another
// handle aborts the group's transaction, whichever member it is (with
// usage records or without), and alone that member fails (a
// ClaimedError) and the others commit.
func TestGroupClaimRefusesItsGroup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for claimed := range 3 {
		db, sts, firsts := groupFixture(t, 3)
		other, err := db.OpenStorage(ctx, sts[claimed].ID())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.Claim(ctx, "agent", time.Minute); err != nil {
			t.Fatal(err)
		}
		groupOf(db, 3)
		out, errs := appendEach(sts, []sessiontree.Draft{usageDraft(t, 1), customDraft(2), usageDraft(t, 3)}, make([]sessiontree.AppendOptions, 3))
		for i := range sts {
			var ce *sessiontree.ClaimedError
			switch {
			case i == claimed && (!errors.As(errs[i], &ce) || ce.Holder != "agent"):
				t.Errorf("claimed %d: append %d: %v, want a ClaimedError naming agent", claimed, i, errs[i])
			case i != claimed && (errs[i] != nil || out[i].ParentID != firsts[i].ID):
				t.Errorf("claimed %d: append %d = %+v, %v; want it under %s", claimed, i, out[i], errs[i], firsts[i].ID)
			}
		}
		if a := db.group.aborted.Load(); a != 1 {
			t.Errorf("claimed %d: %d groups aborted, want 1", claimed, a)
		}
		if err := db.Check(ctx, ""); err != nil {
			t.Error(err)
		}
	}
}

// TestGroupsOfTwoDBsOnSharedSessions: two DBs (two processes' pools)
// append to the same four sessions, each writer of one DB to another
// session than the other DB's writer of the same rank, so their groups
// lock overlapping sets of rows: every append commits, no group is
// aborted (a deadlock would abort one: groups lock in key order), and
// every session holds one linear chain of all its appends.
func TestGroupsOfTwoDBsOnSharedSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.Migrated.Database(t)
	dbs := make([]*DB, 2)
	for i := range dbs {
		db, err := Open(ctx, url, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	const sessions, each = 4, 40
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = newStorage(t, dbs[0]).ID()
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*sessions)
	for d, db := range dbs {
		for w := range sessions {
			id := ids[w]
			if d == 1 {
				id = ids[sessions-1-w]
			}
			st, err := db.OpenStorage(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				for i := range each {
					if _, err := st.Append(ctx, customDraft(i), sessiontree.AppendOptions{}); err != nil {
						errs <- fmt.Errorf("db %d, session %s: %w", d, id, err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for d, db := range dbs {
		if a := db.group.aborted.Load(); a != 0 {
			t.Errorf("db %d: %d groups aborted, want none", d, a)
		}
	}
	if g := dbs[0].group.groups.Load() + dbs[1].group.groups.Load(); g == 0 {
		t.Error("no group formed: the test did not test groups")
	}
	for _, id := range ids {
		st, err := dbs[0].OpenStorage(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if stats, err := st.Stats(ctx); err != nil || stats.Entries != 2*each {
			t.Errorf("session %s: Stats = %+v, %v; want %d entries", id, stats, err, 2*each)
		}
		leaf, err := st.Leaf(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if path, err := st.Path(ctx, leaf); err != nil || len(path) != 2*each {
			t.Errorf("session %s: path of %d entries, %v; want one chain of %d", id, len(path), err, 2*each)
		}
	}
	if err := dbs[0].Check(ctx, ""); err != nil {
		t.Error(err)
	}
}

// TestGroupLeavesOutACancelledAppend: an append whose context is done
// after it queued is left out of its group and answered with the
// context's error, as alone; the other member commits.
func TestGroupLeavesOutACancelledAppend(t *testing.T) {
	t.Parallel()
	db, sts, firsts := groupFixture(t, 2)
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	db.group.beforeTake = func() {
		once.Do(func() {
			for end := time.Now().Add(10 * time.Second); db.group.Len() < 2 && time.Now().Before(end); {
				time.Sleep(time.Millisecond)
			}
			cancel()
		})
	}
	errs := make([]error, 2)
	var out sessiontree.Entry
	var wg sync.WaitGroup
	wg.Go(func() { _, errs[0] = sts[0].Append(ctx, customDraft(1), sessiontree.AppendOptions{}) })
	wg.Go(func() {
		out, errs[1] = sts[1].Append(context.Background(), customDraft(2), sessiontree.AppendOptions{})
	})
	wg.Wait()
	if !errors.Is(errs[0], context.Canceled) {
		t.Errorf("cancelled append: %v, want context.Canceled", errs[0])
	}
	if errs[1] != nil || out.ParentID != firsts[1].ID {
		t.Errorf("other append = %+v, %v; want it under %s", out, errs[1], firsts[1].ID)
	}
	if stats, err := sts[0].Stats(context.Background()); err != nil || stats.Entries != 1 {
		t.Errorf("cancelled append's session: Stats = %+v, %v; want its 1 entry", stats, err)
	}
}

// wantOneWriter checks that one transaction wrote the group's entries es
// and that db's sessions agree with their logs.
func wantOneWriter(t *testing.T, db *DB, es []sessiontree.Entry) {
	t.Helper()
	if n := writers(t, db, es); n != 1 {
		t.Errorf("the group's entries were written by %d transactions, want 1", n)
	}
	if err := db.Check(context.Background(), ""); err != nil {
		t.Error(err)
	}
}

// writers counts the transactions that wrote the entries es (their
// distinct xmin).
func writers(t *testing.T, db *DB, es []sessiontree.Entry) int {
	t.Helper()
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.ID
	}
	var n int
	if err := db.db.GetContext(context.Background(), &n,
		`SELECT count(DISTINCT xmin::text) FROM entries WHERE id = ANY($1)`, ids); err != nil {
		t.Fatal(err)
	}
	return n
}

// wantUnder checks that each append i (out[i], errs[i]) succeeded under
// parents[i].
func wantUnder(t *testing.T, out []sessiontree.Entry, errs []error, parents []sessiontree.Entry) {
	t.Helper()
	for i := range out {
		if errs[i] != nil || out[i].ParentID != parents[i].ID {
			t.Errorf("append %d = %+v, %v; want it under %s", i, out[i], errs[i], parents[i].ID)
		}
	}
}

// holdRow locks session pk's row in a transaction of db's, as another
// writer would, until the returned function ends it (writing nothing).
func holdRow(t *testing.T, db *DB, pk int64) (release func()) {
	t.Helper()
	tx, err := db.db.BeginTxx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`SELECT 1 FROM sessions WHERE pk = $1 FOR UPDATE`, pk); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			if err := tx.Commit(); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(release)
	return release
}

// waitFor waits until cond holds, for 10 s at most.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestGroupRunsFromKeptRows: a group whose Storages all kept their rows
// is written in one round trip from those rows (counted kept), and
// checked there: a row another DB wrote since (its copy stale) refuses
// that batch, and the group runs again the two-round-trip way, each
// entry under its session's true leaf, still in one transaction; the
// next group is from kept rows again.
func TestGroupRunsFromKeptRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, sts, firsts := groupFixture(t, 4)
	groupOf(db, 4)
	ds := []sessiontree.Draft{customDraft(1), usageDraft(t, 7), customDraft(3), customDraft(4)}
	out, errs := appendEach(sts, ds, make([]sessiontree.AppendOptions, 4))
	wantUnder(t, out, errs, firsts)
	if k, s := db.group.kept.Load(), db.group.stale.Load(); k != 1 || s != 0 {
		t.Errorf("%d writes from kept rows, %d refused; want the group's 1 and none", k, s)
	}

	otherDB := openOther(t, db)
	other, err := otherDB.OpenStorage(ctx, sts[1].ID())
	if err != nil {
		t.Fatal(err)
	}
	between, err := other.Append(ctx, customDraft(10), sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	groupOf(db, 4)
	parents := []sessiontree.Entry{out[0], between, out[2], out[3]}
	out, errs = appendEach(sts, ds, make([]sessiontree.AppendOptions, 4))
	wantUnder(t, out, errs, parents)
	if k, s := db.group.kept.Load(), db.group.stale.Load(); k != 1 || s != 1 {
		t.Errorf("%d writes from kept rows, %d refused; want 1 and the stale group's 1", k, s)
	}
	if a, alone := db.group.aborted.Load(), db.group.alone.Load(); a != 0 || alone != 0 {
		t.Errorf("%d groups aborted, %d members alone; want none", a, alone)
	}
	if n := writers(t, db, out); n != 1 {
		t.Errorf("the group's entries were written by %d transactions, want 1", n)
	}
	// The rows kept after that group are current again.
	groupOf(db, 4)
	if _, errs = appendEach(sts, ds, make([]sessiontree.AppendOptions, 4)); errors.Join(errs...) != nil {
		t.Fatal(errs)
	}
	if k, s := db.group.kept.Load(), db.group.stale.Load(); k != 2 || s != 1 {
		t.Errorf("%d writes from kept rows, %d refused; want 2 and 1", k, s)
	}
	if stats, err := sts[1].Stats(ctx); err != nil || stats.Entries != 5 || stats.Tokens.Input != 21 {
		t.Errorf("session 1: Stats = %+v, %v; want 5 entries, 21 input tokens", stats, err)
	}
	if err := db.Check(ctx, ""); err != nil {
		t.Error(err)
	}
}

// TestGroupKeepsEveryMembersRow: each member of a group from kept rows
// keeps its row as the group's transaction wrote it (with the
// transaction's id), so the next group of the same writers is from kept
// rows again, none refused.
func TestGroupKeepsEveryMembersRow(t *testing.T) {
	t.Parallel()
	db, sts, firsts := groupFixture(t, 3)
	ds := []sessiontree.Draft{customDraft(1), usageDraft(t, 7), customDraft(3)}
	parents := firsts
	for round := 1; round <= 3; round++ {
		groupOf(db, 3)
		out, errs := appendEach(sts, ds, make([]sessiontree.AppendOptions, 3))
		wantUnder(t, out, errs, parents)
		parents = out
	}
	if k, s := db.group.kept.Load(), db.group.stale.Load(); k < 2 || s != 0 {
		t.Errorf("%d writes from kept rows, %d refused; want the groups after the first from kept rows, none refused", k, s)
	}
	if err := db.Check(context.Background(), ""); err != nil {
		t.Error(err)
	}
}

// TestGroupDoesNotWaitForALockedKeptRow: a member's row locked by
// another transaction refuses the group's batch from kept rows at once
// (NOWAIT) instead of holding the other rows while it waits; the group
// then locks its rows the two-round-trip way, skipping that row, and
// commits the other members in one transaction without waiting; the
// member whose row was held runs again alone, waits, and is written once
// the row is free.
func TestGroupDoesNotWaitForALockedKeptRow(t *testing.T) {
	t.Parallel()
	db, sts, firsts := groupFixture(t, 3)
	release := holdRow(t, db, sts[2].pk)
	groupOf(db, 3)
	out, errs := make([]sessiontree.Entry, 3), make([]error, 3)
	done := make([]chan struct{}, 3)
	for i, st := range sts {
		done[i] = make(chan struct{})
		go func() {
			defer close(done[i])
			out[i], errs[i] = st.Append(context.Background(), customDraft(i+1), sessiontree.AppendOptions{})
		}()
	}
	for i := range 2 {
		select {
		case <-done[i]:
		case <-time.After(10 * time.Second):
			t.Fatalf("append %d did not return while another member's row was held", i)
		}
	}
	if n := db.group.stale.Load(); n < 1 {
		t.Errorf("%d batches from kept rows refused; want the group's", n)
	}
	release()
	<-done[2]
	wantUnder(t, out, errs, firsts)
	if a := db.group.aborted.Load(); a != 0 {
		t.Errorf("%d groups aborted; want none", a)
	}
	wantOneWriter(t, db, out[:2])
}

// openOther opens db's database again, as another process would.
func openOther(t *testing.T, db *DB) *DB {
	t.Helper()
	other, err := Open(context.Background(), db.url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	return other
}

// TestGroupMemberCancelledWhileTheGroupWaits: an append whose context
// ends while its group waits (here for a connection of a pool all in
// use) returns with its context's error and writes nothing; the other
// member is written once a connection is free. The group waited with its
// first member's context only, and the cancelled append with it, until
// a connection was released.
func TestGroupMemberCancelledWhileTheGroupWaits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTestDB(t, Options{MaxConns: 2})
	sts, firsts := make([]*Storage, 2), make([]sessiontree.Entry, 2)
	for i := range sts {
		sts[i] = newStorage(t, db)
		var err error
		if firsts[i], err = sts[i].Append(ctx, customDraft(0), sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var held []interface{ Close() error }
	for range 2 {
		c, err := db.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	groupOf(db, 2)
	var first sessiontree.Entry
	var firstErr error
	firstDone := make(chan struct{})
	go func() {
		defer close(firstDone)
		first, firstErr = sts[0].Append(ctx, customDraft(1), sessiontree.AppendOptions{})
	}()
	waitFor(t, "the first append to lead", func() bool { return db.group.Len() == 1 })
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var cancelledErr error
	cancelledDone := make(chan struct{})
	go func() {
		defer close(cancelledDone)
		_, cancelledErr = sts[1].Append(cctx, customDraft(2), sessiontree.AppendOptions{})
	}()
	waitFor(t, "the group to wait for a connection", func() bool { return db.db.Stats().WaitCount > 0 })
	cancel()
	select {
	case <-cancelledDone:
	case <-time.After(10 * time.Second):
		t.Error("the cancelled append did not return while the pool was in use")
	}
	for _, c := range held {
		c.Close()
	}
	<-cancelledDone
	<-firstDone
	if !errors.Is(cancelledErr, context.Canceled) {
		t.Errorf("cancelled append: %v; want context.Canceled", cancelledErr)
	}
	if stats, err := sts[1].Stats(ctx); err != nil || stats.Entries != 1 {
		t.Errorf("cancelled append's session: Stats = %+v, %v; want its 1 entry", stats, err)
	}
	wantUnder(t, []sessiontree.Entry{first}, []error{firstErr}, firsts[:1])
}

// TestLeaderWaitsForNoRow: while an append waits for its session's row,
// which another transaction holds, appends to other sessions of the DB
// are written; the waiting one is written once the row is free. The
// waiting append led the group commit, so every append queued behind it
// waited for that unrelated row too, whatever its context.
func TestLeaderWaitsForNoRow(t *testing.T) {
	t.Parallel()
	db, sts, firsts := groupFixture(t, 3)
	release := holdRow(t, db, sts[0].pk)
	heldDone := make(chan struct{})
	var held sessiontree.Entry
	var heldErr error
	go func() {
		defer close(heldDone)
		held, heldErr = sts[0].Append(context.Background(), customDraft(1), sessiontree.AppendOptions{})
	}()
	waitFor(t, "the append to wait for the held row", func() bool {
		var n int
		err := db.db.GetContext(context.Background(), &n, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`)
		return err == nil && n > 0
	})
	othersDone := make(chan struct{})
	var out []sessiontree.Entry
	var errs []error
	go func() {
		defer close(othersDone)
		out, errs = appendEach(sts[1:], []sessiontree.Draft{customDraft(2), customDraft(3)}, make([]sessiontree.AppendOptions, 2))
	}()
	select {
	case <-othersDone:
		wantUnder(t, out, errs, firsts[1:])
	case <-time.After(10 * time.Second):
		t.Error("appends to other sessions did not return while one session's row was held")
	}
	release()
	<-othersDone
	<-heldDone
	wantUnder(t, []sessiontree.Entry{held}, []error{heldErr}, firsts[:1])
}
