package sessiontree

import "unicode/utf8"

// MatchKind says what a [MatchQuery] node is.
type MatchKind uint8

// The kinds of [MatchQuery] nodes.
const (
	// MatchPhrase matches text that contains Text as a substring,
	// ignoring case (inside longer words too). With Prefix set it is a
	// prefix search, which on substrings means the same.
	MatchPhrase MatchKind = iota
	// MatchAnd matches text every one of Sub matches.
	MatchAnd
	// MatchOr matches text any one of Sub matches.
	MatchOr
	// MatchNot matches text Sub[0] matches and Sub[1] does not.
	MatchNot
	// MatchNear matches text holding every phrase of Sub within Near
	// tokens of each other (an engine without positions reads it as
	// [MatchAnd]).
	MatchNear
)

// DefaultNear is the distance of a [MatchNear] query that names none.
const DefaultNear = 10

// TrigramTail is how many characters must follow a phrase of fewer than
// three characters in an indexed text for the phrase to start one of the
// text's trigrams, which is where such a phrase matches (the trigrams
// starting with it are what it is expanded into); 0 for a longer phrase.
// An indexed text ends in two newlines, which are not the entry's: every
// character of the text starts a trigram, and a phrase may end in them
// but not start in them.
func TrigramTail(phrase string) int { return max(0, 3-utf8.RuneCountInString(phrase)) }

// MatchQuery is a parsed search query, as the store gives it to an
// engine ([DatabaseTx.MatchKeys], [TextIndex.MatchKeys]): an engine
// renders it into its own query syntax (the SQLite engine: FTS5's; the
// PostgreSQL engine: LIKE over text folded by FoldCase, on a trigram
// index) and never parses the
// user's text itself. The store builds it once (store/query.go), after
// expanding phrases of fewer than three characters into the index's
// terms ([DatabaseTx.ExpandTerms]).
type MatchQuery struct {
	Kind MatchKind
	// Text is a phrase's text (MatchPhrase).
	Text string
	// Prefix marks a prefix phrase (written with a trailing '*').
	Prefix bool
	// Sub are the operands of the other kinds: MatchNot has two, the
	// others one or more (MatchNear: phrases only).
	Sub []MatchQuery
	// Near is MatchNear's distance.
	Near int
}

// Phrases calls fn with every phrase of q, left to right.
func (q MatchQuery) Phrases(fn func(p MatchQuery)) {
	if q.Kind == MatchPhrase {
		fn(q)
		return
	}
	for _, s := range q.Sub {
		s.Phrases(fn)
	}
}

// CaseVariants returns the strings that are s but for the case of its
// letters beyond ASCII, s first: one per combination of the cases of
// each such letter (the characters [FoldRune] folds alike: é and É; µ,
// μ and Μ), for an engine whose own matching folds the case of ASCII
// letters only (SQLite's LIKE), or for a look-up in an index that holds
// text folded (FTS5's vocabulary). An ASCII letter is kept as it is, or
// spelled as the characters beyond ASCII that fold as it: k as the
// Kelvin sign (K), s as the long s (ſ), which such an engine does not
// take for k and s. Bytes that are not UTF-8 are kept as they are. It
// returns false, and no strings, when there would be more than limit
// of them.
func CaseVariants(s string, limit int) ([]string, bool) {
	out := []string{""}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		cases := []string{s[i : i+size]}
		if r != utf8.RuneError || size > 1 {
			for _, f := range caseOrbit(r)[1:] {
				if r >= utf8.RuneSelf || f >= utf8.RuneSelf {
					cases = append(cases, string(f))
				}
			}
		}
		i += size
		if len(out)*len(cases) > limit {
			return nil, false
		}
		next := make([]string, 0, len(out)*len(cases))
		for _, o := range out {
			for _, c := range cases {
				next = append(next, o+c)
			}
		}
		out = next
	}
	return out, true
}
