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
