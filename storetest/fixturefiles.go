package storetest

import (
	"path/filepath"
	"strings"
	"testing"
)

// FixtureFiles lists the session files of every pi fixture folder under
// testdata (pi, pi1, piedge, pirand) for the tests that run them all: each
// of the hand-made folders whole, and of testdata/pirand's random files
// one in ten under the race detector (all 200 took six minutes there).
func FixtureFiles(t testing.TB, testdata string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testdata, "pi*", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !raceEnabled {
		return files
	}
	var out []string
	random := 0
	for _, f := range files {
		if filepath.Base(filepath.Dir(f)) == "pirand" && strings.HasPrefix(filepath.Base(f), "r") {
			random++
			if random%10 != 1 {
				continue
			}
		}
		out = append(out, f)
	}
	return out
}
