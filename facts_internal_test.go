package sessiontree

import (
	"fmt"
	"testing"
)

// TestKeyLookupsAgreeWithNames checks that each lookup's switch finds
// every name of its list at its index, written plainly or with an escape,
// and nothing else.
func TestKeyLookupsAgreeWithNames(t *testing.T) {
	for _, c := range []struct {
		names []string
		of    func([]byte) int
	}{{memberNames, memberOf}, {messageNames, messageMemberOf}, {usageNames, usageMemberOf}} {
		if len(c.names) == 0 {
			t.Fatal("no names")
		}
		for i, n := range c.names {
			plain := `"` + n + `"`
			escaped := fmt.Sprintf(`"\u%04x%s"`, n[0], n[1:])
			for _, key := range []string{plain, escaped} {
				if got := c.of([]byte(key)); got != i {
					t.Errorf("lookup(%s) = %d; want %d", key, got, i)
				}
			}
			if got := c.of([]byte(`"` + n + `x"`)); got != -1 {
				t.Errorf("lookup(%q) = %d; want -1", n+"x", got)
			}
		}
	}
	if len(memberNames) != int(nMembers) {
		t.Errorf("%d member names for %d members", len(memberNames), nMembers)
	}
}
