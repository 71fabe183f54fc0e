package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/rivo/uniseg"

	"github.com/sessiontree/sessiontree"
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
	// (punctuation included), instead of the query language: "store.go
	// -v" finds entries containing both "store.go" and "-v".
	Literal bool
	// Marks are put before and after each match in a snippet; the zero
	// value means "[" and "]".
	Marks [2]string
	// IndexProgress, when set, is told the progress of the index
	// catch-up the search makes first ([Store.Index]), if it makes one.
	IndexProgress func(IndexProgress)
}

// SearchResult is what a [Store.Search] found.
type SearchResult struct {
	// Hits are the entries found, best first.
	Hits []Hit `json:"hits"`
	// Scanned counts the entries not yet in the index that the search
	// read itself (see [Store.Search]).
	Scanned int64 `json:"scanned,omitempty"`
	// Unsearched counts the entries not yet in the index that it left
	// unread, beyond [PendingScanEntries] and [PendingScanBytes]: when it
	// is not 0, hits among them are missing, and a search once the index
	// has caught up ([Store.Index]) may find more.
	Unsearched int64 `json:"unsearched,omitempty"`
}

// HitList returns the hits as `sessiontree search --json` and the HTTP
// API's search give them: never nil, so that no hits is written [].
func (r SearchResult) HitList() []Hit {
	if r.Hits == nil {
		return []Hit{}
	}
	return r.Hits
}

// Hit limits of [Store.Search].
const (
	DefaultSearchLimit = 20
	MaxSearchLimit     = 1000
)

// MaxQueryBytes bounds a search query: a longer one is a [*QueryError].
// A search's work grows as the square of its words (100 KB of words took
// a second over three entries, and the server's URL may hold 1 MB); a
// query of this size takes at most about 0.1 s over a few entries.
const MaxQueryBytes = 4096

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
	// Snippet is the entry's text around the first match, on one line,
	// at most about 120 characters, with the query's words and phrases
	// between [SearchOptions.Marks] (ignoring case).
	Snippet string `json:"snippet"`
	// OnActiveBranch tells whether the entry is on its session's active
	// branch (the path from the root to the current leaf).
	OnActiveBranch bool `json:"onActiveBranch"`
	// Rank orders the hits, lower first: the negated score of the
	// query's words in the entry's text (see [Store.Search]). Hits found
	// by scanning (a very short, very common query) have rank 0.
	Rank float64 `json:"rank"`
	// Cwd and SessionName describe the hit's session.
	Cwd         string `json:"cwd"`
	SessionName string `json:"sessionName,omitempty"`
}

// maxExpansion bounds how many trigrams a query of one or two characters
// is expanded into before a search falls back to scanning.
const maxExpansion = 256

