package sessiontree_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
)

func TestUnknownTypes(t *testing.T) {
	var u sessiontree.UnknownTypes
	if s := u.String(); s != "" || u.Entries() != 0 {
		t.Errorf("empty UnknownTypes = %q, %d entries; want \"\", 0", s, u.Entries())
	}
	u.Note(sessiontree.TypeMessage)
	u.Note(sessiontree.TypeUsage)
	u.Note("future_thing")
	if got, want := u.String(), `1 entry of a type this version does not know ("future_thing"), kept as it is`; got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
	u.Note("other\x1b[31m")
	u.Note("future_thing")
	want := sessiontree.UnknownTypes{{Type: "future_thing", Count: 2}, {Type: "other\x1b[31m", Count: 1}}
	if diff := cmp.Diff(want, u); diff != "" {
		t.Errorf("after Note (-want +got):\n%s", diff)
	}
	if got, want := u.String(), `3 entries of types this version does not know ("future_thing", "other\x1b[31m"), kept as they are`; got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
	u.Merge(sessiontree.UnknownTypes{{Type: "third", Count: 4}, {Type: "future_thing", Count: 1}})
	if got := u.Names(); !cmp.Equal(got, []string{"future_thing", "other\x1b[31m", "third"}) || u.Entries() != 8 {
		t.Errorf("after Merge: Names() = %q, Entries() = %d; want three names in the order met, 8", got, u.Entries())
	}
}
