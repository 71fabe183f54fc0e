package pgengine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/groupq"
	"github.com/sessiontree/sessiontree/internal/sqltx"
)

// Group commit (issue 15's writers): the pipelined appends of one DB to
// different sessions that arrive while a group runs share the next
// transaction, so writers appending to their own sessions pay one BEGIN,
// one COMMIT, one WAL flush and two round trips per group instead of per
// append. An append queues its request; the first to find no group
// running leads: it lets the group fill (groupq.Queue.Gather: up to 200
// µs for as many appends as its last group took; a lone writer, whose
// last group was itself, never waits), takes one request per session
// from the queue (a second append to a session waits for the next group,
// which builds it under the first), locks their rows in key order (two
// groups never lock in opposite orders), builds each entry under its
// locked leaf, and sends every member's statements with the COMMIT in
// one batch. A group of one runs alone (appendAlone) while it leads. The
// rules are the single append's (pipedAppend): the row lock, the IfLeaf
// guard, the claim refusal raised by the write-back.
//
// An append whose build fails client-side (a guard, a missing session, a
// leaf not read) is left out of the group and runs again alone
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
}

// errAlone answers a group member that is to run again alone.
var errAlone = errors.New("append runs alone")

// groupCommit is a DB's queue of pipelined appends.
type groupCommit struct {
	groupq.Queue[*pipeReq]

	// groups and members count the groups of two or more run and their
	// appends, aborted the groups whose transaction failed, alone the
	// members run again alone; for the tests and benchmarks.
	groups, members, aborted, alone atomic.Int64

	// cols are the columns of the running group's entries (groupBatch),
	// kept for the next group: one leader runs one group at a time.
	cols entryColumns

	// beforeTake, a test seam, runs in the leader before it takes the
	// queue.
	beforeTake func()
}

// take removes and returns the first request queued for each session;
// later ones of a session stay queued, in order.
func (g *groupCommit) take() []*pipeReq {
	seen := make(map[int64]bool)
	return g.Take(func(r *pipeReq) bool {
		first := !seen[r.s.pk]
		seen[r.s.pk] = true
		return first
	})
}

// appendPiped appends d in a group of this DB's concurrent pipelined
// appends, or alone; errNotPiped leaves it to the general path.
func (s *Storage) appendPiped(ctx context.Context, d sessiontree.Draft, opts sessiontree.AppendOptions) (sessiontree.Entry, error) {
	r := &pipeReq{ctx: ctx, s: s, d: d, opts: opts, wake: make(chan bool, 1)}
	g := &s.db.group
	if lead := g.Enqueue(r); lead || <-r.wake {
		s.db.lead()
	}
	if errors.Is(r.err, errAlone) {
		return s.appendAlone(ctx, d, opts)
	}
	return r.out, r.err
}

// lead runs one group, hands the lead on and answers the group's
// members; the leader's own request is among them.
func (db *DB) lead() {
	g := &db.group
	g.Gather()
	if g.beforeTake != nil {
		g.beforeTake()
	}
	rs := g.take()
	ran := false
	defer func() { db.finish(rs, ran) }()
	db.runGroup(rs)
	ran = true
}

// finish hands the lead to the next request queued and wakes the
// group's members. After a panic in the group (ran false) each is
// answered with an error: nobody may wait forever for it.
func (db *DB) finish(rs []*pipeReq, ran bool) {
	if !ran {
		for _, r := range rs {
			r.out, r.err = sessiontree.Entry{}, fmt.Errorf("%w: append: the group's transaction panicked", sessiontree.ErrStorage)
		}
	}
	if next, ok := db.group.HandOff(); ok {
		next.wake <- true
	}
	for _, r := range rs {
		r.wake <- false
	}
}

// runGroup runs rs, requests for different sessions: a lone one alone
// (appendAlone, while it leads: others queue meanwhile), more in one
// transaction. Each is answered (out, err), errAlone for one to run again
// alone.
func (db *DB) runGroup(rs []*pipeReq) {
	if len(rs) == 1 {
		r := rs[0]
		r.out, r.err = r.s.appendAlone(r.ctx, r.d, r.opts)
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
	ctx := liveContext(rs)
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
		// The commit is not cut short by the leader's context: the
		// members' appends are not the leader's to cancel.
		return groupOn(ctx, context.WithoutCancel(ctx), conn, &db.group.cols, rs)
	})
}

// liveContext is the context of the group's first member whose context
// is not done (the first's when none): the group's locks wait with it.
func liveContext(rs []*pipeReq) context.Context {
	for _, r := range rs {
		if r.ctx.Err() == nil {
			return r.ctx
		}
	}
	return rs[0].ctx
}

// groupOn locks the group's rows (with ctx), then stores its members and
// commits (with commitCtx).
func groupOn(ctx, commitCtx context.Context, conn *pgx.Conn, cols *entryColumns, rs []*pipeReq) error {
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
	b := groupBatch(cols, ws)
	if err := runBatch(commitCtx, conn, b); err != nil {
		return groupCommitErr(commitCtx, conn, err)
	}
	for i, w := range ws {
		owners[i].rows.keep(w.st)
	}
	return nil
}

// groupBatch is the batch storing a group's writes and committing: the
// branch cleared for each root, every entry in one statement, each
// session row's write-back, COMMIT. (One write-back of every row, its
// values given as arrays, took more of the server's time than the
// separate ones: 165 µs a group of 3.75 rows against 33 µs a row.)
func groupBatch(c *entryColumns, ws []*pipedWrite) *pgx.Batch {
	var b pgx.Batch
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
	b.Queue("COMMIT")
	return &b
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

// groupCommitErr is the error of a group's batch ending in COMMIT: one
// the server reported aborted the transaction, which is rolled back, and
// so did a failure before anything was sent; any other leaves the commit
// unknown, a CommitError.
func groupCommitErr(ctx context.Context, conn *pgx.Conn, err error) error {
	var pg *pgconn.PgError
	if errors.As(err, &pg) || pgconn.SafeToRetry(err) {
		return errors.Join(err, rollback(ctx, conn))
	}
	return &sqltx.CommitError{Err: err}
}

// lockGroup begins the transaction on conn and locks the rows of the
// group's sessions in one round trip: a probeQuery each, in key order,
// so that two groups never wait for each other's rows in opposite
// orders. It returns the sessions' rows (lockedSessions: those the
// Storages kept, the others read in one more round trip); a session
// missing has none. (One statement locking every row, pk = ANY($1) or a
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
		b.Queue(probeQuery, s.pk).Query(func(rows pgx.Rows) error {
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
