package sessiontree

import (
	"fmt"
	"testing"
)

// TestMemberOfAgreesWithNames checks that memberOf's switch finds every
// name of memberNames at its index, written plainly or with an escape,
// and nothing else.
func TestMemberOfAgreesWithNames(t *testing.T) {
	if len(memberNames) != int(nMembers) {
		t.Fatalf("%d member names for %d members", len(memberNames), nMembers)
	}
	for i, n := range memberNames {
		plain := `"` + n + `"`
		escaped := fmt.Sprintf(`"\u%04x%s"`, n[0], n[1:])
		for _, key := range []string{plain, escaped} {
			if got := memberOf([]byte(key)); got != i {
				t.Errorf("memberOf(%s) = %d; want %d", key, got, i)
			}
		}
		if got := memberOf([]byte(`"` + n + `x"`)); got != -1 {
			t.Errorf("memberOf(%q) = %d; want -1", n+"x", got)
		}
	}
}
