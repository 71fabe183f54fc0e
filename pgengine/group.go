package pgengine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/groupq"
	"github.com/sessiontree/sessiontree/internal/sqltx"
)

// Group commit (issue 15's writers): the pipelined appends of one DB to
// different sessions that arrive while a group runs share the next
// transaction, so writers appending to their own sessions pay one BEGIN,
// one COMMIT, one WAL flush and one round trip per group instead of per
// append. An append queues its request; the first to find no group
// running leads: it lets the group fill (groupq.Queue.Gather: up to 200
// µs for as many appends as its last group took; a lone writer, whose
// last group was itself, never waits), takes one request per session
// from the queue (a second append to a session waits for the next group,
// which builds it under the first) and runs them. A group of one runs
// alone (appendAlone) while it leads. The leader waits for no row lock
// (NOWAIT, SKIP LOCKED): every append queued behind its group would wait
// with it, whatever its session and its context. A member whose row
// another transaction holds runs again alone once the lead is handed on,
// and waits there. For the same reason an append still queued when its
// context ends leaves the queue with the context's error (pipeReq.wait):
// a group whose connection the network stopped answering holds the lead
// until the operating system gives up on that connection, many minutes
// later; one taken into a group waits for it.
//
// When every member's Storage kept its row (rowcache.go: the common case
// of writers appending to their own sessions), the leader builds each
// entry from that copy before locking anything and sends BEGIN, each
// row's lock (keptQuery, which aborts the transaction unless the row is
// still the version kept, and does not wait for a row another
// transaction holds), the insert of every entry, each row's write-back
// and COMMIT in one batch (groupKept). Otherwise, or when that batch was
// refused (nothing was written), the group takes two round trips: it
// locks the rows that are free, in key order, builds each entry under
// its locked leaf, and sends the same
// writes with the COMMIT. The rules are the single append's
// (pipedAppend): the row lock, the IfLeaf guard, the claim refusal
// raised by the write-back. A guard is judged on the locked row only: a
// build that fails on a kept copy sends the group the two-round-trip
// way.
//
// An append whose build fails client-side (a guard, a missing session, a
// row held by another transaction, a leaf not read) is left out of the group and runs again alone
// (appendAlone) once the group is done, which answers it as before. When
// the server aborts the group's transaction (a taken id, a claim's
// refusal, a deadlock or a lost connection before the commit) every
// member runs again alone, so only the guilty one fails. Only a commit
// whose outcome is unknown answers every member with its CommitError.
// When the group is done, the leader hands the lead to the first request
// queued meanwhile, if any.

// pipeReq is one pipelined append waiting for, or in, a group.
type pipeReq struct {
	ctx  context.Context
	s    *Storage
	d    sessiontree.Draft
	opts sessiontree.AppendOptions

	out sessiontree.Entry
	err error // errAlone: run the append again alone
	// wake receives once: true when the request is to lead the next
	// group, false when it is answered.
	wake chan bool
	// state is where the request is (reqQueued, ...); it moves once
	// out of reqQueued, by whichever comes first: a leader taking it,
	// the lead handed to it, or its requester leaving (wait).
	state atomic.Int32
}

// A pipeReq's states.
const (
	reqQueued    = iota // in the queue
	reqTaken            // in a group: it is answered by the group
	reqLeads            // handed the lead: it leads the next group
	reqAbandoned        // left by its requester, whose context ended
)

// errAlone answers a group member that is to run again alone.
var errAlone = errors.New("append runs alone")

// groupCommit is a DB's queue of pipelined appends.
type groupCommit struct {
	groupq.Queue[*pipeReq]

	// groups and members count the groups of two or more run and their
	// appends, aborted the groups whose transaction failed, alone the
	// members run again alone; for the tests and benchmarks.
	groups, members, aborted, alone atomic.Int64
	// kept counts the pipelined writes (a group or a lone append)
	// committed in one round trip from kept rows (rowcache.go), stale
	// those refused there because a row was not its copy's version (or
	// was locked), run again from the rows locked; for the tests.
	kept, stale atomic.Int64

	// cols are the columns of the running group's entries (queueGroup),
	// kept for the next group: one leader runs one group at a time.
	cols entryColumns

	// beforeTake, a test seam, runs in the leader before it takes the
	// queue.
	beforeTake func()
}

