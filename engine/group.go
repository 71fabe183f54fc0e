package engine

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sessiontree/sessiontree"
)

// Group commit: the appends of a DB's sessions that arrive while a write
// transaction runs share the next one, so many agents appending to their
// own sessions pay one BEGIN, one COMMIT and one write of the log for a
// group instead of one each (issue 17).
//
// An append queues its request, and the first to find no group running
// leads: it takes the write connection, begins, and only then takes every
// request queued, its own among them, so the first writer never waits for
// a group to fill and the others gather while it waits for the lock (this
// process's connection, or SQLite's, held by another process). Each
// request of a group runs inside a savepoint, so that one append's
// failure (a guard that does not hold, an id already used, an invalid
// entry) rolls back that append alone; the others commit. Every request
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

	out []sessiontree.Entry
	err error
	// wake receives once: true when the request is to lead the next
	// group, false when its group is done.
	wake chan bool
}

// groupCommit is a DB's queue of appends. mu guards queue and leading.
type groupCommit struct {
	mu      sync.Mutex
	queue   []*appendReq
	leading bool // a group is running, or its leader is about to take the queue
	last    int  // how many requests the last group took

	// beforeCommit, a test seam, runs in the group's transaction after
	// its appends, before its commit.
	beforeCommit func(w q) error
}

// take removes and returns the requests queued.
func (g *groupCommit) take() []*appendReq {
	g.mu.Lock()
	defer g.mu.Unlock()
	rs := g.queue
	g.queue = nil
	g.last = len(rs)
	return rs
}

// queued is how many requests are queued.
func (g *groupCommit) queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// gatherYields bounds how many times a leader yields the processor for
// the group to fill (see gather).
const gatherYields = 8

// gather lets the group fill before its leader takes it. The appenders
// of the last group were woken just before this one began, and those that
// append again have not queued yet when they wait for a processor: taking
// the queue at once would make a group of one, then one of all the
// others, and so on, a commit per append or two. So the leader yields the
// processor while fewer requests are queued than the last group had,
// until the queue stops growing: a single writer, whose last group was
// itself, never waits.
func (g *groupCommit) gather() {
	for range gatherYields {
		n := g.queued()
		if n >= g.last {
			return
		}
		runtime.Gosched()
		if g.queued() == n {
			return
		}
	}
}

// handOff ends a group: it returns the request to lead the next one, nil
// when none is queued (and no group runs until the next append).
func (g *groupCommit) handOff() *appendReq {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) == 0 {
		g.leading = false
		return nil
	}
	return g.queue[0]
}

// appendGrouped runs r in a group and returns when its group is done,
// with r.out or r.err set.
func (db *DB) appendGrouped(r *appendReq) {
	g := &db.group
	r.wake = make(chan bool, 1)
	g.mu.Lock()
	g.queue = append(g.queue, r)
	lead := !g.leading
	g.leading = true
	g.mu.Unlock()
	if lead || <-r.wake {
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
	err := db.update(context.WithoutCancel(self.ctx), true, func(w q) error {
		db.group.gather()
		group = append(group, db.group.take()...)
		if err := runGroup(w, group); err != nil || db.group.beforeCommit == nil {
			return err
		}
		return db.group.beforeCommit(w)
	})
	if len(group) == 0 {
		// The transaction did not begin (a closed or read-only database,
		// a lock held past the busy timeout): every request queued would
		// meet the same.
		group = db.group.take()
	}
	done = true
	db.finish(self, group, err)
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
	if next := db.group.handOff(); next != nil {
		next.wake <- true
	}
	for _, r := range group {
		if r != self {
			r.wake <- false
		}
	}
}

// runGroup runs the requests of a group in the write transaction w, each
// in a savepoint, and records each one's entries or error. A group of one
// needs no savepoint: its error is returned and rolls the transaction
// back. An error that may have ended the transaction (a full disk, an I/O
// error, a savepoint that cannot be rolled back) is returned and fails
// the whole group.
func runGroup(w q, group []*appendReq) error {
	w.bounded = true
	for _, r := range group {
		r.out, r.err = nil, nil
	}
	if len(group) == 1 {
		r := group[0]
		if r.err = r.s.check(r.ctx); r.err == nil {
			r.out, r.err = r.s.appendIn(w, r.drafts, r.opts, r.now)
		}
		return r.err
	}
	for _, r := range group {
		if r.err = r.s.check(r.ctx); r.err != nil {
			continue
		}
		err := w.savepoint(func() error {
			r.out, r.err = r.s.appendIn(w, r.drafts, r.opts, r.now)
			return r.err
		})
		settle(w.c, r.err == nil)
		if r.err != nil {
			r.out = nil
		}
		if err != nil && (err != r.err || endsTx(err)) {
			return err
		}
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
