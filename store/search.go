package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// SearchOptions narrow and shape a [Store.Search]. The zero value searches
// every session and returns DefaultSearchLimit hits.
type SearchOptions struct {
	// Cwd keeps hits in sessions of this working directory.
	Cwd string
	// SessionID keeps hits in this session (exact id).
	SessionID string
	// Limit is how many hits to return; 0 means DefaultSearchLimit, and it
	// is capped at MaxSearchLimit.
	Limit int
	// Literal treats the query as plain words, each to be found as it is
	// (punctuation included), instead of FTS5 query syntax: "store.go
	// -v" finds entries containing both "store.go" and "-v".
	Literal bool
	// Marks are put before and after each match in a snippet; the zero
	// value means "[" and "]".
	Marks [2]string
}

// Hit limits of [Store.Search].
const (
	DefaultSearchLimit = 20
	MaxSearchLimit     = 1000
)

// Hit is one entry a search found.
type Hit struct {
	// SessionID and EntryID say where the hit is.
	SessionID string `json:"sessionId"`
	EntryID   string `json:"entryId"`
	// Type is the entry's type, Role a message's role ("" otherwise).
	Type string `json:"type"`
	Role string `json:"role,omitempty"`
	// Timestamp is the entry's timestamp (ISO-8601).
	Timestamp string `json:"timestamp"`
	// Snippet is the matching text around the match, on one line, with
	// the matches between [SearchOptions.Marks].
	Snippet string `json:"snippet"`
	// OnActiveBranch tells whether the entry is on its session's active
	// branch (the path from the root to the current leaf).
	OnActiveBranch bool `json:"onActiveBranch"`
	// Rank is FTS5's bm25 score: lower is better. Hits found by scanning
	// (a very short, very common query) have rank 0.
	Rank float64 `json:"rank"`
	// Cwd and SessionName describe the hit's session.
	Cwd         string `json:"cwd"`
	SessionName string `json:"sessionName,omitempty"`
}

// maxExpansion bounds how many trigrams a query of one or two characters
// is expanded into before a search falls back to scanning.
const maxExpansion = 256

