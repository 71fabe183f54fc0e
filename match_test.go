package sessiontree_test

import (
	"slices"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/sessiontree/sessiontree"
)

// TestCaseVariants: CaseVariants spells a text every way its letters beyond ASCII may be
// cased, and k and s as the Kelvin sign and the long s, which fold as
// they do, the text first, and refuses more spellings than the limit.
func TestCaseVariants(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s     string
		limit int
		want  []string
	}{
		{"ab", 16, []string{"ab"}},                               // ASCII is kept as it is
		{"ks", 16, []string{"ks", "kſ", "\u212as", "\u212aſ"}},   // but for the Kelvin sign and the long s
		{"é!", 16, []string{"é!", "É!"}},                         // one letter of two cases
		{"µs", 16, []string{"µs", "µſ", "Μs", "Μſ", "μs", "μſ"}}, // the micro sign, Greek Mu and mu
		{"日本", 16, []string{"日本"}},                               // no case
		{"éé", 4, []string{"éé", "éÉ", "Éé", "ÉÉ"}},              // at the limit
		{"\xffé", 16, []string{"\xffé", "\xffÉ"}},                // a stray byte is kept
		{"ééé", 4, nil},                                          // 8 > 4
	} {
		got, ok := sessiontree.CaseVariants(tc.s, tc.limit)
		if !slices.Equal(got, tc.want) || ok != (tc.want != nil) {
			t.Errorf("CaseVariants(%q, %d) = %q, %v; want %q", tc.s, tc.limit, got, ok, tc.want)
		}
	}
}

// TestCaseVariantsAreFoldRunes: the spellings CaseVariants gives a
// character beyond ASCII are the characters FoldRune folds as it, all
// of them, the one it folds to among them: an engine looking up each
// spelling in an index of folded text finds what it folded alike, no
// more.
func TestCaseVariantsAreFoldRunes(t *testing.T) {
	t.Parallel()
	alike := make([]int32, unicode.MaxRune+1) // by folded rune; a slice, as a map took most of the test's time
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if utf8.ValidRune(r) {
			alike[sessiontree.FoldRune(r)]++
		}
	}
	for r := rune(utf8.RuneSelf); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		if f := sessiontree.FoldRune(r); sessiontree.FoldRune(f) != f {
			t.Errorf("FoldRune(%U) = %U, which FoldRune folds to %U: a spelling no look-up names", r, f, sessiontree.FoldRune(f))
		}
		got, ok := sessiontree.CaseVariants(string(r), 16)
		for _, v := range got {
			f, _ := utf8.DecodeRuneInString(v)
			if sessiontree.FoldRune(f) != sessiontree.FoldRune(r) {
				t.Errorf("CaseVariants(%U) holds %U, which FoldRune folds to %U, not %U", r, f, sessiontree.FoldRune(f), sessiontree.FoldRune(r))
			}
		}
		if want := int(alike[sessiontree.FoldRune(r)]); !ok || len(got) != want {
			t.Errorf("CaseVariants(%U) = %q, %v; want the %d characters folding as it", r, got, ok, want)
		}
	}
}
