package sessiontree_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/memory"
	"github.com/sessiontree/sessiontree/storetest"
)

// memoryHarness drives the memory backend through the conformance suite.
func memoryHarness() storetest.Harness {
	return storetest.Harness{
		New: func(t testing.TB) sessiontree.Storage {
			st, err := memory.New(sessiontree.SessionMeta{Cwd: "/tmp/project"}, memory.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			return st
		},
		Reopen: func(t testing.TB, s sessiontree.Storage) sessiontree.Storage { return s },
		LoadUnchecked: func(t testing.TB, meta sessiontree.SessionMeta, entries []sessiontree.Entry) (sessiontree.Storage, error) {
			return memory.NewUnchecked(meta, entries)
		},
	}
}

// backend is one storage backend as the root tests drive it. Each backend
// registers itself from its own harness_*_test.go file.
type backend struct {
	name    string
	harness func() storetest.Harness
	// openPi opens a pi fixture file in this backend.
	openPi func(t testing.TB, fx storetest.PiFixture) sessiontree.Storage
}

var backends = []backend{{name: "memory", harness: memoryHarness, openPi: loadMemory}}

func register(b backend) bool {
	backends = append(backends, b)
	return true
}

// TestConformance runs the one conformance suite over every backend.
func TestConformance(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { storetest.Run(t, b.harness()) })
	}
}

// TestPiFixtures checks every backend against pi's own answers: the files
// pi 0.73.1 wrote (testdata/pi) and those pi 1.6.0 wrote (testdata/pi1).
func TestPiFixtures(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		for _, dir := range []string{"testdata/pi", "testdata/pi1"} {
			t.Run(b.name+"/"+filepath.Base(dir), func(t *testing.T) {
				storetest.RunPiFixtures(t, dir, b.openPi)
			})
		}
	}
}

// TestPiEdgeFixtures checks every backend against pi's answers on the
// tricky files of testdata/piedge that read cleanly (jsonl's
// TestPiEdgeFiles covers the damaged ones, which no backend loads).
func TestPiEdgeFixtures(t *testing.T) {
	t.Parallel()
	runCleanPiFixtures(t, storetest.PiFixtures(t, "testdata/piedge"), 30)
}

// TestPiRandFixtures checks every backend against pi 1.6.0's answers on
// the random session files of testdata/pirand (branches, compactions,
// edits, labels, names and more, mixed as gen.mjs there draws them) that
// read cleanly (jsonl's TestPiRandFiles covers the few without a final
// newline).
func TestPiRandFixtures(t *testing.T) {
	t.Parallel()
	runCleanPiFixtures(t, storetest.PiRandFixtures(t, "testdata/pirand"), 15)
}

// runCleanPiFixtures checks every backend against pi's answers on the
// fixtures that read in Strict mode, which must be at least least of them.
func runCleanPiFixtures(t *testing.T, fixtures []storetest.PiFixture, least int) {
	var clean []storetest.PiFixture
	for _, fx := range fixtures {
		if readsStrictly(fx.Path) {
			clean = append(clean, fx)
		}
	}
	if len(clean) < least {
		t.Fatalf("only %d of %d files read cleanly", len(clean), len(fixtures))
	}
	for _, b := range backends {
		for _, fx := range clean {
			t.Run(b.name+"/"+fx.Name, func(t *testing.T) {
				storetest.CheckPi(t, b.openPi(t, fx), fx.Want)
			})
		}
	}
}

// readsStrictly reports whether the file at path opens in Strict mode:
// every line and the tree are sound.
func readsStrictly(path string) bool {
	st, err := jsonl.Open(context.Background(), path, jsonl.Options{ReadOnly: true, Mode: jsonl.Strict})
	if err != nil {
		return false
	}
	return st.Close() == nil
}

// loadMemory reads a pi file through the JSONL reader (which migrates
// versions 1 and 2) into the memory backend.
func loadMemory(t testing.TB, fx storetest.PiFixture) sessiontree.Storage {
	t.Helper()
	meta, entries := storetest.ReadSessionFile(t, fx.Path)
	st, err := memory.New(meta, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AppendBatch(context.Background(), entries); err != nil {
		t.Fatal(err)
	}
	return st
}
