package sessiontree_test

import (
	"testing"

	"github.com/sessiontree/sessiontree/storetest"
)

// TestPiRandFixtures checks every backend against pi 1.6.0's answers on
// random session files (testdata/pirand: branches, compactions, edits,
// labels, names and more, mixed as gen.mjs there draws them), those that
// read cleanly (jsonl's TestPiRandFiles covers the others: a few lack
// the final newline).
func TestPiRandFixtures(t *testing.T) {
	var clean []storetest.PiFixture
	for _, fx := range storetest.PiRandFixtures(t, "testdata/pirand") {
		if readsStrictly(fx.Path) {
			clean = append(clean, fx)
		}
	}
	if len(clean) < 15 {
		t.Fatalf("only %d clean files in testdata/pirand", len(clean))
	}
	for _, b := range backends {
		for _, fx := range clean {
			t.Run(b.name+"/"+fx.Name, func(t *testing.T) {
				storetest.CheckPi(t, b.openPi(t, fx), fx.Want)
			})
		}
	}
}
