package storetest

import (
	"path/filepath"
	"testing"
)

// FixtureFiles lists the session files of every pi fixture folder under
// testdata (pi, pi1, piedge, pirand) for the tests that run them all,
// under the race detector one in four of them (the upgrade and redo tests
// over all took three to six minutes there; their plain runs take all).
func FixtureFiles(t testing.TB, testdata string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testdata, "pi*", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !RaceEnabled {
		return files
	}
	return oneIn(files, 4)
}

// oneIn returns every nth of all, from the first on.
func oneIn[T any](all []T, n int) []T {
	var some []T
	for i := 0; i < len(all); i += n {
		some = append(some, all[i])
	}
	return some
}
