package pgengine_test

import (
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree/storetest"
)

// TestPiEdgeLabelsAndModels checks the engine against pi's answers on the
// files of testdata/piedge whose rules it writes apart from the other
// backends' appends: labels of missing entries, labels that are not
// strings, models without provider or model.
func TestPiEdgeLabelsAndModels(t *testing.T) {
	t.Parallel()
	for _, fx := range storetest.PiFixtures(t, filepath.Join("..", "testdata", "piedge")) {
		switch fx.Name {
		case "labels-odd", "labels-nonstring", "models-odd":
			t.Run(fx.Name, func(t *testing.T) { storetest.CheckPi(t, openPi(t, fx), fx.Want) })
		}
	}
}
