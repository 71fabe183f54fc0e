package groupq

import (
	"slices"
	"testing"
	"time"
)

// TestLeadAndHandOff: the first request leads, later ones queue; Take
// with a filter leaves the others queued in order, and HandOff gives
// the lead to the first of them, then ends leading when none is left.
func TestLeadAndHandOff(t *testing.T) {
	var q Queue[int]
	for i, want := range []bool{true, false, false, false} {
		if lead := q.Enqueue(i); lead != want {
			t.Fatalf("Enqueue(%d) lead = %v, want %v", i, lead, want)
		}
	}
	if got := q.Take(func(r int) bool { return r%2 == 0 }); !slices.Equal(got, []int{0, 2}) {
		t.Errorf("Take(even) = %v, want [0 2]", got)
	}
	if next, ok := q.HandOff(); !ok || next != 1 {
		t.Errorf("HandOff = %d, %v; want 1, true", next, ok)
	}
	if got := q.Take(nil); !slices.Equal(got, []int{1, 3}) {
		t.Errorf("Take(nil) = %v, want [1 3]", got)
	}
	if _, ok := q.HandOff(); ok {
		t.Error("HandOff of an empty queue: ok, want none to lead")
	}
	if !q.Enqueue(5) {
		t.Error("the first request after the lead ended does not lead")
	}
}

// TestGatherWaitsForTheLastGroupSize: after a group of two, a leader
// alone waits until a second request is queued (the bound is an hour: a
// Gather not woken by it hangs the test); after a group of one it does
// not wait at all.
func TestGatherWaitsForTheLastGroupSize(t *testing.T) {
	var q Queue[int]
	q.SetWait(time.Hour)
	q.Enqueue(0)
	q.Enqueue(1)
	q.Take(nil) // a group of two
	q.Enqueue(2)
	done := make(chan struct{})
	go func() { q.Gather(); close(done) }()
	for !q.Gathering() {
		time.Sleep(time.Millisecond)
	}
	q.Enqueue(3)
	<-done
	if got := q.Take(nil); len(got) != 2 {
		t.Fatalf("took %v, want two", got)
	}
	q.SetLast(1)
	q.Enqueue(4)
	q.Gather() // returns at once: the queue holds as many as the last group
}
