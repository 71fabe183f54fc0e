package store_test

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// fuzzTexts are the entries FuzzSearchQuery searches: words the seeds
// name, short and long, punctuation FTS5 reads as syntax, quotes, case
// beyond ASCII (not İ or the Kelvin sign, which strings.ToLower, in
// indexedText, reads apart from FoldCase).
var fuzzTexts = []string{
	`store.go holds the lock; wait for it`,
	`lock wait timeout in "sqlite" (FTS5) AND OR NOT NEAR`,
	`日本語のテキスト 猫がいる`,
	`ÉCOLE straße ΣΟΦΊΑ σοφία ς µ`,
	`a*b col:word ^start +plus -minus "quoted" ""`,
	`xy ab abc abcd 12 123 _x_`,
}

// FuzzSearchQuery searches a SQLite store of fuzzTexts with arbitrary
// queries. A query either is refused with a *QueryError, never a
// storage error (an FTS5 syntax error leaking through), or parses
// (store.ParseQuery) and finds exactly the entries whose indexed text
// the parsed query matches, read here as substrings ignoring case
// (NEAR: at most those holding all its phrases). The one other
// refusal of a parsed query is a short phrase too common to expand.
func FuzzSearchQuery(f *testing.F) {
	for _, q := range []string{`store`, `"store.go"`, `lock AND wait`, `lock OR 猫`, `lock NOT wait`, `sto*`, `(a OR b) c`,
		`NEAR(lock wait, 2)`, `NEAR(lock "wait for")`, `"say ""hi"""`, `日本`, `ab`, `x`, `é`, `ÉCOLE`, `ΣΟΦΊΑ`, `ς`,
		`col:word`, `a )`, `"unterminated`, `""`, `NEAR`, `NEAR AND (a b)`, `^start`, `+plus`, `-minus`, "\u3000猫\u3000",
		`"a*b"`, `abc* NOT xy*`, `(((lock)))`, `NEAR(abc abcd, 0)`} {
		f.Add(q)
	}
	s := openStore(f)
	b := newBuilder(f, mustCreate(f, s, store.CreateOptions{ID: "s"}))
	for i, text := range fuzzTexts {
		b.user(string(rune('a'+i)), text)
	}
	var once sync.Once
	var texts map[string]string
	f.Fuzz(func(t *testing.T, q string) {
		res, err := s.Search(t.Context(), q, store.SearchOptions{Limit: store.MaxSearchLimit})
		once.Do(func() { texts = indexedText(t, s) })
		parsed, perr := store.ParseQuery(q)
		var qe *store.QueryError
		switch {
		case err == nil && perr != nil:
			t.Fatalf("Search(%q) found %d hits; ParseQuery refuses it: %v", q, len(res.Hits), perr)
		case err != nil && (!errors.As(err, &qe) || errors.Is(err, sessiontree.ErrStorage)):
			t.Fatalf("Search(%q) = %v; want a *QueryError", q, err)
		case err != nil && perr == nil && !strings.Contains(qe.Reason, "too common"):
			t.Fatalf("Search(%q) = %v; ParseQuery takes it as %+v", q, err, parsed)
		case err != nil:
			return
		}
		var lower, upper []string
		for k, body := range texts {
			if matches(parsed, body, false) {
				lower = append(lower, k)
			}
			if matches(parsed, body, true) {
				upper = append(upper, k)
			}
		}
		if got := hitKeys(res.Hits); !subset(lower, got) || !subset(got, upper) {
			sort.Strings(lower)
			sort.Strings(upper)
			t.Fatalf("Search(%q) = %v; the parsed query %+v matches at least %v, at most %v", q, got, parsed, lower, upper)
		}
	})
}

// matches reports whether text holds q's phrases as q combines them,
// ignoring case: exactly, for a query without NEAR. NEAR needs
// positions, which substrings do not give: matches reads it as AND when
// upper is set, as nothing when not, so that it returns an upper bound
// of the engine's answer or a lower one (a NOT's second operand takes
// the other bound).
func matches(q sessiontree.MatchQuery, text string, upper bool) bool {
	switch q.Kind {
	case sessiontree.MatchPhrase:
		// An indexed text ends in two newlines that are not the entry's:
		// a phrase may end in them, not start in them
		// (sessiontree.TrigramTail). Matching the phrase anywhere in the
		// text read "\n" in every entry
		// (testdata/fuzz/FuzzSearchQuery/eac6889354581044).
		folded := sessiontree.FoldCase(text)
		i := strings.Index(folded, sessiontree.FoldCase(q.Text))
		return i >= 0 && i < len(strings.TrimSuffix(folded, "\n\n"))
	case sessiontree.MatchOr:
		return slices.ContainsFunc(q.Sub, func(s sessiontree.MatchQuery) bool { return matches(s, text, upper) })
	case sessiontree.MatchNot:
		return matches(q.Sub[0], text, upper) && !matches(q.Sub[1], text, !upper)
	case sessiontree.MatchNear:
		if !upper {
			return false
		}
	}
	return !slices.ContainsFunc(q.Sub, func(s sessiontree.MatchQuery) bool { return !matches(s, text, upper) })
}

// subset reports whether every element of a is in b.
func subset(a, b []string) bool {
	return !slices.ContainsFunc(a, func(k string) bool { return !slices.Contains(b, k) })
}
