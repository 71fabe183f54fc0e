package sessiontree_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestShapeAddEntry: counting a log one entry at a time with
// Shape.AddEntry gives ShapeOf's counts after every entry, over random
// trees with forks, new roots, compactions, leaf entries and entries
// whose parent is a leaf entry.
func TestShapeAddEntry(t *testing.T) {
	t.Parallel()
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var log []sessiontree.Entry
		isLeaf := map[string]bool{}
		hasChild := map[string]bool{}
		var inc sessiontree.Shape
		for i := range 200 {
			e := sessiontree.Entry{ID: fmt.Sprintf("e%d", i), Type: sessiontree.TypeMessage}
			switch r := rng.IntN(20); {
			case r == 0:
				e.Type = sessiontree.TypeLeaf
			case r == 1:
				e.Type = sessiontree.TypeCompaction
			}
			if len(log) > 0 && rng.IntN(15) != 0 {
				p := len(log) - 1
				if rng.IntN(4) == 0 {
					p = rng.IntN(len(log))
				}
				e.ParentID = log[p].ID
			}
			rooted := e.ParentID == "" || isLeaf[e.ParentID]
			inc.AddEntry(e.Type, rooted, hasChild[e.ParentID])
			if e.Type == sessiontree.TypeLeaf {
				isLeaf[e.ID] = true
			} else if !rooted {
				hasChild[e.ParentID] = true
			}
			log = append(log, e)
			if want := sessiontree.ShapeOf(log, nil); inc != want {
				t.Fatalf("seed %d, after %d entries: AddEntry gives %+v; ShapeOf %+v", seed, i+1, inc, want)
			}
		}
	}
}