// take removes and returns the first request queued for each session;
// later ones of a session stay queued, in order. Requests their
// requesters left are removed and dropped.
func (g *groupCommit) take() []*pipeReq {
	seen := make(map[int64]bool)
	rs := g.Take(func(r *pipeReq) bool {
		if seen[r.s.pk] && r.state.Load() != reqAbandoned {
			return false
		}
		if r.state.CompareAndSwap(reqQueued, reqTaken) || r.state.CompareAndSwap(reqLeads, reqTaken) {
			seen[r.s.pk] = true
		}
		return true
	})
	return slices.DeleteFunc(rs, func(r *pipeReq) bool { return r.state.Load() == reqAbandoned })
}

// wait waits until r is answered (false) or handed the lead (true). A
// request whose context ends while it is still queued leaves the queue
// (the next leader drops it) and is answered with the context's error,
// so that it does not wait past its deadline for a group that is not
// its own (one whose connection the network stopped answering waits
// for the operating system to give up on it); once taken into a group,
// or handed the lead, it waits for that.
func (r *pipeReq) wait() bool {
	select {
	case lead := <-r.wake:
		return lead
	case <-r.ctx.Done():
	}
	if r.state.CompareAndSwap(reqQueued, reqAbandoned) {
		r.out, r.err = sessiontree.Entry{}, r.ctx.Err()
		return false
	}
	return <-r.wake
}

// appendPiped appends d in a group of this DB's concurrent pipelined
// appends, or alone; errNotPiped leaves it to the general path.
func (s *Storage) appendPiped(ctx context.Context, d sessiontree.Draft, opts sessiontree.AppendOptions) (sessiontree.Entry, error) {
	r := &pipeReq{ctx: ctx, s: s, d: d, opts: opts, wake: make(chan bool, 1)}
	g := &s.db.group
	if lead := g.Enqueue(r); lead || r.wait() {
		s.db.lead()
	}
	if errors.Is(r.err, errAlone) {
		return s.appendAlone(ctx, d, opts, false)
	}
	return r.out, r.err
}

// lead runs groups while this goroutine leads: one, whose members
// include the leader's own request, and another each time the request
// it would hand the lead to was left by its requester.
func (db *DB) lead() {
	for db.leadOnce() {
	}
}

// leadOnce runs one group, hands the lead on and answers the group's
// members. It reports whether the lead stays with the caller.
func (db *DB) leadOnce() (again bool) {
	g := &db.group
	g.Gather()
	if g.beforeTake != nil {
		g.beforeTake()
	}
	rs := g.take()
	ran := false
	defer func() { again = db.finish(rs, ran) }()
	if len(rs) > 0 {
		db.runGroup(rs)
	}
	ran = true
	return false
}

// finish hands the lead to the next request queued and wakes the
// group's members. After a panic in the group (ran false) each is
// answered with an error: nobody may wait forever for it. It reports
// whether the lead stays with the caller: the next request was left by
// its requester, who waits for no lead (the next group drops it).
func (db *DB) finish(rs []*pipeReq, ran bool) (again bool) {
	if !ran {
		for _, r := range rs {
			r.out, r.err = sessiontree.Entry{}, fmt.Errorf("%w: append: the group's transaction panicked", sessiontree.ErrStorage)
		}
	}
	if next, ok := db.group.HandOff(); ok {
		if next.state.CompareAndSwap(reqQueued, reqLeads) {
			next.wake <- true
		} else {
			again = true
		}
	}
	for _, r := range rs {
		r.wake <- false
	}
	if again && !ran {
		go db.lead() // this goroutine panics on
	}
	return again && ran
}

