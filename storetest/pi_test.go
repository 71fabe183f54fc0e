package storetest_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree/storetest"
)

// TestFixtureKinds: one fixture of each kind, the first, in order; a
// kind is the name without its trailing number.
func TestFixtureKinds(t *testing.T) {
	var in []storetest.PiFixture
	for _, name := range []string{"legacy-v1-compaction", "legacy-v1-linear", "real-00", "real-01", "session-000", "session-011", "tiny-empty", "tiny-user"} {
		in = append(in, storetest.PiFixture{Name: name})
	}
	var got []string
	for _, fx := range storetest.FixtureKinds(in) {
		got = append(got, fx.Name)
	}
	want := []string{"legacy-v1-compaction", "legacy-v1-linear", "real-00", "session-000", "tiny-empty", "tiny-user"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FixtureKinds names (-want +got):\n%s", diff)
	}
}

// TestFixturePathKinds: one path of each kind, the first, in order; a
// kind is the base name without its extension and trailing number, so
// that files of two folders can be of one kind.
func TestFixturePathKinds(t *testing.T) {
	in := []string{"pi/legacy-v1-linear.jsonl", "pi/session-000.jsonl", "pi/session-011.jsonl",
		"piedge/bom.jsonl", "piedge/version-0.jsonl", "piedge/version-4.jsonl", "other/session-3.jsonl", "long-line.jsonl"}
	want := []string{"pi/legacy-v1-linear.jsonl", "pi/session-000.jsonl", "piedge/bom.jsonl", "piedge/version-0.jsonl", "long-line.jsonl"}
	if diff := cmp.Diff(want, storetest.FixturePathKinds(in)); diff != "" {
		t.Errorf("FixturePathKinds (-want +got):\n%s", diff)
	}
}
