package main

import (
	"context"
	"io"
	"testing"
	"time"
)

// TestExternalMemoryUnknown: a case measured in other processes (the
// writers workload's children) without a memory pass of its own leaves
// its peak heap and RSS unknown (-1, "—" in the table) rather than
// reporting the bench process's own growth over the operation as the
// operation's peak; a case in this process gets its peaks measured.
func TestExternalMemoryUnknown(t *testing.T) {
	opts := QuickOptions()
	opts.Runs, opts.MinRunTime = 2, time.Millisecond
	r := &runner{opts: opts, stderr: io.Discard, start: time.Now(), ds: &dataset{Shape: ShapeWriters, Size: 1}}
	var sink []byte
	op := func(context.Context) error { sink = make([]byte, 4<<20); sink[0] = 1; return nil }
	mk := func(backend string, external bool) benchCase {
		return benchCase{backend: backend, setup: func(context.Context) (*prepared, error) {
			return &prepared{op: op, rows: 1, external: external}, nil
		}}
	}
	w := &workload{name: "writers"}
	if err := r.runWorkload(context.Background(), w, []benchCase{mk(backendEngine, true), mk(backendFloor, false)}); err != nil {
		t.Fatal(err)
	}
	for _, res := range r.results {
		external := res.Backend == backendEngine
		if known := res.PeakHeap >= 0 || res.PeakRSS >= 0; known == external {
			t.Errorf("%s (external %v): peak heap %d, RSS %d; want them unknown (-1) only when external", res.Backend, external, res.PeakHeap, res.PeakRSS)
		}
	}
}