// Search finds entries whose text matches query, best first, using the
// FTS5 index that every write keeps current in its own transaction
// (schema.sql: what text is indexed, and why the trigram tokenizer).
//
// The query is FTS5 query syntax, applied to substrings: words (each found
// anywhere, inside longer words too, ignoring case) are ANDed; "double
// quotes" make a phrase (needed for punctuation: "store.go"); OR, NOT and
// parentheses combine; NEAR(a b) finds words close together. Words of
// three characters or more are looked up in the index directly. A word of
// one or two characters (日本, 猫, or a short identifier) has no trigram
// of its own: it is expanded into the index's trigrams that start with it;
// when it is the whole query and too common for that, the store scans the
// text instead, newest entries first, and ranks nothing. With
// [SearchOptions.Literal] the query is plain words, each searched as is.
//
// A query FTS5 cannot parse is a [*QueryError] (matching [ErrBadQuery])
// with SQLite's reason.
func (s *Store) Search(ctx context.Context, query string, opts SearchOptions) ([]Hit, error) {
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	limit = min(limit, MaxSearchLimit)
	if opts.Marks == [2]string{} {
		opts.Marks = [2]string{"[", "]"}
	}
	q := strings.TrimSpace(query)
	if opts.Literal {
		q = literalQuery(q)
	}
	if q == "" {
		return nil, &QueryError{Query: query, Reason: "empty query"}
	}
	var hits []Hit
	err := s.db.View(ctx, func(tx *sqlx.Tx) error {
		hits = nil
		var lo, hi int64 = 0, 1<<63 - 1
		if opts.SessionID != "" {
			var pk int64
			err := tx.GetContext(ctx, &pk, `SELECT pk FROM sessions WHERE id = ? AND deleting = 0`, opts.SessionID)
			if err != nil {
				return notFoundOr(err, opts.SessionID)
			}
			lo, hi = pk<<32, pk<<32|0xffffffff
		}
		sr := searcher{ctx: ctx, tx: tx, query: query, opts: opts, limit: limit, lo: lo, hi: hi}
		match, scan, err := sr.prepare(q)
		if err != nil {
			return err
		}
		if scan != "" {
			hits, err = sr.scan(scan)
		} else {
			hits, err = sr.match(match)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return hits, nil
}

type searcher struct {
	ctx    context.Context
	tx     *sqlx.Tx
	query  string
	opts   SearchOptions
	limit  int
	lo, hi int64
}

// literalQuery makes each whitespace-separated word a quoted phrase.
func literalQuery(q string) string {
	words := strings.Fields(q)
	for i, w := range words {
		words[i] = quotePhrase(w)
	}
	return strings.Join(words, " ")
}

func quotePhrase(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// prepare rewrites the query's short phrases (see [Store.Search]). It
// returns the FTS5 query to run, or, for a query that is a single short
// phrase too common to expand, the text to scan for.
func (sr *searcher) prepare(q string) (match, scan string, err error) {
	toks := lexQuery(q)
	var short []int
	for i, t := range toks {
		if t.phrase && t.short() {
			short = append(short, i)
		}
	}
	if len(short) == 0 {
		return q, "", nil
	}
	alone := len(short) == 1 && len(toks) == 1+countPrefixStar(toks)
	for _, i := range short {
		text := toks[i].text()
		if alone && utf8.RuneCountInString(text) == 1 && text[0] < utf8.RuneSelf {
			return "", text, nil // one ASCII character is in most texts
		}
		terms, err := sr.expand(text)
		if err != nil {
			return "", "", err
		}
		if len(terms) > maxExpansion {
			if alone {
				return "", text, nil
			}
			return "", "", &QueryError{Query: sr.query, Reason: fmt.Sprintf(
				"%q has fewer than 3 characters and is too common to search for inside a larger query; search for it alone or for longer text", text)}
		}
		toks[i].repl = orGroup(terms)
	}
	var b strings.Builder
	for _, t := range toks {
		if t.repl != "" {
			b.WriteString(t.repl)
		} else {
			b.WriteString(t.src)
		}
	}
	return b.String(), "", nil
}

func countPrefixStar(toks []qtoken) int {
	n := 0
	for _, t := range toks {
		if t.src == "*" {
			n++
		}
	}
	return n
}

// never is a phrase no text contains: what a short phrase without any
// trigram becomes.
const never = "\"\uffff\uffff\uffff\""

func orGroup(terms []string) string {
	if len(terms) == 0 {
		return never
	}
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = quotePhrase(t)
	}
	return "(" + strings.Join(parts, " OR ") + ")"
}

// expand returns the index's trigrams that start with text (folded as the
// tokenizer folds: lower case), at most maxExpansion+1 of them. Every
// indexed text ends in two newlines, so each of its characters starts a
// trigram.
func (sr *searcher) expand(text string) ([]string, error) {
	folded := strings.Map(unicode.ToLower, text)
	r, size := utf8.DecodeLastRuneInString(folded)
	upper := folded[:len(folded)-size] + string(r+1)
	var terms []string
	err := sr.tx.SelectContext(sr.ctx, &terms, `SELECT term FROM entries_fts_vocab WHERE term >= ? AND term < ? LIMIT ?`,
		folded, upper, maxExpansion+1)
	if err != nil {
		return nil, fmt.Errorf("expand %q: %w", text, err)
	}
	return terms, nil
}

// match runs an FTS5 query: the ranked page of rowids first, then the
// snippet and the details of each hit, so that snippets (which read the
// entry's text) are cut only for the hits returned.
func (sr *searcher) match(match string) ([]Hit, error) {
	query := `SELECT rowid, rank FROM entries_fts WHERE entries_fts MATCH ?1 AND rowid BETWEEN ?2 AND ?3`
	params := []any{match, sr.lo, sr.hi}
	if sr.opts.Cwd != "" {
		query += ` AND (rowid >> 32) IN (SELECT pk FROM sessions WHERE cwd = ?4)`
		params = append(params, sr.opts.Cwd)
	}
	query += ` ORDER BY rank LIMIT ` + fmt.Sprint(sr.limit)
	type ranked struct {
		pk   int64
		rank float64
	}
	var page []ranked
	rows, err := sr.tx.QueryContext(sr.ctx, query, params...)
	if err != nil {
		return nil, sr.queryError(err)
	}
	for rows.Next() {
		var r ranked
		if err := rows.Scan(&r.pk, &r.rank); err != nil {
			rows.Close()
			return nil, err
		}
		page = append(page, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, sr.queryError(err)
	}
	hits := make([]Hit, 0, len(page))
	for _, r := range page {
		var snippet string
		err := sr.tx.GetContext(sr.ctx, &snippet, `SELECT snippet(entries_fts, 0, ?, ?, '…', 24)
FROM entries_fts WHERE entries_fts MATCH ? AND rowid = ?`, sr.opts.Marks[0], sr.opts.Marks[1], match, r.pk)
		if err != nil {
			return nil, sr.queryError(err)
		}
		h, err := sr.details(r.pk)
		if err != nil {
			return nil, err
		}
		h.Snippet, h.Rank = oneLine(snippet), r.rank
		hits = append(hits, h)
	}
	return hits, nil
}

// scan finds text by reading the indexed text itself, newest entries
// first, for a query too short and too common for the index.
func (sr *searcher) scan(text string) ([]Hit, error) {
	query := `SELECT t.pk, t.body FROM search_text t WHERE t.pk BETWEEN ?2 AND ?3 AND t.body LIKE ?1 ESCAPE '\'`
	params := []any{"%" + likeEscape(text) + "%", sr.lo, sr.hi}
	if sr.opts.Cwd != "" {
		query += ` AND (t.pk >> 32) IN (SELECT pk FROM sessions WHERE cwd = ?4)`
		params = append(params, sr.opts.Cwd)
	}
	query += ` ORDER BY t.pk DESC LIMIT ` + fmt.Sprint(sr.limit)
	type found struct {
		pk   int64
		body string
	}
	var page []found
	rows, err := sr.tx.QueryContext(sr.ctx, query, params...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var f found
		if err := rows.Scan(&f.pk, &f.body); err != nil {
			rows.Close()
			return nil, err
		}
		page = append(page, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	hits := make([]Hit, 0, len(page))
	for _, f := range page {
		h, err := sr.details(f.pk)
		if err != nil {
			return nil, err
		}
		h.Snippet = cutSnippet(f.body, text, sr.opts.Marks)
		hits = append(hits, h)
	}
	return hits, nil
}

func (sr *searcher) details(pk int64) (Hit, error) {
	var h Hit
	err := sr.tx.QueryRowContext(sr.ctx, `SELECT s.id, e.id, e.type, coalesce(e.role, ''), e.timestamp, s.cwd,
       coalesce(s.name, ''),
       EXISTS (SELECT 1 FROM branch b WHERE b.session = e.session AND b.depth = e.depth AND b.entry = e.pk)
FROM entries e JOIN sessions s ON s.pk = e.session WHERE e.pk = ?`, pk).
		Scan(&h.SessionID, &h.EntryID, &h.Type, &h.Role, &h.Timestamp, &h.Cwd, &h.SessionName, &h.OnActiveBranch)
	if err != nil {
		return h, fmt.Errorf("read hit %d: %w", pk, err)
	}
	return h, nil
}

// queryError turns SQLite's refusal of a MATCH expression into a
// [*QueryError]; other errors pass.
func (sr *searcher) queryError(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_ERROR {
		reason := se.Error()
		if i := strings.Index(reason, ": "); i >= 0 && strings.HasPrefix(reason, "SQL logic error") {
			reason = reason[i+2:]
		}
		reason = strings.TrimSuffix(reason, " (1)")
		return &QueryError{Query: sr.query, Reason: reason}
	}
	return err
}

// oneLine puts a snippet on one line.
func oneLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
}

// cutSnippet marks the first match of text in body (ignoring ASCII case,
// as LIKE does) and keeps some context around it.
func cutSnippet(body, text string, marks [2]string) string {
	const context = 30 // characters each side
	i := strings.Index(strings.ToLower(body), strings.ToLower(text))
	if i < 0 || len(strings.ToLower(body)) != len(body) {
		i = strings.Index(body, text)
	}
	if i < 0 {
		return oneLine(truncateRunes(body, 2*context))
	}
	before, match, after := body[:i], body[i:i+len(text)], body[i+len(text):]
	prefix := ""
	if n := utf8.RuneCountInString(before); n > context {
		before = string([]rune(before)[n-context:])
		prefix = "…"
	}
	suffix := ""
	if utf8.RuneCountInString(after) > context {
		after = string([]rune(after)[:context])
		suffix = "…"
	}
	return oneLine(prefix + before + marks[0] + match + marks[1] + after + suffix)
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// qtoken is a piece of an FTS5 query.
type qtoken struct {
	src    string // as written
	phrase bool   // a bareword or a quoted string that is a phrase
	repl   string // what replaces it, when set
}

// text is the phrase's text: the string unquoted, or the bareword.
func (t qtoken) text() string {
	if strings.HasPrefix(t.src, `"`) {
		s := strings.TrimPrefix(t.src, `"`)
		s = strings.TrimSuffix(s, `"`)
		return strings.ReplaceAll(s, `""`, `"`)
	}
	return t.src
}

func (t qtoken) short() bool {
	n := utf8.RuneCountInString(t.text())
	return n > 0 && n < 3
}

// lexQuery splits an FTS5 query into tokens, marking the phrases: quoted
// strings and barewords, except the keywords AND, OR, NOT and NEAR,
// column names (before ':' or inside {...}) and the phrases of a
// NEAR(...) group, which must stay phrases. Anything it does not
// understand is kept as written, for FTS5 to judge.
func lexQuery(q string) []qtoken {
	var toks []qtoken
	braces := 0
	near := -1 // parenthesis depth of an open NEAR group
	depth := 0
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			j := i
			for j < len(q) && (q[j] == ' ' || q[j] == '\t' || q[j] == '\n' || q[j] == '\r') {
				j++
			}
			toks = append(toks, qtoken{src: q[i:j]})
			i = j
		case c == '"':
			j := i + 1
			for j < len(q) {
				if q[j] == '"' {
					if j+1 < len(q) && q[j+1] == '"' {
						j += 2
						continue
					}
					j++
					break
				}
				j++
			}
			toks = append(toks, qtoken{src: q[i:j], phrase: braces == 0 && near < 0})
			i = j
		case isBareword(c):
			j := i
			for j < len(q) && isBareword(q[j]) {
				j++
			}
			w := q[i:j]
			kw := w == "AND" || w == "OR" || w == "NOT" || w == "NEAR"
			toks = append(toks, qtoken{src: w, phrase: !kw && braces == 0 && near < 0})
			if w == "NEAR" && j < len(q) && q[j] == '(' {
				near = depth
			}
			i = j
		default:
			switch c {
			case '{':
				braces++
			case '}':
				braces--
			case '(':
				depth++
			case ')':
				depth--
				if depth == near {
					near = -1
				}
			case ':':
				// The phrase before a colon is a column name.
				for k := len(toks) - 1; k >= 0; k-- {
					if strings.TrimSpace(toks[k].src) != "" {
						toks[k].phrase = false
						break
					}
				}
			}
			toks = append(toks, qtoken{src: q[i : i+1]})
			i++
		}
	}
	return toks
}

// isBareword reports whether c may be part of an FTS5 bareword: any byte
// of a non-ASCII character, ASCII letters and digits, '_' and 0x1a.
func isBareword(c byte) bool {
	return c >= 0x80 || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == 0x1a
}