// runGroup runs rs, requests for different sessions: a lone one alone
// (appendAlone, while it leads: others queue meanwhile, so it waits for
// no row lock), more in one transaction. Each is answered (out, err), errAlone for one to run again
// alone.
func (db *DB) runGroup(rs []*pipeReq) {
	if len(rs) == 1 {
		r := rs[0]
		r.out, r.err = r.s.appendAlone(r.ctx, r.d, r.opts, true)
		return
	}
	db.group.groups.Add(1)
	db.group.members.Add(int64(len(rs)))
	err := db.groupOnce(rs)
	var ce *sqltx.CommitError
	switch {
	case errors.As(err, &ce):
		err = opErr("append", err)
	case err != nil:
		db.group.aborted.Add(1)
		err = errAlone
	}
	for _, r := range rs {
		if err != nil && r.err == nil {
			r.err, r.out = err, sessiontree.Entry{}
		}
		if errors.Is(r.err, errAlone) {
			db.group.alone.Add(1)
		}
	}
}

// groupOnce runs the group rs in one transaction on a connection of the
// pool. Members it leaves out are answered errAlone; the others are
// answered by the returned error (nil: committed).
func (db *DB) groupOnce(rs []*pipeReq) error {
	ctx, stop := groupContext(rs)
	defer stop()
	if err := db.check(ctx); err != nil {
		return err
	}
	c, err := db.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Raw(func(dc any) error {
		conn := dc.(*stdlib.Conn).Conn()
		// The commit is not cut short by a member's context: the
		// other members' appends are not its to cancel (the commit
		// waits for no lock: the rows are locked by then).
		return groupOn(ctx, context.WithoutCancel(ctx), conn, &db.group, rs)
	})
}

// groupContext is the context the group's locks wait with: done once
// the context of any member live at the start is done (those already
// done are left out of the group), so that the group waits for a row no
// longer than each member would and a member cancelled meanwhile is not
// kept waiting (the group is aborted, and every member runs again
// alone). It carries the first live member's values. stop releases it.
func groupContext(rs []*pipeReq) (ctx context.Context, stop func()) {
	first := liveContext(rs)
	if first.Err() != nil {
		return first, func() {}
	}
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(first))
	stops := make([]func() bool, 0, len(rs))
	for _, r := range rs {
		if r.ctx.Err() == nil {
			stops = append(stops, context.AfterFunc(r.ctx, func() { cancel(context.Cause(r.ctx)) }))
		}
	}
	return ctx, func() {
		for _, s := range stops {
			s()
		}
		cancel(nil)
	}
}

// liveContext is the context of the group's first member whose context
// is not done (the first's when none).
func liveContext(rs []*pipeReq) context.Context {
	for _, r := range rs {
		if r.ctx.Err() == nil {
			return r.ctx
		}
	}
	return rs[0].ctx
}

// groupOn runs the group in one round trip from the rows its Storages
// kept (groupKept), else locks the group's rows (with ctx), then stores
// its members and commits (with commitCtx).
func groupOn(ctx, commitCtx context.Context, conn *pgx.Conn, g *groupCommit, rs []*pipeReq) error {
	if err := groupKept(commitCtx, conn, g, rs); !errors.Is(err, errNotKept) {
		return err
	}
	sts, err := lockGroup(ctx, conn, rs)
	if err != nil {
		return errors.Join(err, rollback(ctx, conn))
	}
	var ws []*pipedWrite
	var owners []*Storage
	for _, r := range rs {
		e, w, err := r.build(sts[r.s.pk])
		if err != nil {
			r.err = errAlone
			continue
		}
		r.out = e
		ws, owners = append(ws, w), append(owners, r.s)
	}
	if len(ws) == 0 {
		return rollback(ctx, conn)
	}
	var b pgx.Batch
	return commitGroup(commitCtx, conn, &b, g, ws, owners)
}

// groupKept runs the group in one round trip when every member builds
// its entry from the row its Storage kept (buildKept): BEGIN, each row's
// lock that checks it is still the version kept (keptLock; NOWAIT, so
// the batch never waits for a row, in whatever order), the writes and
// COMMIT in one batch. errNotKept (nothing written) when a member's
// context is done, a build fails, or a row was not its copy's version.
func groupKept(ctx context.Context, conn *pgx.Conn, g *groupCommit, rs []*pipeReq) error {
	ws, owners := make([]*pipedWrite, len(rs)), make([]*Storage, len(rs))
	for i, r := range rs {
		if r.ctx.Err() != nil {
			return errNotKept
		}
		e, w, err := r.s.buildKept(r.d, r.opts)
		if err != nil {
			return err
		}
		r.out, ws[i], owners[i] = e, w, r.s
	}
	var b pgx.Batch
	b.Queue("BEGIN")
	for _, w := range ws {
		w.keptLock(&b)
	}
	return commitGroup(ctx, conn, &b, g, ws, owners)
}

