package engine

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/groupq"
)

// Group commit: the appends of a DB's sessions that arrive while a write
// transaction runs share the next one, so many agents appending to their
// own sessions pay one BEGIN, one COMMIT and one write of the log for a
// group instead of one each (issue 17).
//
// An append queues its request, and the first to find no group running
// leads: it lets the group fill (groupq.Queue.Gather), takes the write
// connection, begins, and only then takes every request queued, its own
// among them, so the others also gather while it waits for the lock (this
// process's connection, or SQLite's, held by another process). One append's failure
// (a guard that does not hold, an id already used, an invalid entry)
// fails that append alone; the others commit. Almost every such failure
// comes before the append writes anything (or is its first write, which
// SQLite undoes alone), so the appends run one after the other with
// nothing between them; one that fails after it wrote makes the leader
// roll the transaction back and run the group again with each append in a
// savepoint, which undoes the failed one alone (see runGroup). A
// savepoint's two statements were a tenth of an append's. Every request
// returns only once its group has committed, with the commit's error if
// the commit fails. When the group is done the leader hands the lead to
// the first request queued meanwhile, if any, and returns.

// appendReq is one [Storage.AppendAll] waiting for, or in, a group.
type appendReq struct {
	ctx    context.Context
	s      *Storage
	drafts []sessiontree.Draft
	opts   sessiontree.AppendOptions
	now    string // the timestamp of drafts without one
	pre    *prebuilt

	out []sessiontree.Entry
	err error
	// wake receives once: true when the request is to lead the next
	// group, false when its group is done.
	wake chan bool
}

// groupCommit is a DB's queue of appends (internal/groupq: who leads,
// and how a leader lets its group fill).
type groupCommit struct {
	groupq.Queue[*appendReq]

	// groups and requests count the groups run and the requests they
	// took, and held the nanoseconds their leaders held the write
	// connection, for BenchmarkFleet's appends per commit and time held
	// per entry: at 64 writers the holder is the bottleneck. redone counts
	// the groups run again in savepoints (see runGroup), for the tests.
	groups, requests, held, redone atomic.Int64

	// beforeCommit, a test seam, runs in the group's transaction after
	// its appends, before its commit.
	beforeCommit func(w q) error
}

// take removes and returns the requests queued.
func (g *groupCommit) take() []*appendReq { return g.Take(nil) }

// appendGrouped runs r in a group and returns when its group is done,
// with r.out or r.err set.
func (db *DB) appendGrouped(r *appendReq) {
	g := &db.group
	r.wake = make(chan bool, 1)
	if g.Enqueue(r) || <-r.wake {
		db.lead(r)
	}
}

// lead runs one group, whose leader is self, and hands the lead on.
func (db *DB) lead(self *appendReq) {
	var group []*appendReq
	done := false
	defer func() {
		if !done {
			// A panic in the group: nobody may wait forever for it.
			err := fmt.Errorf("%w: append: the group's transaction panicked", sessiontree.ErrStorage)
			group = append(group, db.group.take()...)
			db.finish(self, group, err)
		}
	}()
	// The group outlives a cancelled leader: its ctx stops only its own
	// append (checked in runGroup), not the others'.
	db.group.Gather()
	start := time.Now()
	err := db.runLed(context.WithoutCancel(self.ctx), &group, false)
	if errors.Is(err, errRedo) {
		db.group.redone.Add(1)
		err = db.runLed(context.WithoutCancel(self.ctx), &group, true)
	}
	if len(group) == 0 {
		// The transaction did not begin (a closed or read-only database,
		// a lock held past the busy timeout): every request queued would
		// meet the same.
		group = db.group.take()
	}
	done = true
	db.group.held.Add(int64(time.Since(start)))
	db.group.groups.Add(1)
	db.group.requests.Add(int64(len(group)))
	db.finish(self, group, err)
}

// runLed runs the group in a write transaction, after it takes the
// requests queued into it; safe runs each request in a savepoint.
func (db *DB) runLed(ctx context.Context, group *[]*appendReq, safe bool) error {
	return db.update(ctx, true, func(w q) error {
		*group = append(*group, db.group.take()...)
		if err := runGroup(w, *group, safe); err != nil || db.group.beforeCommit == nil {
			return err
		}
		return db.group.beforeCommit(w)
	})
}

// finish completes a group: a request that succeeded gets the commit's
// error, if any; the lead goes to the next request queued, and every
// request of the group but self is woken.
func (db *DB) finish(self *appendReq, group []*appendReq, commitErr error) {
	for _, r := range group {
		if commitErr != nil && r.err == nil {
			r.out, r.err = nil, commitErr
		}
	}
	if next, ok := db.group.HandOff(); ok {
		next.wake <- true
	}
	for _, r := range group {
		if r != self {
			r.wake <- false
		}
	}
}

// errRedo is runGroup's when an append failed after it had written: the
// transaction is rolled back and the group runs again in savepoints.
var errRedo = errors.New("an append of the group failed after it wrote")

// runGroup runs the requests of a group in the write transaction w and
// records each one's entries or error. A group of one needs no more: its
// error is returned and rolls the transaction back. Otherwise, unless
// safe, the requests run one after the other, and one that fails having
// written (the count of the connection's statements run tells) returns
// errRedo; safe runs each in a savepoint, which undoes it alone. An error
// that may have ended the transaction (a full disk, an I/O error, a
// savepoint that cannot be rolled back) is returned and fails the whole
// group.
func runGroup(w q, group []*appendReq, safe bool) error {
	w.bounded = true
	for _, r := range group {
		r.out, r.err = nil, nil
	}
	if len(group) == 1 {
		r := group[0]
		if r.err = r.s.check(r.ctx); r.err == nil {
			r.out, r.err = r.s.appendIn(w, r.drafts, r.opts, r.now, r.pre)
		}
		return r.err
	}
	for _, r := range group {
		if r.err = r.s.check(r.ctx); r.err != nil {
			continue
		}
		if err := runRequest(w, r, safe); err != nil {
			return err
		}
	}
	return nil
}

// runRequest runs request r of a group of several (see runGroup) and
// returns an error that fails the group, or asks for it again in
// savepoints.
func runRequest(w q, r *appendReq, safe bool) error {
	execs := w.c.execs
	var err error
	if safe {
		err = w.savepoint(func() error {
			r.out, r.err = r.s.appendIn(w, r.drafts, r.opts, r.now, r.pre)
			return r.err
		})
	} else {
		r.out, r.err = r.s.appendIn(w, r.drafts, r.opts, r.now, r.pre)
		err = r.err
	}
	settle(w.c, r.err == nil)
	if r.err != nil {
		r.out = nil
	}
	switch {
	case err == nil:
		return nil
	case err != r.err || endsTx(err):
		return err
	case !safe && w.c.execs != execs:
		return errRedo
	}
	return nil
}

// endsTx reports an error after which SQLite may have rolled the whole
// transaction back: statements after it would run outside the group's
// transaction, so the group must fail.
func endsTx(err error) bool {
	c := sqliteCode(err)
	return c == sqlite3.SQLITE_FULL || c == sqlite3.SQLITE_IOERR || c == sqlite3.SQLITE_NOMEM
}

// settle keeps the head an append of a group left pending (see
// q.remember) when it succeeded, at once: a later request of the group on
// the same session reads it, and a rollback of the group's transaction
// forgets it with the others. A failed append's is dropped.
func settle(c *conn, ok bool) {
	p := c.pending
	c.pending = nil
	if !ok || p == nil {
		return
	}
	if c.heads == nil {
		c.heads = map[int64]head{}
	}
	c.heads[p.session] = p.h
}
