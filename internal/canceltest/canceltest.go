// Package canceltest cancels an operation at each point where it asks
// its context whether it is done, and checks what the cancelled
// operation leaves behind: its error is the context's, and the
// goroutines and file descriptors it started are gone once it returns.
// What else must hold after a cancellation (no partial state, the next
// run's answer) is the caller's to check, in Sweep's after function.
//
// A [Ctx] counts its own checks (Err and Done), not those made on
// contexts derived from it (context.WithCancel, WithTimeout, a
// database/sql transaction's); its cancellation reaches them all the
// same. An operation that checks only a derived context is cancelled at
// the points where it checks this one.
//
// # Concurrency
//
// A [Ctx] is safe for concurrent use; [Resources] is a value.
package canceltest

import (
	"context"
	"errors"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Ctx is a context that cancels itself at its k-th check (a call of Err
// or Done), and counts its checks.
type Ctx struct {
	context.Context
	cancel context.CancelFunc
	at     int64
	n      atomic.Int64
}

// At returns a context that is cancelled at its k-th check; k = 0 never
// cancels it (to count an operation's checks). Call Stop when done with
// it.
func At(k int64) *Ctx {
	ctx, cancel := context.WithCancel(context.Background())
	return &Ctx{Context: ctx, cancel: cancel, at: k}
}

func (c *Ctx) check() {
	if c.n.Add(1) == c.at {
		c.cancel()
	}
}

// Done is the context's Done, counted as a check.
func (c *Ctx) Done() <-chan struct{} {
	c.check()
	return c.Context.Done()
}

// Err is the context's Err, counted as a check.
func (c *Ctx) Err() error {
	c.check()
	return c.Context.Err()
}

// Checks returns how many checks the context has had.
func (c *Ctx) Checks() int64 { return c.n.Load() }

// Stop cancels the context, releasing what it holds.
func (c *Ctx) Stop() { c.cancel() }

// Points returns the checks to cancel at, of an operation that makes n:
// every one of 1..n when n <= max, else max of them spread evenly, the
// first and the last included.
func Points(n int64, max int) []int64 {
	if n <= 0 || max <= 0 {
		return nil
	}
	if n <= int64(max) {
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(i) + 1
		}
		return out
	}
	if max == 1 {
		return []int64{n}
	}
	out := make([]int64, max)
	for i := range out {
		out[i] = 1 + int64(i)*(n-1)/int64(max-1)
	}
	return out
}

// Sweep runs op once with a context that is never cancelled, counting
// its checks (n), then once cancelled at each of Points(n, max). A run's
// error must be nil (the cancellation came after the run's last check:
// runs may check a different number of times, with goroutines) or match
// context.Canceled. after is called after each run, with the point (0
// for the uncancelled run) and the run's error; it checks what the run
// left. Sweep returns n.
func Sweep(t testing.TB, max int, op func(ctx context.Context) error, after func(k int64, err error)) int64 {
	t.Helper()
	c := At(0)
	err := op(c)
	c.Stop()
	if err != nil {
		t.Fatalf("uncancelled run: %v", err)
	}
	n := c.Checks()
	after(0, nil)
	for _, k := range Points(n, max) {
		c := At(k)
		err := op(c)
		c.Stop()
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("run cancelled at check %d of %d = %v; want context.Canceled", k, n, err)
		}
		after(k, err)
		if t.Failed() {
			t.Fatalf("stopped at the first failed point, %d of %d", k, n)
		}
	}
	return n
}

// Resources are counts of what a process holds that an operation could
// leak: goroutines and open file descriptors (-1 where not known).
type Resources struct {
	Goroutines int
	FDs        int
}

// Take counts the resources held now.
func Take() Resources {
	return Resources{Goroutines: runtime.NumGoroutine(), FDs: openFDs()}
}

// openFDs counts the process's open file descriptors, -1 where
// /proc/self/fd is missing.
func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents) - 1 // the descriptor ReadDir read it through
}

// settleWait bounds how long a goroutine that was told to end may take
// to end.
const settleWait = 5 * time.Second

// Settled waits until the process holds no more than r, and fails t
// (naming what) with the goroutines running when they do not end in
// time. The counts are the process's: a test that uses it must not run
// in parallel with others (t.Parallel).
func (r Resources) Settled(t testing.TB, what string) {
	t.Helper()
	deadline := time.Now().Add(settleWait)
	for {
		now := Take()
		if now.Goroutines <= r.Goroutines && now.FDs <= r.FDs {
			return
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
			t.Fatalf("%s: %d goroutines and %d open files, %s later; want at most %d and %d\n%s",
				what, now.Goroutines, now.FDs, settleWait, r.Goroutines, r.FDs, b.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
}
