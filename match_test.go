package sessiontree_test

import (
	"slices"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestCaseVariants: CaseVariants spells a text every way its letters beyond ASCII may be
// cased, the text first, and refuses more spellings than the limit.
func TestCaseVariants(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s     string
		limit int
		want  []string
	}{
		{"ab", 16, []string{"ab"}},                  // ASCII is kept as it is
		{"é!", 16, []string{"é!", "É!"}},            // one letter of two cases
		{"µs", 16, []string{"µs", "Μs", "μs"}},      // the micro sign, Greek Mu and mu
		{"日本", 16, []string{"日本"}},                  // no case
		{"éé", 4, []string{"éé", "éÉ", "Éé", "ÉÉ"}}, // at the limit
		{"\xffé", 16, []string{"\xffé", "\xffÉ"}},   // a stray byte is kept
		{"ééé", 4, nil},                             // 8 > 4
	} {
		got, ok := sessiontree.CaseVariants(tc.s, tc.limit)
		if !slices.Equal(got, tc.want) || ok != (tc.want != nil) {
			t.Errorf("CaseVariants(%q, %d) = %q, %v; want %q", tc.s, tc.limit, got, ok, tc.want)
		}
	}
}