// Search finds entries whose text matches query, best first, using the
// engine's trigram index (SQLite: FTS5, schema.sql says what text is
// indexed and why the trigram tokenizer; PostgreSQL: pg_trgm, migration
// 0004_search.sql): the first [IndexedTextLimit] bytes (1 MiB) of each
// entry's text.
//
// A search is a read: it never fails, nor waits, because another process
// is writing. It first brings the index up to date ([Store.Index]) if it
// can take the write lock at once, and answers from one read transaction
// either way: what the index holds through the index, and the entries
// written since it was last brought up to date (pending, see
// [Store.Index]) by reading their text, which it indexes for the query
// alone ([sessiontree.DatabaseTx.TextIndex]: on SQLite a private
// in-memory FTS5 table), so that the query means the same there. It reads at most the [PendingScanEntries] newest pending
// entries of the sessions written to last, and of those as many as hold
// [PendingScanBytes] of JSON, newest first; the pending entries it leaves
// unread are counted in [SearchResult.Unsearched], and their hits are
// missing. An index catch-up that fails for want of room
// (sessiontree.ErrDiskFull) does not fail the search either.
//
// Ranking: the newest [RankWindow] matching entries, or the newest
// [SearchOptions.Limit] when it is larger (all of them, when fewer
// match), are scored by the query's words and phrases in their text, as
// BM25 does without its inverse document frequency: more occurrences
// score higher, with diminishing returns, and a long text lower than a
// short one with as many; ties go to the newer entry. The bound keeps a
// search over a million entries for a common word to milliseconds; for
// such a word the hits are the best of its most recent matches.
//
// The query language is FTS5's, applied to substrings, on every engine
// (store/query.go parses it into a [sessiontree.MatchQuery], which each
// engine renders in its own terms): words (each found anywhere, inside
// longer words too, ignoring case) are ANDed; "double quotes" make a
// phrase (needed for punctuation: "store.go"); OR, NOT and parentheses
// combine; NEAR(lock wait) finds words close together (each of three
// characters or more); a trailing * makes a prefix. Words of three characters or more are looked up in the index
// directly. A word of one or two characters (日本, 猫, or a short
// identifier) has no trigram of its own: it is expanded into the
// index's trigrams that start with it (on every engine, from the
// index's vocabulary); when it is the whole query and too common for that, the
// store scans the text instead, newest entries first, and ranks nothing.
// With [SearchOptions.Literal] the query is plain words, each searched
// as is.
//
// A query that cannot be parsed, longer than [MaxQueryBytes], or holding
// a byte that is not UTF-8 (in either language), is a
// [*QueryError] (matching [ErrBadQuery]) saying what is wrong and where.
func (s *Store) Search(ctx context.Context, query string, opts SearchOptions) (SearchResult, error) {
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	limit = min(limit, MaxSearchLimit)
	if opts.Marks == [2]string{} {
		opts.Marks = [2]string{"[", "]"}
	}
	parsed, err := parse(query, opts.Literal)
	if err != nil {
		return SearchResult{}, err
	}
	// A database opened read-only cannot catch its index up: the search
	// answers from what the index holds and a scan of what is pending.
	if s.d.ReadOnly() == nil {
		_, err = s.index(ctx, IndexOptions{Progress: opts.IndexProgress}, gate{d: s.d, noWait: true})
	}
	if err != nil && !errors.Is(err, sessiontree.ErrLocked) && !errors.Is(err, sessiontree.ErrDiskFull) {
		return SearchResult{}, fmt.Errorf("search: %w", err)
	}
	var res SearchResult
	err = s.d.View(ctx, func(tx sessiontree.DatabaseTx) error {
		res = SearchResult{}
		sr := searcher{ctx: ctx, tx: tx, query: query, parsed: parsed, opts: opts, limit: limit,
			scope: sessiontree.SearchScope{SessionID: opts.SessionID, Cwd: opts.Cwd}}
		defer sr.close()
		if err := sr.readPending(); err != nil {
			return err
		}
		match, scan, err := sr.prepare()
		if err != nil {
			return err
		}
		if scan != "" {
			// The scan reads every entry's text, pending or not.
			res.Hits, err = sr.scan(scan)
			res.Scanned = sr.pend.scanned + sr.pend.unsearched
			return err
		}
		res.Hits, err = sr.match(match)
		res.Scanned, res.Unsearched = sr.pend.scanned, sr.pend.unsearched
		return err
	})
	if err != nil {
		return SearchResult{}, fmt.Errorf("search: %w", err)
	}
	return res, nil
}

type searcher struct {
	ctx    context.Context
	tx     sessiontree.DatabaseTx
	query  string
	parsed sessiontree.MatchQuery // the query as parsed, before expansion
	opts   SearchOptions
	limit  int
	scope  sessiontree.SearchScope
	pend   pendingScan // the pending entries the search reads itself
}

// parse parses a query, or makes a literal one of its words.
func parse(query string, literal bool) (sessiontree.MatchQuery, error) {
	q := strings.TrimSpace(query)
	var m sessiontree.MatchQuery
	if len(q) > MaxQueryBytes {
		return m, &QueryError{Query: query, Reason: fmt.Sprintf("%d bytes long: at most %d", len(q), MaxQueryBytes)}
	}
	// Bytes that are not UTF-8 match nothing the same way on every
	// engine: FTS5 decodes a sequence cut short as some character (the
	// first two bytes of a three-byte one, E3 89, as É, 0xC9), the
	// PostgreSQL engine folds each byte to U+FFFD (sessiontree.FoldCase),
	// and the indexed text holds none (sessiontree.IndexedText). In
	// either language such a query is refused, as a query the user did
	// not mean (a terminal in another encoding).
	if i := notUTF8(query); i >= 0 {
		return m, &QueryError{Query: query, Reason: fmt.Sprintf("a byte that is not UTF-8, %#02x (at byte %d)", query[i], i)}
	}
	if literal {
		if m = literalQuery(q); len(m.Sub) == 0 && m.Kind == sessiontree.MatchAnd {
			q = "" // nothing but NUL bytes
		}
	}
	if q == "" {
		return m, &QueryError{Query: query, Reason: "empty query"}
	}
	if literal {
		return m, nil
	}
	return parseQuery(query) // as given: its errors name places in it
}

