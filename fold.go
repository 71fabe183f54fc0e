package sessiontree

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The case folding of search, the one rule of every engine: what the
// SQLite engine's index does (FTS5's trigram tokenizer, case_sensitive 0,
// folds each character by SQLite's table of Unicode's simple case
// foldings), which the PostgreSQL engine applies to the text it indexes
// and to the phrases it looks for, and the store to the text of snippets
// and ranking. engine/fold_test.go holds it to FTS5's for every
// character that folds.

// unfolded are the characters that Go's unicode tables fold (a
// unicode.SimpleFold orbit of more than one) but SQLite's table, of an
// older Unicode, does not: Cherokee's lower case, Georgian's Mtavruli
// and Mkhedruli, Cyrillic's rounded letters (ᲀ..ᲈ, apart from в..ъ),
// Latin letters added since Unicode 6, and the scripts beyond the Basic
// Multilingual Plane but Deseret.
var unfolded = &unicode.RangeTable{
	R16: []unicode.Range16{
		{0x025c, 0x025c, 1}, {0x0261, 0x0261, 1}, {0x026a, 0x026c, 2}, {0x0282, 0x0282, 1},
		{0x0287, 0x0287, 1}, {0x029d, 0x029e, 1}, {0x037f, 0x037f, 1}, {0x03f3, 0x03f3, 1},
		{0x0528, 0x052f, 1}, {0x10d0, 0x10fa, 1}, {0x10fd, 0x10ff, 1}, {0x13a0, 0x13f5, 1},
		{0x13f8, 0x13fd, 1}, {0x1c80, 0x1c88, 1}, {0x1c90, 0x1cba, 1}, {0x1cbd, 0x1cbf, 1},
		{0x1d8e, 0x1d8e, 1}, {0x2c2f, 0x2c2f, 1}, {0x2c5f, 0x2c5f, 1}, {0xa698, 0xa69b, 1},
		{0xa794, 0xa796, 2}, {0xa797, 0xa79f, 1}, {0xa7ab, 0xa7ae, 1}, {0xa7b0, 0xa7ca, 1},
		{0xa7d0, 0xa7d1, 1}, {0xa7d6, 0xa7d9, 1}, {0xa7f5, 0xa7f6, 1}, {0xab53, 0xab53, 1},
		{0xab70, 0xabbf, 1},
	},
	R32: []unicode.Range32{
		{0x104b0, 0x104d3, 1}, {0x104d8, 0x104fb, 1}, {0x10570, 0x1057a, 1}, {0x1057c, 0x1058a, 1},
		{0x1058c, 0x10592, 1}, {0x10594, 0x10595, 1}, {0x10597, 0x105a1, 1}, {0x105a3, 0x105b1, 1},
		{0x105b3, 0x105b9, 1}, {0x105bb, 0x105bc, 1}, {0x10c80, 0x10cb2, 1}, {0x10cc0, 0x10cf2, 1},
		{0x118a0, 0x118df, 1}, {0x16e40, 0x16e7f, 1}, {0x1e900, 0x1e943, 1},
	},
}

// FoldRune folds the case of r as search does: characters equal but
// for case fold to the same one, as FTS5 reads them (µ, μ and Μ; ς, σ
// and Σ; the Kelvin sign, K and k), and the others to themselves (İ,
// which has no simple folding, and unfolded's). It folds U+FFFE and
// U+FFFF to U+FFFD, as SQLite reads them. The character it gives is the
// lower case one, where there is one: for most text FoldRune is
// unicode.ToLower.
func FoldRune(r rune) rune {
	switch {
	case r < utf8.RuneSelf:
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return r
	case 0x3000 <= r && r < 0xa640 || 0xac00 <= r && r < 0xd800:
		return r // CJK, kana, Hangul, Yi: no case (a shortcut, 3x faster)
	case r == 0xfffe || r == 0xffff:
		return utf8.RuneError
	case unicode.SimpleFold(r) == r || unicode.Is(unfolded, r):
		return r
	}
	return unicode.ToLower(unicode.ToUpper(r))
}

// FoldCase folds the case of s as search does (FoldRune). An invalid
// byte folds to U+FFFD.
func FoldCase(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strings.Map(FoldRune, s)
		}
	}
	return strings.ToLower(s) // ASCII: FoldRune's, much faster
}

// caseOrbit returns the characters that fold as r does (FoldRune), r
// first.
func caseOrbit(r rune) []rune {
	orbit := []rune{r}
	switch {
	case r == utf8.RuneError || r == 0xfffe || r == 0xffff:
		for _, c := range []rune{utf8.RuneError, 0xfffe, 0xffff} {
			if c != r {
				orbit = append(orbit, c)
			}
		}
	case !unicode.Is(unfolded, r):
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if !unicode.Is(unfolded, f) {
				orbit = append(orbit, f)
			}
		}
	}
	return orbit
}
