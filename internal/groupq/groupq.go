// Package groupq is the queue of a group commit: requests (appends) wait
// in it, the first to find no group running leads one, takes the requests
// queued into its group and, when the group is done, hands the lead to
// the first request queued meanwhile. It owns only the queue and who
// leads; running a group is the engine's.
package groupq

import (
	"cmp"
	"sync"
	"time"
)

// DefaultWait bounds how long a leader waits for its group to fill (see
// [Queue.Gather]). Measured at 64 writers on the SQLite engine
// (BenchmarkFleet, load ~10 on 2 cores): 200 µs fills groups as well as
// 0.5 or 1 ms did.
const DefaultWait = 200 * time.Microsecond

// Queue is a group commit's queue of requests of type R. The zero value
// is empty, with no group running. It is safe for concurrent use.
type Queue[R any] struct {
	mu      sync.Mutex
	queue   []R
	leading bool // a group is running, or its leader is about to take the queue
	last    int  // how many requests the last group took
	// want and filled: a leader waits for want requests queued, and
	// filled is closed when they are (see Gather).
	want   int
	filled chan struct{}
	wait   time.Duration
}

// Enqueue adds r to the queue, wakes a leader waiting for its group to
// fill once it has, and reports whether r is to lead: no group runs.
func (q *Queue[R]) Enqueue(r R) (lead bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queue = append(q.queue, r)
	if q.filled != nil && len(q.queue) >= q.want {
		close(q.filled)
		q.filled = nil
	}
	lead = !q.leading
	q.leading = true
	return lead
}

// Take removes and returns the requests queued that keep accepts, called
// on each in order (nil takes all); the others stay queued, in order.
func (q *Queue[R]) Take(keep func(R) bool) []R {
	q.mu.Lock()
	defer q.mu.Unlock()
	var group, rest []R
	for _, r := range q.queue {
		if keep == nil || keep(r) {
			group = append(group, r)
		} else {
			rest = append(rest, r)
		}
	}
	q.queue = rest
	q.last = len(group)
	return group
}

// Gather lets the group fill before its leader takes it. The requesters
// of the last group were woken as it ended, just before this one began,
// and those that come again have not queued yet while they wait for a
// processor: taking the queue at once made a group of the one request
// queued meanwhile, then one of all the others, and so on. So the leader
// waits until as many requests are queued as the last group took, for
// DefaultWait at most (SetWait). A single writer, whose last group was
// itself, never waits; nor does a leader that finds the group full.
func (q *Queue[R]) Gather() {
	q.mu.Lock()
	if len(q.queue) >= q.last {
		q.mu.Unlock()
		return
	}
	filled := make(chan struct{})
	q.want, q.filled = q.last, filled
	wait := cmp.Or(q.wait, DefaultWait)
	q.mu.Unlock()
	t := time.NewTimer(wait)
	select {
	case <-filled:
	case <-t.C:
	}
	t.Stop()
	q.mu.Lock()
	q.want, q.filled = 0, nil
	q.mu.Unlock()
}

// HandOff ends a group: it returns the request to lead the next one, and
// false when none is queued (no group runs until the next request).
func (q *Queue[R]) HandOff() (next R, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) == 0 {
		q.leading = false
		return next, false
	}
	return q.queue[0], true
}

// Len is the number of requests queued.
func (q *Queue[R]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue)
}

// Gathering reports whether a leader waits for its group to fill.
func (q *Queue[R]) Gathering() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.filled != nil
}

// SetWait sets Gather's bound (0: DefaultWait); a test seam.
func (q *Queue[R]) SetWait(wait time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.wait = wait
}

// SetLast sets the size of the last group, which the next leader waits
// for; a test seam.
func (q *Queue[R]) SetLast(n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.last = n
}
