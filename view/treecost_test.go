package view_test

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/view"
)

// combData is a session whose every fork puts its older branch one lane
// further right: a0 has children a1 (older) and b1, a1 has a2 and b2, and
// so on to depth d, so the entries a_i and b_i are drawn in lane i and
// i-1 and the drawing is d lanes wide.
func combData(t testing.TB, d int) view.SessionData {
	t.Helper()
	var log []sessiontree.Entry
	add := func(id, parent string) {
		raw, err := json.Marshal(map[string]any{"type": "message", "id": id, "parentId": nilIfEmpty(parent),
			"timestamp": "2026-03-01T10:00:00.000Z", "message": map[string]any{"role": "user", "content": "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		e, err := sessiontree.DecodeEntry(raw)
		if err != nil {
			t.Fatal(err)
		}
		e.Seq = int64(len(log) + 1)
		log = append(log, e)
	}
	add("a0000000", "")
	for i := 1; i <= d; i++ {
		parent := fmt.Sprintf("a%07d", i-1)
		add(fmt.Sprintf("a%07d", i), parent)
		add(fmt.Sprintf("b%07d", i), parent)
	}
	return view.SessionData{Log: log, Leaf: log[len(log)-1].ID}
}

// allocPerEntry returns the bytes the tree of d allocates per entry drawn.
func allocPerEntry(t *testing.T, d view.SessionData, opts view.TreeOptions) float64 {
	t.Helper()
	const runs = 3
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		if err := view.WriteTreeData(io.Discard, d, opts); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(runs*len(d.Log))
}

// TestTreeLineCostFollowsOutput holds a tree line's cost to what it
// writes, not to its lane: drawn 8 times as many lanes wide, a tree
// allocates about as much per entry, with or without a width. Building
// each line's lane pipes as a string made a fork of 20,000 branches
// allocate 900 MB; cut to a terminal's width, the bytes built past it
// were thrown away.
func TestTreeLineCostFollowsOutput(t *testing.T) {
	narrow, wide := combData(t, 200), combData(t, 1600)
	for _, width := range []int{0, 80} {
		opts := view.TreeOptions{All: true, Width: width}
		a, b := allocPerEntry(t, narrow, opts), allocPerEntry(t, wide, opts)
		if b > 1.5*a {
			t.Errorf("Width %d: %.0f bytes allocated per entry 1600 lanes wide, %.0f 200 lanes wide; want about the same", width, b, a)
		}
	}
}

// countingWriter counts the bytes written to it.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// TestTreeOutputFollowsEntries holds the tree's output without a width
// (into a pipe or a file) to its entries: past maxLanes lanes a line
// draws maxLanes pipes and the count of the others, so a fork of 200,000
// branches is not 200,000 pipes on every line after it (about 40 GB).
func TestTreeOutputFollowsEntries(t *testing.T) {
	perEntry := func(d view.SessionData) float64 {
		var w countingWriter
		if err := view.WriteTreeData(&w, d, view.TreeOptions{All: true}); err != nil {
			t.Fatal(err)
		}
		return float64(w.n) / float64(len(d.Log))
	}
	a, b := perEntry(combData(t, 200)), perEntry(combData(t, 1600))
	if b > 1.5*a {
		t.Errorf("%.0f bytes of tree per entry 1600 lanes wide, %.0f 200 lanes wide; want about the same", b, a)
	}
}