// notUTF8 returns the offset of the first byte of s that is not part of
// a UTF-8 encoded character, or -1.
func notUTF8(s string) int {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// prepare expands the query's short phrases (see [Store.Search]). It
// returns the query to match, or, for a query that is a single short
// phrase too common to expand, the text to scan for.
func (sr *searcher) prepare() (match sessiontree.MatchQuery, scan string, err error) {
	q := sr.parsed
	if q.Kind == sessiontree.MatchPhrase && short(q.Text) {
		text := q.Text
		if utf8.RuneCountInString(text) == 1 && text[0] < utf8.RuneSelf {
			return match, text, nil // one ASCII character is in most texts
		}
		terms, err := sr.expand(text)
		if err != nil {
			return match, "", err
		}
		if len(terms) > maxExpansion {
			return match, text, nil
		}
		return orOf(terms), "", nil
	}
	match, err = sr.expandShort(q)
	return prune(match), "", err
}

// expandShort replaces each short phrase of q, outside NEAR groups, by
// the index's terms that start with it.
func (sr *searcher) expandShort(q sessiontree.MatchQuery) (sessiontree.MatchQuery, error) {
	switch q.Kind {
	case sessiontree.MatchNear:
		return q, nil
	case sessiontree.MatchPhrase:
		if !short(q.Text) {
			return q, nil
		}
		terms, err := sr.expand(q.Text)
		if err != nil {
			return q, err
		}
		if len(terms) > maxExpansion {
			return q, &QueryError{Query: sr.query, Reason: fmt.Sprintf(
				"%q has fewer than 3 characters and is too common to search for inside a larger query; search for it alone or for longer text", q.Text)}
		}
		return orOf(terms), nil
	}
	out := q
	out.Sub = make([]sessiontree.MatchQuery, len(q.Sub))
	for i, sub := range q.Sub {
		var err error
		if out.Sub[i], err = sr.expandShort(sub); err != nil {
			return q, err
		}
	}
	return out, nil
}

// short reports whether a phrase has fewer than three characters: no
// trigram of its own.
func short(text string) bool {
	n := utf8.RuneCountInString(text)
	return n > 0 && n < 3
}

// nothing is the query no text matches, an OR of no phrase: what a
// short phrase without any term becomes (orOf), and prune takes out of
// a query. (A phrase meant to be in no text is in some: U+FFFF, which
// the index reads as U+FFFD, is in the text of binary output.)
var nothing = sessiontree.MatchQuery{Kind: sessiontree.MatchOr}

// isNothing reports whether q is nothing.
func isNothing(q sessiontree.MatchQuery) bool {
	return q.Kind == sessiontree.MatchOr && len(q.Sub) == 0
}

// prune takes nothing out of q: an AND or NEAR holding it is nothing, an
// OR drops it, a NOT of it is its first operand; so q is nothing or has
// none inside, as an engine renders it.
func prune(q sessiontree.MatchQuery) sessiontree.MatchQuery {
	if q.Kind == sessiontree.MatchPhrase || isNothing(q) {
		return q
	}
	var subs []sessiontree.MatchQuery
	for _, sub := range q.Sub {
		if sub = prune(sub); !isNothing(sub) {
			subs = append(subs, sub)
		} else if q.Kind != sessiontree.MatchOr && (q.Kind != sessiontree.MatchNot || len(subs) == 0) {
			return nothing // AND, NEAR, or what a NOT takes from
		}
	}
	switch {
	case len(subs) == 0:
		return nothing
	case len(subs) == 1 && q.Kind != sessiontree.MatchNear:
		return subs[0] // an OR of one; a NOT of nothing
	}
	out := q
	out.Sub = subs
	return out
}

// orOf is the OR of phrases, each a term; nothing without terms.
func orOf(terms []string) sessiontree.MatchQuery {
	if len(terms) == 0 {
		return nothing
	}
	subs := make([]sessiontree.MatchQuery, len(terms))
	for i, t := range terms {
		subs[i] = sessiontree.MatchQuery{Kind: sessiontree.MatchPhrase, Text: t}
	}
	if len(subs) == 1 {
		return subs[0]
	}
	return sessiontree.MatchQuery{Kind: sessiontree.MatchOr, Sub: subs}
}

// maxCaseVariants bounds the spellings of a short phrase expand looks
// up: two letters of at most four cases each (θ, ϑ, Θ, ϴ).
const maxCaseVariants = 16

// expand returns the index's trigrams that start with text ignoring
// case, at most about maxExpansion+1 of them. The index's terms are
// folded ([sessiontree.FoldRune]: µ with μ, ς with σ, İ apart from i),
// so each spelling of text that differs in the case of a letter beyond
// ASCII ([sessiontree.CaseVariants]) is looked up, with its ASCII
// letters lower-cased: the index's terms hold the one it folds to. Every indexed text ends in two newlines, so each
// of its characters starts a trigram.
func (sr *searcher) expand(text string) ([]string, error) {
	variants, ok := sessiontree.CaseVariants(text, maxCaseVariants)
	if !ok {
		variants = []string{text}
	}
	var terms []string
	for _, v := range variants {
		from := asciiLower(v)
		r, size := utf8.DecodeLastRuneInString(from)
		upper := from[:len(from)-size] + string(r+1)
		more, err := sr.tx.ExpandTerms(from, upper, maxExpansion+1)
		if err != nil {
			return nil, fmt.Errorf("expand %q: %w", text, err)
		}
		terms = append(terms, more...)
		if sr.pend.idx != nil {
			if more, err = sr.pend.idx.ExpandTerms(sr.ctx, from, upper, maxExpansion+1); err != nil {
				return nil, fmt.Errorf("expand %q in the pending entries: %w", text, err)
			}
			terms = append(terms, more...)
		}
		slices.Sort(terms)
		if terms = slices.Compact(terms); len(terms) > maxExpansion {
			break
		}
	}
	return terms, nil
}

// asciiLower lower-cases the ASCII letters of s, as the index does.
func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// RankWindow is how many matching entries, newest first, a search
// ranks (see [Store.Search]) at least: a search asked for more hits ranks
// as many as it was asked for.
const RankWindow = 300

// window is how many of the newest matches a search ranks: RankWindow,
// or its limit when that is larger, so that a limit up to MaxSearchLimit
// is met whenever that many entries match.
func (sr *searcher) window() int { return max(RankWindow, sr.limit) }

// match runs a match query. It takes the newest window() matches, which
// FTS5 finds by walking its index in rowid order and stopping there, and
// ranks them by score. FTS5's own bm25() is not used: it counts every
// entry that contains each phrase of the query (for the inverse document
// frequency) before it ranks anything, which for a common word is most
// of the index, seconds on a million entries.
//
// What a query costs is mostly FTS5's walk. A phrase of n characters is n-2
// trigrams that must sit at consecutive positions, and FTS5 steps through
// the posting list of every one of them until it has RankWindow matches:
// for a phrase that few entries contain, that is every posting of every
// trigram, common ones like "or " included (BenchmarkSearch: phrase beside
// phrase-floor, the bare query). Reading and scoring the window's texts
// comes on top, about 20 ms for 300 entries on a million.
func (sr *searcher) match(match sessiontree.MatchQuery) ([]Hit, error) {
	if isNothing(match) {
		return []Hit{}, nil
	}
	keys, err := sr.tx.MatchKeys(sr.scope, match, sr.window())
	if err != nil {
		return nil, sr.queryError(err)
	}
	more, err := sr.pend.match(sr.ctx, match, sr.window())
	if err != nil {
		return nil, sr.queryError(err)
	}
	if len(more) > 0 {
		keys = append(keys, more...)
		slices.SortFunc(keys, func(a, b int64) int { return cmp.Compare(b, a) })
		keys = keys[:min(len(keys), sr.window())]
	}
	if len(keys) == 0 {
		return []Hit{}, nil
	}
	rows, err := sr.tx.Texts(keys)
	if err != nil {
		return nil, fmt.Errorf("read matches: %w", err)
	}
	needles := sr.needles()
	type scored struct {
		pk    int64
		score float64
		body  string
	}
	ranked := make([]scored, len(rows))
	var total float64
	for i, r := range rows {
		ranked[i] = scored{pk: r.Key, body: r.Text}
		total += float64(utf8.RuneCountInString(r.Text))
	}
	avg := total / float64(len(rows))
	for i := range ranked {
		ranked[i].score = score(ranked[i].body, needles, avg)
	}
	sort.Slice(ranked, func(a, b int) bool {
		if ranked[a].score != ranked[b].score {
			return ranked[a].score > ranked[b].score
		}
		return ranked[a].pk > ranked[b].pk
	})
	ranked = ranked[:min(len(ranked), sr.limit)]
	page := make([]int64, len(ranked))
	bodies := make(map[int64]string, len(ranked))
	for i, r := range ranked {
		page[i], bodies[r.pk] = r.pk, r.body
	}
	hits, err := sr.details(page, bodies)
	if err != nil {
		return nil, err
	}
	for i := range hits {
		hits[i].Rank = -ranked[i].score
	}
	return hits, nil
}

// score is a BM25-style score of body for the query's phrases: each
// phrase's count in the text, saturating, normalized by the text's length
// against the average avg (k1 = 1.2, b = 0.75). The phrases are weighted
// alike: the inverse document frequency of BM25 would need every entry
// that contains each phrase counted (see match).
func score(body string, needles []string, avg float64) float64 {
	const k1, b = 1.2, 0.75
	hay := sessiontree.FoldCase(body)
	norm := k1 * (1 - b + b*float64(utf8.RuneCountInString(body))/max(avg, 1))
	var s float64
	for _, n := range needles {
		n = sessiontree.FoldCase(n)
		if n == "" {
			continue
		}
		tf := float64(strings.Count(hay, n))
		s += tf * (k1 + 1) / (tf + norm)
	}
	return s
}

// scan finds text by reading the indexed text itself, newest entries
// first, for a query too short and too common for the index.
func (sr *searcher) scan(text string) ([]Hit, error) {
	keys, err := sr.tx.ScanKeys(sr.scope, text, sr.limit)
	if err != nil {
		return nil, err
	}
	return sr.details(keys, nil)
}

// details reads the hits of keys, in that order, with their snippets
// cut from bodies (read here when nil).
func (sr *searcher) details(keys []int64, bodies map[int64]string) ([]Hit, error) {
	if len(keys) == 0 {
		return []Hit{}, nil
	}
	rows, err := sr.tx.Hits(keys, bodies == nil)
	if err != nil {
		return nil, fmt.Errorf("read hits: %w", err)
	}
	byKey := make(map[int64]Hit, len(keys))
	needles := sr.needles()
	for _, r := range rows {
		body := r.Text
		if bodies != nil {
			body = bodies[r.Key]
		}
		byKey[r.Key] = Hit{SessionID: r.SessionID, EntryID: r.EntryID, Type: r.Type, Role: r.Role, Timestamp: r.Timestamp,
			Cwd: r.Cwd, SessionName: r.SessionName, OnActiveBranch: r.OnActiveBranch,
			Snippet: snippet(body, needles, sr.opts.Marks)}
	}
	hits := make([]Hit, 0, len(keys))
	for _, k := range keys {
		if h, ok := byKey[k]; ok {
			hits = append(hits, h)
		}
	}
	return hits, nil
}

// needles are the texts to mark in snippets and to score: the query's
// phrases, outside NEAR groups.
func (sr *searcher) needles() []string {
	var out []string
	var walk func(q sessiontree.MatchQuery)
	walk = func(q sessiontree.MatchQuery) {
		switch q.Kind {
		case sessiontree.MatchNear:
		case sessiontree.MatchPhrase:
			if q.Text != "" {
				out = append(out, q.Text)
			}
		default:
			for _, sub := range q.Sub {
				walk(sub)
			}
		}
	}
	walk(sr.parsed)
	return out
}

// queryError turns the engine's refusal of a match expression into a
// [*QueryError]; other errors pass.
func (sr *searcher) queryError(err error) error {
	var be *sessiontree.BadQueryError
	if errors.As(err, &be) {
		return &QueryError{Query: sr.query, Reason: be.Reason}
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

// snippetContext is how many characters a snippet shows before its
// first match, snippetLength how many it shows in all.
const (
	snippetContext = 30
	snippetLength  = 120
)

// snippet cuts the part of body around the first match of any needle
// (ignoring case) and marks every match in it.
func snippet(body string, needles []string, marks [2]string) string {
	body = strings.TrimRight(body, "\n")
	merged := matchSpans(body, needles)
	start := 0
	if len(merged) > 0 {
		start = merged[0].i
		for back := 0; start > 0 && back < snippetContext; back++ {
			_, size := utf8.DecodeLastRuneInString(body[:start])
			start -= size
		}
	}
	start = graphemeAt(body, start, -1)
	end := start
	for n := 0; end < len(body) && n < snippetLength; n++ {
		_, size := utf8.DecodeRuneInString(body[end:])
		end += size
	}
	end = graphemeAt(body, end, +1)
	var b strings.Builder
	if start > 0 {
		b.WriteString("…")
	}
	pos := start
	for _, sp := range merged {
		if sp.j <= start || sp.i >= end {
			continue
		}
		i, j := max(sp.i, start), min(sp.j, end)
		b.WriteString(body[pos:i])
		b.WriteString(marks[0])
		b.WriteString(body[i:j])
		b.WriteString(marks[1])
		pos = j
	}
	b.WriteString(body[pos:end])
	if end < len(body) {
		b.WriteString("…")
	}
	return oneLine(b.String())
}

// span is a match's bytes in a text, from i to j.
type span struct{ i, j int }

// matchSpans finds every match of the needles in body, ignoring case,
// as spans of body's bytes in order, overlaps merged.
func matchSpans(body string, needles []string) []span {
	hay := foldText(body)
	var spans []span
	for _, n := range needles {
		n = sessiontree.FoldCase(n)
		for off := 0; n != "" && off < len(hay.text); {
			k := strings.Index(hay.text[off:], n)
			if k < 0 {
				break
			}
			i, j := hay.origAt(off+k), hay.origAt(off+k+len(n))
			spans = append(spans, span{graphemeAt(body, i, -1), graphemeAt(body, j, +1)})
			off += k + len(n)
		}
	}
	sort.Slice(spans, func(a, b int) bool { return spans[a].i < spans[b].i })
	merged := spans[:0]
	for _, sp := range spans {
		if n := len(merged); n > 0 && sp.i <= merged[n-1].j {
			merged[n-1].j = max(merged[n-1].j, sp.j)
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// foldedText is a text case-folded ([sessiontree.FoldCase], as the
// needles are, as the index folds), with what it takes to find the
// text's places in it: a character may fold to more or fewer bytes (the
// Kelvin sign to 1 from 3, Ⱥ to 3 from 2), which moves every place
// after it.
type foldedText struct {
	text string
	// shifts are the ends of the characters whose folded form has
	// another length: the offsets in text and in the text folded.
	shifts []struct{ folded, orig int }
}

func foldText(s string) foldedText {
	f := foldedText{text: sessiontree.FoldCase(s)}
	for i, h := 0, 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		folded := utf8.RuneLen(sessiontree.FoldRune(r)) // an invalid byte folds to U+FFFD
		i, h = i+size, h+folded
		if folded != size {
			f.shifts = append(f.shifts, struct{ folded, orig int }{h, i})
		}
	}
	return f
}

// origAt returns the offset in the original text of the offset h of
// the folded one, a character's start or the end.
func (f foldedText) origAt(h int) int {
	k := sort.Search(len(f.shifts), func(k int) bool { return f.shifts[k].folded > h })
	if k == 0 {
		return h
	}
	return h - f.shifts[k-1].folded + f.shifts[k-1].orig
}

// maxGraphemeExtend bounds how many code points graphemeAt moves over to
// find a place to cut: a letter under a thousand accents is cut after a
// few of them rather than taken whole.
const maxGraphemeExtend = 16

// graphemeAt returns the place nearest to i in s, going back (dir -1)
// or on (+1), where s can be cut without cutting what a reader sees as
// one character: a boundary of Unicode's grapheme clusters (UAX #29,
// uniseg's, as view.Truncate cuts), at most maxGraphemeExtend code
// points away. The clusters are read from that many code points before
// i, taken as a start, so a longer cluster is cut after as many.
func graphemeAt(s string, i, dir int) int {
	if i <= 0 || i >= len(s) {
		return i
	}
	from := i
	for n := 0; n < maxGraphemeExtend && from > 0; n++ {
		_, size := utf8.DecodeLastRuneInString(s[:from])
		from -= size
	}
	limit := i // the farthest place to go, maxGraphemeExtend code points on
	for n := 0; n < maxGraphemeExtend && limit < len(s); n++ {
		_, size := utf8.DecodeRuneInString(s[limit:])
		limit += size
	}
	last, state := from, -1 // the last boundary at or before i
	for at, rest := from, s[from:limit]; rest != ""; {
		var c string
		c, rest, _, state = uniseg.FirstGraphemeClusterInString(rest, state)
		at += len(c)
		switch {
		case at == i:
			return i
		case at < i:
			last = at
		case dir < 0:
			return last
		default:
			return at
		}
	}
	if dir < 0 {
		return last
	}
	return limit
}
