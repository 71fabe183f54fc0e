package engine

import (
	"strconv"
	"strings"

	"github.com/sessiontree/sessiontree"
)

// fts5Query renders a match query in FTS5's query syntax, every operand
// parenthesized (FTS5 puts an implicit AND only between phrases, so the
// renderer writes every AND out).
func fts5Query(q sessiontree.MatchQuery) string {
	var b strings.Builder
	writeFTS5(&b, q)
	return b.String()
}

func writeFTS5(b *strings.Builder, q sessiontree.MatchQuery) {
	switch q.Kind {
	case sessiontree.MatchPhrase:
		b.WriteString(quotePhrase(q.Text))
		if q.Prefix {
			b.WriteByte('*')
		}
		return
	case sessiontree.MatchNear:
		b.WriteString("NEAR(")
		for i, sub := range q.Sub {
			if i > 0 {
				b.WriteByte(' ')
			}
			writeFTS5(b, sub)
		}
		b.WriteString(", " + strconv.Itoa(q.Near) + ")")
		return
	}
	op := map[sessiontree.MatchKind]string{sessiontree.MatchAnd: " AND ", sessiontree.MatchOr: " OR ", sessiontree.MatchNot: " NOT "}[q.Kind]
	b.WriteByte('(')
	for i, sub := range q.Sub {
		if i > 0 {
			b.WriteString(op)
		}
		writeFTS5(b, sub)
	}
	b.WriteByte(')')
}