// commitGroup queues the group's writes ws and COMMIT in b, after what b
// holds, sends it and keeps each owner's row once committed.
func commitGroup(ctx context.Context, conn *pgx.Conn, b *pgx.Batch, g *groupCommit, ws []*pipedWrite, owners []*Storage) error {
	queueGroup(b, &g.cols, ws)
	err := commitBatch(ctx, conn, b)
	if g.refused(ctx, conn, ws[0], err) {
		return errNotKept
	}
	if err != nil {
		return groupCommitErr(ctx, conn, err)
	}
	for i, w := range ws {
		owners[i].rows.keep(w.st)
	}
	return nil
}

// queueGroup queues in b a group's writes: the branch cleared for each
// root, every entry in one statement, each session row's write-back. (One write-back of every row, its values
// given as arrays, took more of the server's time than the separate
// ones: 165 µs a group of 3.75 rows against 33 µs a row.)
func queueGroup(b *pgx.Batch, c *entryColumns, ws []*pipedWrite) {
	c.reset()
	for _, w := range ws {
		if w.parent == nil {
			b.Queue(clearBranch, w.st.pk)
		}
		c.addTo(w.st.pk, w.e, w.row, w.p, w.parent)
	}
	b.Queue(insertGroupEntries, c.groupArgs()...)
	for _, w := range ws {
		b.Queue(w.save.sql, w.save.args...)
	}
}

// build builds r's entry under its session's locked row (nil: none, the
// session is missing) and returns it with what storing it writes. An
// append whose context is done by then is left out.
func (r *pipeReq) build(st *session) (sessiontree.Entry, *pipedWrite, error) {
	if st == nil || r.ctx.Err() != nil {
		return sessiontree.Entry{}, nil, errAlone // alone, it is answered as before
	}
	return st.pipedAppend(r.d, r.opts)
}

// groupCommitErr is the error of a group's batch commitBatch did not
// commit: a commit whose outcome is unknown, a CommitError, as it is;
// any other aborted the transaction, or nothing was sent: it is rolled
// back.
func groupCommitErr(ctx context.Context, conn *pgx.Conn, err error) error {
	if isUnknownCommit(err) {
		return err
	}
	return errors.Join(err, rollback(ctx, conn))
}

// lockGroup begins the transaction on conn and locks the rows of the
// group's sessions in one round trip: a probeFreeQuery each, in key
// order. It returns the sessions' rows (lockedSessions: those the
// Storages kept, the others read in one more round trip); a session
// missing has none, and so has one whose row another transaction holds:
// the leader waits for no row, which would hold up every append queued
// behind its group, whatever their sessions and their contexts; that
// member runs again alone, after the group, and waits there. (One statement locking every row, pk = ANY($1) or a
// join with unnest, was planned again at every call, 264 µs and more:
// its array is a constant the custom plan counts, which the generic
// plan's estimate never beats.)
func lockGroup(ctx context.Context, conn *pgx.Conn, rs []*pipeReq) (map[int64]*session, error) {
	ss := make([]*Storage, len(rs))
	for i, r := range rs {
		ss[i] = r.s
	}
	slices.SortFunc(ss, func(a, b *Storage) int { return cmp.Compare(a.pk, b.pk) })
	var b pgx.Batch
	b.Queue("BEGIN")
	ps := make(map[int64]probe, len(rs))
	for _, s := range ss {
		b.Queue(probeFreeQuery, s.pk).Query(func(rows pgx.Rows) error {
			var p probe
			n := 0
			for rows.Next() {
				if err := p.scan(rows); err != nil {
					return err
				}
				n++
			}
			if n == 1 {
				ps[s.pk] = p
			}
			return rows.Err()
		})
	}
	if err := runBatch(ctx, conn, &b); err != nil {
		return nil, err
	}
	return lockedSessions(ctx, conn, ss, ps)
}
