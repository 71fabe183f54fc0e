package store

import (
	"errors"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// sexpr writes a match query as an s-expression, for comparisons.
func sexpr(q sessiontree.MatchQuery) string {
	switch q.Kind {
	case sessiontree.MatchPhrase:
		s := `"` + q.Text + `"`
		if q.Prefix {
			s += "*"
		}
		return s
	}
	name := map[sessiontree.MatchKind]string{sessiontree.MatchAnd: "and", sessiontree.MatchOr: "or",
		sessiontree.MatchNot: "not", sessiontree.MatchNear: "near"}[q.Kind]
	parts := []string{name}
	for _, sub := range q.Sub {
		parts = append(parts, sexpr(sub))
	}
	if q.Kind == sessiontree.MatchNear {
		parts = append(parts, strings.Repeat("~", q.Near%4))
	}
	return "(" + strings.Join(parts, " ") + ")"
}

func TestParseQuery(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ q, want string }{
		{`sqlite`, `"sqlite"`},
		{`a b c`, `(and "a" "b" "c")`},
		{`a AND b OR c`, `(or (and "a" "b") "c")`},
		{`a OR b c`, `(or "a" (and "b" "c"))`},
		{`a b NOT c`, `(and "a" (not "b" "c"))`},
		{`a NOT b NOT c`, `(not (not "a" "b") "c")`},
		{`(a OR b) c`, `(and (or "a" "b") "c")`},
		{`"store.go" sto*`, `(and "store.go" "sto"*)`},
		{`"say ""hi"""`, `"say "hi""`},
		{`NEAR(aaa "b c", 2)`, `(near "aaa" "b c" ~~)`},
		{`NEAR`, `"NEAR"`},
		{"NEAR \t(aaa bbb)", `(near "aaa" "bbb" ~~)`},
		{`NEAR AND (a b)`, `(and "NEAR" (and "a" "b"))`},
		{`日本語 🙂`, `(and "日本語" "🙂")`},
		{"\u3000猫\u3000", `"猫"`}, // ideographic spaces around it
		{"\va\f", `"a"`},
	} {
		m, err := parseQuery(tc.q)
		if err != nil {
			t.Errorf("parseQuery(%q): %v", tc.q, err)
			continue
		}
		if got := sexpr(m); got != tc.want {
			t.Errorf("parseQuery(%q) = %s; want %s", tc.q, got, tc.want)
		}
	}
	for _, tc := range []struct{ q, reason string }{
		{`"unterminated`, `unterminated string (at byte 0)`},
		{`store.go`, `syntax error near "." (at byte 5)`},
		{`AND`, `syntax error near "AND" (at byte 0)`},
		{`(sqlite`, `syntax error: missing ) (at byte 7)`},
		{`col:word`, `no such column: col (at byte 0)`},
		{`NEAR(aaa bbb`, `syntax error: missing ) after NEAR( (at byte 12)`},
		{`NEAR(aaa bbb, x)`, `NEAR: expected a distance, found "x" (at byte 14)`},
		{`a OR`, `syntax error: the query ends too early (at byte 4)`},
		{`a )`, `syntax error near ")" (at byte 2)`},
		{"\u3000a )\u3000", `syntax error near ")" (at byte 5)`},
		{`""`, `empty phrase "" (at byte 0)`},
		{`a "" b`, `empty phrase "" (at byte 2)`},
		{`NEAR("" a)`, `empty phrase "" (at byte 5)`},
		{`NEAR(abc 日本)`, `NEAR: "日本" has fewer than 3 characters, too few to be near anything; search for it outside NEAR (at byte 9)`},
		{"a \"b\x00c\"", `NUL byte in a string (at byte 4)`},
	} {
		_, err := parseQuery(tc.q)
		var qe *QueryError
		if !errors.As(err, &qe) || !errors.Is(err, ErrBadQuery) || qe.Query != tc.q || qe.Reason != tc.reason {
			t.Errorf("parseQuery(%q) = %v; want a QueryError %q", tc.q, err, tc.reason)
		}
	}
}

// TestParseQueryNotUTF8: a query holding a byte that is not UTF-8 is a
// QueryError naming the byte and where it is, in both languages. The
// SQLite engine found "\xe3\x89CO" in "ÉCOLE" (FTS5 decodes the
// sequence cut short, E3 89, as É) and the PostgreSQL engine did not
// (FoldCase makes each byte U+FFFD): FuzzSearchQuery's
// testdata/fuzz/FuzzSearchQuery/9b5360bbf66d7d99.
func TestParseQueryNotUTF8(t *testing.T) {
	for _, tc := range []struct{ q, reason string }{
		{"\xe3\x89CO", "a byte that is not UTF-8, 0xe3 (at byte 0)"},
		{"école \xff", "a byte that is not UTF-8, 0xff (at byte 7)"},
		{" \"a\xc3\" ", "a byte that is not UTF-8, 0xc3 (at byte 3)"},
		{"\xed\xa0\x80", "a byte that is not UTF-8, 0xed (at byte 0)"}, // a surrogate, U+D800
	} {
		for _, literal := range []bool{false, true} {
			_, err := parse(tc.q, literal)
			var qe *QueryError
			if !errors.As(err, &qe) || !errors.Is(err, ErrBadQuery) || qe.Query != tc.q || qe.Reason != tc.reason {
				t.Errorf("parse(%q, literal %v) = %v; want a QueryError %q", tc.q, literal, err, tc.reason)
			}
		}
	}
	for _, q := range []string{"école", "\uFFFD", "日本語 AND ς"} {
		if _, err := parse(q, false); err != nil {
			t.Errorf("parse(%q) = %v; want it parsed", q, err)
		}
	}
}

// TestParseBoundsQuery checks that a query of MaxQueryBytes (besides the
// space around it) parses, and that a longer one is a QueryError in both
// languages.
func TestParseBoundsQuery(t *testing.T) {
	words := strings.Repeat("word ", MaxQueryBytes/5)
	atLimit := " " + words + strings.Repeat("x", MaxQueryBytes-len(strings.TrimSpace(words))-1) + " "
	for _, literal := range []bool{false, true} {
		if _, err := parse(atLimit, literal); err != nil {
			t.Errorf("parse(%d bytes, literal %v) = %v; want it parsed", len(strings.TrimSpace(atLimit)), literal, err)
		}
		var qe *QueryError
		_, err := parse(atLimit+"y", literal)
		if !errors.As(err, &qe) || !errors.Is(err, ErrBadQuery) || !strings.Contains(qe.Reason, "at most 4096") {
			t.Errorf("parse(%d bytes, literal %v) = %v; want a QueryError saying the bound", MaxQueryBytes+1, literal, err)
		}
	}
}
