package store

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/sessiontree/sessiontree"
)

// The search query language (see [Store.Search]) is FTS5's, parsed here
// once into a [sessiontree.MatchQuery] that each engine renders into its
// own syntax:
//
//	or     := and { "OR" and }
//	and    := not { ["AND"] not }
//	not    := unit { "NOT" unit }
//	unit   := "(" or ")" | "NEAR" "(" phrase { phrase } [ "," N ] ")" | phrase [ "*" ]
//	phrase := bareword | "quoted ""string"""
//
// NOT binds tighter than AND, AND tighter than OR, as in FTS5. Column
// filters, '^' and '+' (which mean nothing on the single text column)
// are refused, and so are an empty phrase ("", which the engines would
// read as nothing, everything, or not at all), a NUL byte in a quoted
// string (which ends FTS5's query text, and PostgreSQL's text cannot
// hold) and a phrase of fewer than three characters in NEAR (no trigram
// of its own: FTS5 would drop it from the group, PostgreSQL match none).

// parseQuery parses q into a match query. White space of any kind
// around it (an ideographic space too) is not part of it. A query it
// cannot parse is a *QueryError naming what is wrong and where, a byte
// offset in q.
func parseQuery(q string) (sessiontree.MatchQuery, error) {
	end := len(strings.TrimRightFunc(q, unicode.IsSpace))
	p := &qparser{src: q[:end], pos: end - len(strings.TrimLeftFunc(q[:end], unicode.IsSpace))}
	p.next()
	m, err := p.or()
	if err == nil && p.tok.kind != tEnd {
		err = p.errorf("syntax error near %q", p.tok.text)
	}
	if err != nil {
		return sessiontree.MatchQuery{}, &QueryError{Query: q, Reason: err.Error()}
	}
	return m, nil
}

// literalQuery is the query of [SearchOptions.Literal]: each word, split
// at white space and NUL bytes, a phrase, all of them ANDed.
func literalQuery(q string) sessiontree.MatchQuery {
	words := strings.FieldsFunc(q, func(r rune) bool { return r == 0 || unicode.IsSpace(r) })
	subs := make([]sessiontree.MatchQuery, len(words))
	for i, w := range words {
		subs[i] = sessiontree.MatchQuery{Kind: sessiontree.MatchPhrase, Text: w}
	}
	return andOf(subs)
}

func andOf(subs []sessiontree.MatchQuery) sessiontree.MatchQuery {
	if len(subs) == 1 {
		return subs[0]
	}
	return sessiontree.MatchQuery{Kind: sessiontree.MatchAnd, Sub: subs}
}

type qkind uint8

const (
	tEnd    qkind = iota
	tPhrase       // a bareword or a quoted string
	tWord         // AND, OR, NOT, NEAR
	tPunct        // ( ) * ,
	tBad          // anything else
)

type qtok struct {
	kind qkind
	text string // a phrase's text, unquoted; a keyword; a character
	pos  int    // byte offset in the query
}

// qparser is a recursive-descent parser of the query language.
type qparser struct {
	src string
	pos int
	tok qtok
	err error // a lexing error, reported when the token is used
}

func (p *qparser) errorf(format string, args ...any) error {
	return fmt.Errorf(format+" (at byte %d)", append(args, p.tok.pos)...)
}

// next reads the next token into p.tok.
func (p *qparser) next() {
	p.pos = p.skipSpace(p.pos)
	start := p.pos
	if p.pos >= len(p.src) {
		p.tok = qtok{kind: tEnd, pos: start}
		return
	}
	c := p.src[p.pos]
	switch {
	case c == '"':
		p.quoted(start)
		return
	case isBareword(c):
		for p.pos < len(p.src) && isBareword(p.src[p.pos]) {
			p.pos++
		}
		w := p.src[start:p.pos]
		kind := tPhrase
		switch w {
		case "AND", "OR", "NOT", "NEAR":
			kind = tWord
		}
		p.tok = qtok{kind: kind, text: w, pos: start}
	default:
		p.pos++
		kind := tBad
		if strings.IndexByte("()*,", c) >= 0 {
			kind = tPunct
		}
		p.tok = qtok{kind: kind, text: string(c), pos: start}
	}
	// A colon after a phrase makes it a column name.
	if p.tok.kind == tPhrase && p.pos < len(p.src) && p.src[p.pos] == ':' {
		p.err = fmt.Errorf("no such column: %s (at byte %d)", p.tok.text, start)
		p.tok.kind = tBad
	}
}

// skipSpace returns the offset of the first byte at or after i that is
// not white space.
func (p *qparser) skipSpace(i int) int {
	for i < len(p.src) && strings.IndexByte(" \t\n\r", p.src[i]) >= 0 {
		i++
	}
	return i
}

// quoted reads the quoted string starting at start into p.tok. A NUL
// byte ends no engine's string as written: it is refused.
func (p *qparser) quoted(start int) {
	var b strings.Builder
	for i := start + 1; i < len(p.src); i++ {
		c := p.src[i]
		if c == 0 {
			p.err = fmt.Errorf("NUL byte in a string (at byte %d)", i)
			break
		}
		if c == '"' && i+1 < len(p.src) && p.src[i+1] == '"' {
			i++ // "" is a quote
		} else if c == '"' {
			p.pos = i + 1
			p.tok = qtok{kind: tPhrase, text: b.String(), pos: start}
			return
		}
		b.WriteByte(c)
	}
	p.pos = len(p.src)
	p.tok = qtok{kind: tBad, text: p.src[start:], pos: start}
	if p.err == nil {
		p.err = fmt.Errorf("unterminated string (at byte %d)", start)
	}
}

func (p *qparser) is(kind qkind, text string) bool { return p.tok.kind == kind && p.tok.text == text }

// bad returns the error of a token that cannot be used here.
func (p *qparser) bad() error {
	if p.err != nil {
		return p.err
	}
	if p.tok.kind == tEnd {
		return p.errorf("syntax error: the query ends too early")
	}
	return p.errorf("syntax error near %q", p.tok.text)
}

func (p *qparser) or() (sessiontree.MatchQuery, error) {
	return p.chain(sessiontree.MatchOr, "OR", p.and)
}

func (p *qparser) and() (sessiontree.MatchQuery, error) {
	var subs []sessiontree.MatchQuery
	for {
		m, err := p.not()
		if err != nil {
			return m, err
		}
		subs = append(subs, m)
		if p.is(tWord, "AND") {
			p.next()
			continue
		}
		if !p.startsUnit() {
			return andOf(subs), nil
		}
	}
}

// startsUnit reports whether the token can start an operand (an
// implicit AND).
func (p *qparser) startsUnit() bool {
	return p.tok.kind == tPhrase || p.is(tWord, "NEAR") || p.is(tPunct, "(") || p.tok.kind == tBad
}

func (p *qparser) not() (sessiontree.MatchQuery, error) {
	m, err := p.unit()
	for err == nil && p.is(tWord, "NOT") {
		p.next()
		var r sessiontree.MatchQuery
		if r, err = p.unit(); err == nil {
			m = sessiontree.MatchQuery{Kind: sessiontree.MatchNot, Sub: []sessiontree.MatchQuery{m, r}}
		}
	}
	return m, err
}

// chain parses operands joined by the keyword op.
func (p *qparser) chain(kind sessiontree.MatchKind, op string, operand func() (sessiontree.MatchQuery, error)) (sessiontree.MatchQuery, error) {
	var subs []sessiontree.MatchQuery
	for {
		m, err := operand()
		if err != nil {
			return m, err
		}
		subs = append(subs, m)
		if !p.is(tWord, op) {
			break
		}
		p.next()
	}
	if len(subs) == 1 {
		return subs[0], nil
	}
	return sessiontree.MatchQuery{Kind: kind, Sub: subs}, nil
}

func (p *qparser) unit() (sessiontree.MatchQuery, error) {
	switch {
	case p.is(tPunct, "("):
		p.next()
		m, err := p.or()
		if err != nil {
			return m, err
		}
		if !p.is(tPunct, ")") {
			if p.tok.kind == tEnd {
				return m, p.errorf("syntax error: missing )")
			}
			return m, p.bad()
		}
		p.next()
		return m, nil
	case p.is(tWord, "NEAR") && strings.HasPrefix(p.src[p.skipSpace(p.pos):], "("):
		return p.near()
	case p.is(tWord, "NEAR"):
		p.tok.kind = tPhrase // NEAR without a group is a word
	}
	return p.phrase()
}

func (p *qparser) phrase() (sessiontree.MatchQuery, error) {
	if p.tok.kind != tPhrase {
		return sessiontree.MatchQuery{}, p.bad()
	}
	if p.tok.text == "" {
		return sessiontree.MatchQuery{}, p.errorf(`empty phrase ""`)
	}
	m := sessiontree.MatchQuery{Kind: sessiontree.MatchPhrase, Text: p.tok.text}
	p.next()
	if p.is(tPunct, "*") {
		m.Prefix = true
		p.next()
	}
	return m, nil
}

// near parses NEAR(phrase phrase ... [, N]); p.tok is NEAR.
func (p *qparser) near() (sessiontree.MatchQuery, error) {
	p.next() // (
	p.next()
	m := sessiontree.MatchQuery{Kind: sessiontree.MatchNear, Near: sessiontree.DefaultNear}
	for p.tok.kind == tPhrase || p.is(tWord, "NEAR") {
		p.tok.kind = tPhrase
		at := p.tok.pos
		ph, err := p.phrase()
		if err != nil {
			return m, err
		}
		if short(ph.Text) {
			return m, fmt.Errorf("NEAR: %q has fewer than 3 characters, too few to be near anything; search for it outside NEAR (at byte %d)", ph.Text, at)
		}
		m.Sub = append(m.Sub, ph)
	}
	if len(m.Sub) == 0 {
		return m, p.bad()
	}
	if p.is(tPunct, ",") {
		p.next()
		n, err := strconv.Atoi(p.tok.text)
		if p.tok.kind != tPhrase || err != nil || n < 0 {
			return m, p.errorf("NEAR: expected a distance, found %q", p.tok.text)
		}
		m.Near = n
		p.next()
	}
	if !p.is(tPunct, ")") {
		if p.tok.kind == tEnd {
			return m, p.errorf("syntax error: missing ) after NEAR(")
		}
		return m, p.bad()
	}
	p.next()
	return m, nil
}

// isBareword reports whether c may be part of an FTS5 bareword: any byte
// of a non-ASCII character, ASCII letters and digits, '_' and 0x1a.
func isBareword(c byte) bool {
	return c >= 0x80 || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == 0x1a
}
