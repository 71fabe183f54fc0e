package pgengine

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
)

// The search primitives on PostgreSQL (migration 4, 0004_search.sql):
// the store parses the query, expands it, ranks and cuts snippets
// (store/search.go); this file renders a sessiontree.MatchQuery into SQL
// over search_text, catches the index up, and reads pending entries'
// text itself.
//
// Keys: an entry's key is session<<32 | seq, as on SQLite, so that
// ordering keys orders sessions by creation and each session's entries
// by append.

// entryKey is the key of entry seq of session.
func entryKey(session, seq int64) int64 { return session<<32 | seq }

// keyParts splits a key into session and seq.
func keyParts(key int64) (session, seq int64) { return key >> 32, key & 0xffffffff }

// indexedText is what search_text holds of an entry:
// sessiontree.IndexedText of its SearchText, and two newlines, as the
// SQLite engine's view gives it; false when the entry has no text.
func indexedText(typ string, raw []byte) (string, bool) {
	text, ok, err := sessiontree.SearchText(typ, raw)
	if err != nil || !ok {
		// Malformed JSON is Check's to report; it has no text to find.
		return "", false
	}
	return sessiontree.IndexedText(text) + "\n\n", true
}

// fold is how matching ignores case: the same on the text
// (search_text.folded) and the query, whatever the database's locale,
// and as the SQLite engine's index does ([sessiontree.FoldCase]).
func fold(s string) string { return sessiontree.FoldCase(s) }

// scopeSQL is a [sessiontree.SearchScope] as SQL conditions on the
// session key column col.
func (st *Tx) scopeSQL(s sessiontree.SearchScope, col string, args *[]any) (string, error) {
	var where []string
	if s.SessionID != "" {
		if !storableText(s.SessionID) {
			return "", &sessiontree.SessionNotFoundError{ID: s.SessionID} // as ResolvePrefix: the server would refuse the text
		}
		var pk int64
		err := st.tx.GetContext(st.ctx, &pk, `SELECT pk FROM sessions WHERE id = $1 AND NOT deleting`, s.SessionID)
		if errors.Is(err, sql.ErrNoRows) {
			return "", &sessiontree.SessionNotFoundError{ID: s.SessionID}
		}
		if err != nil {
			return "", err
		}
		*args = append(*args, pk)
		where = append(where, col+" = $"+strconv.Itoa(len(*args)))
	}
	if !storableText(s.Cwd) {
		return "false", nil
	}
	if s.Cwd != "" {
		*args = append(*args, s.Cwd)
		where = append(where, col+" IN (SELECT pk FROM sessions WHERE cwd = $"+strconv.Itoa(len(*args))+")")
	}
	if len(where) == 0 {
		return "true", nil
	}
	return strings.Join(where, " AND "), nil
}

// likeEscape escapes LIKE's wildcards and its escape character.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// matchSQL renders a match query as a condition on t.folded: a phrase is
// a substring. A NEAR group, whose distance SQL cannot check
// (search_text has no positions: MatchKeys checks the rows it finds), is
// the AND of its phrases, which holds wherever the group does; but
// under a NOT, false, which holds nowhere the group does not, so that
// the NOT keeps the rows holding the phrases far apart for the check.
func matchSQL(q sessiontree.MatchQuery, args *[]any) string {
	return matchCond(q, args, false)
}

// matchCond is matchSQL of q under an odd number of NOTs (negated) or not.
func matchCond(q sessiontree.MatchQuery, args *[]any, negated bool) string {
	switch {
	case q.Kind == sessiontree.MatchPhrase:
		*args = append(*args, "%"+likeEscape(fold(q.Text))+"%")
		return `t.folded LIKE $` + strconv.Itoa(len(*args))
	case q.Kind == sessiontree.MatchNear && negated:
		return "false"
	}
	parts := make([]string, len(q.Sub))
	for i, sub := range q.Sub {
		parts[i] = matchCond(sub, args, negated != (q.Kind == sessiontree.MatchNot && i == 1))
	}
	switch q.Kind {
	case sessiontree.MatchOr:
		return "(" + strings.Join(parts, " OR ") + ")"
	case sessiontree.MatchNot:
		return "(" + parts[0] + " AND NOT " + parts[1] + ")"
	default: // AND, NEAR
		return "(" + strings.Join(parts, " AND ") + ")"
	}
}

// matches reports whether folded text matches q: as matchSQL's condition
// does in SQL, and NEAR as FTS5 reads it on trigrams (see near).
func matches(q sessiontree.MatchQuery, folded string) bool {
	switch q.Kind {
	case sessiontree.MatchPhrase:
		return strings.Contains(folded, fold(q.Text))
	case sessiontree.MatchOr:
		return slices.ContainsFunc(q.Sub, func(s sessiontree.MatchQuery) bool { return matches(s, folded) })
	case sessiontree.MatchNot:
		return matches(q.Sub[0], folded) && !matches(q.Sub[1], folded)
	case sessiontree.MatchNear:
		return near(q, folded)
	default:
		return !slices.ContainsFunc(q.Sub, func(s sessiontree.MatchQuery) bool { return !matches(s, folded) })
	}
}

// hasNear reports whether q holds a NEAR group, which SQL does not check.
func hasNear(q sessiontree.MatchQuery) bool {
	return q.Kind == sessiontree.MatchNear || slices.ContainsFunc(q.Sub, hasNear)
}

// near checks a NEAR group as FTS5 does on the trigram tokenizer, where
// a token starts at every character and a phrase of n characters is n-2
// tokens: the text holds an instance of every phrase such that, with
// last the start of the latest of them, each starts at or after last
// minus its own tokens minus the distance (fts5ExprNearIsMatch). A
// phrase of fewer than three characters has no token and never matches.
func near(q sessiontree.MatchQuery, folded string) bool {
	text := []rune(folded)
	starts := make([][]int, len(q.Sub))
	for i, p := range q.Sub {
		needle := []rune(fold(p.Text))
		if len(needle) < 3 {
			return false
		}
		for j := 0; j+len(needle) <= len(text); j++ {
			if slices.Equal(text[j:j+len(needle)], needle) {
				starts[i] = append(starts[i], j)
			}
		}
		if len(starts[i]) == 0 {
			return false
		}
	}
	for _, candidates := range starts {
		for _, last := range candidates {
			if nearAt(q, starts, last) {
				return true
			}
		}
	}
	return false
}

// nearAt reports whether every phrase has an instance within reach of
// the one starting at last, and none after it.
func nearAt(q sessiontree.MatchQuery, starts [][]int, last int) bool {
	for i, p := range q.Sub {
		lo := last - (utf8.RuneCountInString(p.Text) - 2) - q.Near
		if !slices.ContainsFunc(starts[i], func(s int) bool { return s >= lo && s <= last }) {
			return false
		}
	}
	return true
}

// matchKeysSQL selects the keys of the newest limit rows of search_text
// in scope matching cond.
func matchKeysSQL(scope, cond string, limit int) string {
	return `SELECT t.session << 32 | t.seq FROM search_text t WHERE ` + scope + ` AND ` + cond + `
ORDER BY t.session DESC, t.seq DESC LIMIT ` + strconv.Itoa(limit)
}

// MatchKeys implements [sessiontree.DatabaseTx.MatchKeys]: the trigram
// index picks the candidates, LIKE checks them.
func (st *Tx) MatchKeys(s sessiontree.SearchScope, match sessiontree.MatchQuery, limit int) ([]int64, error) {
	var args []any
	scope, err := st.scopeSQL(s, "t.session", &args)
	if err != nil {
		return nil, err
	}
	cond := matchSQL(match, &args)
	var keys []int64
	if !hasNear(match) {
		err = st.tx.SelectContext(st.ctx, &keys, matchKeysSQL(scope, cond, limit), args...)
		return keys, err
	}
	// SQL reads a NEAR group as the AND of its phrases: check the
	// candidates' text here, newest first, until limit of them match.
	rows, err := st.tx.QueryContext(st.ctx, `SELECT t.session << 32 | t.seq, t.folded FROM search_text t WHERE `+scope+` AND `+cond+`
ORDER BY t.session DESC, t.seq DESC`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for len(keys) < limit && rows.Next() {
		var key int64
		var folded string
		if err := rows.Scan(&key, &folded); err != nil {
			return nil, err
		}
		if matches(match, folded) {
			keys = append(keys, key)
		}
	}
	return keys, rows.Err()
}

// ScanKeys implements [sessiontree.DatabaseTx.ScanKeys]: the indexed
// text through search_text (LIKE over the folded text, as caseLikes
// does on SQLite), the pending entries' text read here.
func (st *Tx) ScanKeys(s sessiontree.SearchScope, text string, limit int) ([]int64, error) {
	var args []any
	scope, err := st.scopeSQL(s, "t.session", &args)
	if err != nil {
		return nil, err
	}
	needle, tail := fold(text), sessiontree.TrigramTail(text)
	args = append(args, "%"+likeEscape(needle)+strings.Repeat("_", tail)+"%")
	var keys []int64
	err = st.tx.SelectContext(st.ctx, &keys, matchKeysSQL(scope, `t.folded LIKE $`+strconv.Itoa(len(args)), limit), args...)
	if err != nil {
		return nil, err
	}
	pend, err := st.pendingEntries(s, 0)
	if err != nil {
		return nil, err
	}
	for _, e := range pend {
		if body, ok := indexedText(e.Type, e.Raw); ok && startsTrigram(fold(body), needle, tail) {
			keys = append(keys, entryKey(e.Session, e.Seq))
		}
	}
	slices.SortFunc(keys, func(a, b int64) int { return cmp.Compare(b, a) })
	return keys[:min(len(keys), limit)], nil
}

// startsTrigram reports whether folded text holds needle followed by
// at least tail characters, as ScanKeys' LIKE pattern finds it.
func startsTrigram(folded, needle string, tail int) bool {
	i := strings.Index(folded, needle)
	if i < 0 {
		return false
	}
	rest := folded[i+len(needle):]
	return utf8.RuneCountInString(rest[:min(len(rest), tail*utf8.UTFMax)]) >= tail
}

// ExpandTerms implements [sessiontree.DatabaseTx.ExpandTerms] over
// search_terms, the trigrams of the indexed text (migration 13), as the
// SQLite engine's does over FTS5's vocabulary: the same terms, so that
// the store expands a short phrase, or finds it too common and scans,
// as it does there.
func (st *Tx) ExpandTerms(from, to string, limit int) ([]string, error) {
	var terms []string
	err := st.tx.SelectContext(st.ctx, &terms, `SELECT term FROM search_terms WHERE term >= $1 AND term < $2
ORDER BY term LIMIT $3`, from, to, limit)
	return terms, err
}

// eachTrigram calls fn with each trigram of folded text, three
// characters from every place: the terms FTS5's trigram tokenizer makes.
func eachTrigram(folded string, fn func(term string)) {
	var last [3]int // the starts of the last three characters
	n := 0
	for i := range folded {
		if n >= 3 {
			fn(folded[last[0]:i])
		}
		last[0], last[1], last[2] = last[1], last[2], i
		n++
	}
	if n >= 3 {
		fn(folded[last[0]:])
	}
}

// trigrams adds the trigrams of folded text to terms.
func trigrams(terms map[string]struct{}, folded string) {
	eachTrigram(folded, func(t string) { terms[t] = struct{}{} })
}

// termCounts counts, for each trigram, the texts holding it: the change
// a write makes to search_terms' counts (see adjustTerms). The zero
// value is ready to use.
type termCounts struct {
	n    map[string]int64
	seen map[string]struct{} // the trigrams of the text being added
}

// add adds delta to the count of each trigram of folded text, once per
// trigram however often the text holds it. A trigram new to c is
// copied, so that c does not keep the text.
func (c *termCounts) add(folded string, delta int64) {
	if c.n == nil {
		c.n, c.seen = map[string]int64{}, map[string]struct{}{}
	}
	clear(c.seen)
	eachTrigram(folded, func(t string) {
		if _, ok := c.seen[t]; ok {
			return
		}
		c.seen[t] = struct{}{}
		if _, ok := c.n[t]; !ok {
			t = strings.Clone(t)
		}
		c.n[t] += delta
	})
}

// pendingEntry is an entry the index does not hold yet.
type pendingEntry struct {
	Session int64  `db:"session"`
	Seq     int64  `db:"seq"`
	Type    string `db:"type"`
	Raw     []byte `db:"raw"`
	Size    int64  `db:"size"`
}

// pendingEntries reads the pending entries in scope, sessions written
// to last first, each newest first; with limit > 0, at most limit of
// them, and their sizes but not their JSON.
func (st *Tx) pendingEntries(s sessiontree.SearchScope, limit int) ([]pendingEntry, error) {
	var args []any
	scope, err := st.scopeSQL(s, "t.session", &args)
	if err != nil {
		return nil, err
	}
	cols, lim := `e.type, e.raw`, ``
	if limit > 0 {
		cols, lim = `e.type, NULL::text AS raw`, ` LIMIT `+strconv.Itoa(limit)
	}
	var out []pendingEntry
	err = st.tx.SelectContext(st.ctx, &out, `SELECT e.session, e.seq, `+cols+`, octet_length(e.raw) AS size
FROM (SELECT pk AS session, indexed_count, updated_at FROM sessions WHERE search_pending AND NOT deleting) t
JOIN entries e ON e.session = t.session AND e.seq > t.indexed_count
WHERE `+scope+` ORDER BY t.updated_at DESC, t.session DESC, e.seq DESC`+lim, args...)
	return out, err
}

// PendingTexts implements [sessiontree.DatabaseTx.PendingTexts].
func (st *Tx) PendingTexts(s sessiontree.SearchScope, maxEntries int, maxBytes int64) (sessiontree.PendingTexts, error) {
	var out sessiontree.PendingTexts
	var args []any
	scope, err := st.scopeSQL(s, "t.pk", &args)
	if err != nil {
		return out, err
	}
	err = st.tx.GetContext(st.ctx, &out.Total, `SELECT coalesce(sum(entry_count - indexed_count), 0) FROM sessions t
WHERE search_pending AND NOT deleting AND `+scope, args...)
	if err != nil || out.Total == 0 {
		return out, err
	}
	looked, err := st.pendingEntries(s, maxEntries)
	if err != nil {
		return out, fmt.Errorf("read pending entries: %w", err)
	}
	var keys []int64
	var bytes int64
	for _, e := range looked {
		if bytes+e.Size <= maxBytes {
			bytes += e.Size
			keys = append(keys, entryKey(e.Session, e.Seq))
		}
	}
	out.Read = int64(len(keys))
	out.Texts, err = st.Texts(keys)
	return out, err
}

// keyRow is an entry's indexed text, or its JSON when it is pending.
type keyRow struct {
	Session int64          `db:"session"`
	Seq     int64          `db:"seq"`
	Type    string         `db:"type"`
	Body    sql.NullString `db:"body"`
	Raw     []byte         `db:"raw"`
}

// text is the row's indexed text, read from its JSON when pending.
func (r keyRow) text() (string, bool) {
	if r.Body.Valid {
		return r.Body.String, true
	}
	return indexedText(r.Type, r.Raw)
}

// qKeys joins entries to a key array ($1).
const qKeys = ` FROM unnest($1::bigint[]) k(key) JOIN entries e ON e.session = k.key >> 32 AND e.seq = k.key & 4294967295
LEFT JOIN search_text t ON t.session = e.session AND t.seq = e.seq`

// Texts implements [sessiontree.DatabaseTx.Texts].
func (st *Tx) Texts(keys []int64) ([]sessiontree.KeyText, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	var rows []keyRow
	err := st.tx.SelectContext(st.ctx, &rows, `SELECT e.session, e.seq, e.type, t.body,
       CASE WHEN t.body IS NULL THEN e.raw END AS raw`+qKeys, keys)
	if err != nil {
		return nil, err
	}
	out := make([]sessiontree.KeyText, 0, len(rows))
	for _, r := range rows {
		if text, ok := r.text(); ok {
			out = append(out, sessiontree.KeyText{Key: entryKey(r.Session, r.Seq), Text: text})
		}
	}
	return out, nil
}

// qRole is a message entry's role, read from its JSON e.raw.
// PostgreSQL's json type refuses an object any string of which holds
// \u0000 (its text holds no NUL) or a lone surrogate's escape (\ud800,
// which JSON.stringify writes of a string cut inside a surrogate pair, as
// a tool's output cut to length may be), so when the JSON has an escape,
// those escapes are made \u0020 first (paired surrogates too): the JSON
// stays valid (a backslash before them stays escaped or not), and only
// the text of strings changes, none of pi's roles.
const qRole = `(CASE WHEN strpos(e.raw, '\u') = 0 THEN e.raw
    ELSE regexp_replace(e.raw, '\\u(0000|[dD][89a-fA-F][0-9a-fA-F]{2})', '\\u0020', 'g') END)::json -> 'message' ->> 'role'`

// Hits implements [sessiontree.DatabaseTx.Hits].
func (st *Tx) Hits(keys []int64, text bool) ([]sessiontree.HitRow, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	var rows []struct {
		keyRow
		SessionID string `db:"session_id"`
		EntryID   string `db:"id"`
		Role      string `db:"role"`
		Timestamp string `db:"timestamp"`
		Cwd       string `db:"cwd"`
		Name      string `db:"name"`
		Active    bool   `db:"active"`
	}
	err := st.tx.SelectContext(st.ctx, &rows, `SELECT e.session, e.seq, e.type, t.body,
       CASE WHEN $2 AND t.body IS NULL THEN e.raw END AS raw,
       s.id AS session_id, e.id, e.timestamp, s.cwd, coalesce(s.name, '') AS name,
       CASE WHEN e.type = 'message' THEN coalesce(`+qRole+`, '') ELSE '' END AS role,
       e.depth <= s.leaf_depth AND EXISTS (SELECT 1 FROM branch b WHERE b.session = e.session AND b.depth = e.depth AND b.seq = e.seq) AS active`+
		qKeys+` JOIN sessions s ON s.pk = e.session`, keys, text)
	if err != nil {
		return nil, err
	}
	out := make([]sessiontree.HitRow, len(rows))
	for i, r := range rows {
		out[i] = sessiontree.HitRow{Key: entryKey(r.Session, r.Seq), SessionID: r.SessionID, EntryID: r.EntryID, Type: r.Type,
			Role: r.Role, Timestamp: r.Timestamp, Cwd: r.Cwd, SessionName: r.Name, OnActiveBranch: r.Active}
		if text {
			out[i].Text, _ = r.text()
		}
	}
	return out, nil
}

// TextIndex implements [sessiontree.DatabaseTx.TextIndex]: the texts
// are few (store.PendingScanEntries), so a match query is checked on
// each in Go, as matchSQL's condition would check it.
func (st *Tx) TextIndex(texts []sessiontree.KeyText) (sessiontree.TextIndex, error) {
	ti := &textIndex{texts: make([]sessiontree.KeyText, len(texts))}
	for i, t := range texts {
		ti.texts[i] = sessiontree.KeyText{Key: t.Key, Text: fold(t.Text)}
	}
	slices.SortFunc(ti.texts, func(a, b sessiontree.KeyText) int { return cmp.Compare(b.Key, a.Key) })
	return ti, nil
}

// textIndex is the folded texts of a [Tx.TextIndex], greatest key
// first, and their trigrams, sorted, once ExpandTerms has needed them.
type textIndex struct {
	texts []sessiontree.KeyText
	terms []string
}

// MatchKeys implements [sessiontree.TextIndex.MatchKeys].
func (ti *textIndex) MatchKeys(ctx context.Context, match sessiontree.MatchQuery, limit int) ([]int64, error) {
	var keys []int64
	for _, t := range ti.texts {
		if len(keys) == limit {
			break
		}
		if matches(match, t.Text) {
			keys = append(keys, t.Key)
		}
	}
	return keys, ctx.Err()
}

// ExpandTerms implements [sessiontree.TextIndex.ExpandTerms] as
// [Tx.ExpandTerms] does, over the trigrams of the texts, collected at
// the first call (a search expands each spelling of each short phrase).
func (ti *textIndex) ExpandTerms(ctx context.Context, from, to string, limit int) ([]string, error) {
	if ti.terms == nil {
		all := map[string]struct{}{}
		for _, t := range ti.texts {
			trigrams(all, t.Text)
		}
		ti.terms = slices.Sorted(maps.Keys(all))
	}
	i, _ := slices.BinarySearch(ti.terms, from)
	j, _ := slices.BinarySearch(ti.terms, to)
	j = max(i, min(j, i+limit))
	return slices.Clone(ti.terms[i:j]), ctx.Err()
}

// Close implements [sessiontree.TextIndex.Close].
func (ti *textIndex) Close() error { return nil }

// IndexBacklog implements [sessiontree.DatabaseTx.IndexBacklog].
func (st *Tx) IndexBacklog() (int64, error) {
	var n int64
	err := st.tx.GetContext(st.ctx, &n, `SELECT coalesce(sum(entry_count - indexed_count), 0) FROM sessions
WHERE search_pending AND NOT deleting`)
	return n, err
}

// qPendingPast lists the sessions pending, each with the count the index
// holds once the spans of after ($1 sessions, $2 last seqs) are written
// too ([sessiontree.IndexedPast]).
const qPendingPast = `SELECT s.pk, s.entry_count, greatest(s.indexed_count, coalesce(a.mark, 0)) AS indexed_count FROM sessions s
    LEFT JOIN (SELECT pk, max(mark) AS mark FROM unnest($1::bigint[], $2::bigint[]) u(pk, mark) GROUP BY pk) a ON a.pk = s.pk
    WHERE s.search_pending AND NOT s.deleting`

// NextIndexChunk implements [sessiontree.DatabaseTx.NextIndexChunk].
// The chunk's Text is a JSON array of [indexedRow].
func (st *Tx) NextIndexChunk(maxEntries, maxBytes int64, after []sessiontree.IndexSpan) (sessiontree.IndexChunk, error) {
	var c sessiontree.IndexChunk
	afterSessions, _, afterTo := spanArrays(after)
	var total int64
	err := st.tx.GetContext(st.ctx, &total, `SELECT coalesce(sum(entry_count - indexed_count), 0) FROM (`+qPendingPast+`) s
WHERE indexed_count < entry_count`, afterSessions, afterTo)
	if err != nil || total == 0 {
		return c, err
	}
	// The first maxEntries pending entries past after, sessions in key
	// order, and their sizes (octet_length reads a toasted value's
	// header only).
	var sizes []pendingEntry
	err = st.tx.SelectContext(st.ctx, &sizes, `SELECT e.session, e.seq, octet_length(e.raw) AS size
FROM (`+qPendingPast+` ORDER BY s.pk) s
CROSS JOIN LATERAL (SELECT session, seq, raw FROM entries WHERE session = s.pk AND seq > s.indexed_count ORDER BY seq LIMIT $3) e
ORDER BY e.session, e.seq LIMIT $3`, afterSessions, afterTo, maxEntries)
	if err != nil {
		return c, fmt.Errorf("entry sizes: %w", err)
	}
	var bytes int64
	for i, e := range sizes {
		if i > 0 && bytes+e.Size > maxBytes {
			break
		}
		bytes += e.Size
		if n := len(c.Spans); n > 0 && c.Spans[n-1].Session == e.Session {
			c.Spans[n-1].To = e.Seq
		} else {
			c.Spans = append(c.Spans, sessiontree.IndexSpan{Session: e.Session, From: e.Seq, To: e.Seq})
		}
		c.Entries++
	}
	c.More = c.Entries < total
	c.Text, err = st.chunkText(c.Spans)
	return c, err
}

// indexedRow is one entry of a chunk's text.
type indexedRow struct {
	Session int64  `json:"s"`
	Seq     int64  `json:"q"`
	Body    string `json:"b"`
}

// chunkText reads the entries of spans and makes their indexed text.
func (st *Tx) chunkText(spans []sessiontree.IndexSpan) ([]byte, error) {
	sessions, from, to := spanArrays(spans)
	var rows []keyRow
	err := st.tx.SelectContext(st.ctx, &rows, `SELECT e.session, e.seq, e.type, e.raw AS raw
FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) r(session, lo, hi)
JOIN entries e ON e.session = r.session AND e.seq BETWEEN r.lo AND r.hi`, sessions, from, to)
	if err != nil {
		return nil, fmt.Errorf("read text: %w", err)
	}
	out := make([]indexedRow, 0, len(rows))
	for _, r := range rows {
		if body, ok := indexedText(r.Type, r.Raw); ok {
			out = append(out, indexedRow{Session: r.Session, Seq: r.Seq, Body: body})
		}
	}
	return json.Marshal(out)
}

// spanArrays gives spans as three arrays: sessions, first and last seq.
func spanArrays(spans []sessiontree.IndexSpan) (sessions, from, to []int64) {
	for _, sp := range spans {
		sessions, from, to = append(sessions, sp.Session), append(from, sp.From), append(to, sp.To)
	}
	return sessions, from, to
}

// WriteIndexChunk implements [sessiontree.DatabaseTx.WriteIndexChunk]:
// it locks the chunk's sessions rows (in key order, as appends lock one),
// checks their marks and moves them.
func (st *Tx) WriteIndexChunk(c sessiontree.IndexChunk) error {
	if len(c.Spans) == 0 {
		return nil
	}
	sessions, from, to := spanArrays(c.Spans)
	var n int
	err := st.tx.GetContext(st.ctx, &n, `SELECT count(*) FROM (SELECT s.pk FROM sessions s
JOIN unnest($1::bigint[], $2::bigint[]) m(pk, mark) ON s.pk = m.pk
WHERE s.indexed_count = m.mark - 1 AND NOT s.deleting ORDER BY s.pk FOR UPDATE OF s) x`, sessions, from)
	if err != nil {
		return err
	}
	if n != len(c.Spans) {
		return fmt.Errorf("index: chunk indexed meanwhile: %w", sessiontree.ErrConflict)
	}
	var rows []indexedRow
	if err := json.Unmarshal(c.Text, &rows); err != nil {
		return fmt.Errorf("index: chunk text: %w", err)
	}
	ss, qs, bodies, folded := make([]int64, len(rows)), make([]int64, len(rows)), make([]string, len(rows)), make([]string, len(rows))
	var terms termCounts
	for i, r := range rows {
		ss[i], qs[i], bodies[i], folded[i] = r.Session, r.Seq, r.Body, fold(r.Body)
		terms.add(folded[i], 1)
	}
	if _, err := st.tx.ExecContext(st.ctx, `INSERT INTO search_text (session, seq, body, folded)
SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[])`, ss, qs, bodies, folded); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	if err := adjustTerms(st.ctx, st.tx, terms); err != nil {
		return fmt.Errorf("index: terms: %w", err)
	}
	_, err = st.tx.ExecContext(st.ctx, `UPDATE sessions s SET indexed_count = m.mark
FROM unnest($1::bigint[], $2::bigint[]) m(pk, mark) WHERE s.pk = m.pk`, sessions, to)
	return err
}

// adjustTerms adds the counts of c to search_terms (migration 15): a
// term new to it is added, one whose count falls to 0 (no text holds it
// any more) deleted. The terms are written in order, so that two writers
// lock the same terms in the same order.
func adjustTerms(ctx context.Context, tx *sqlx.Tx, c termCounts) error {
	terms := slices.Sorted(maps.Keys(c.n))
	if len(terms) == 0 {
		return nil
	}
	counts := make([]int64, len(terms))
	for i, t := range terms {
		counts[i] = c.n[t]
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO search_terms (term, texts)
SELECT u.term, u.n FROM unnest($1::text[], $2::bigint[]) u(term, n) ORDER BY u.term COLLATE "C"
ON CONFLICT (term) DO UPDATE SET texts = search_terms.texts + excluded.texts`, terms, counts)
	if err != nil || !slices.ContainsFunc(counts, func(n int64) bool { return n < 0 }) {
		return err
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM search_terms WHERE term = ANY($1::text[]) AND texts <= 0`, terms)
	return err
}

// dropTerms takes the indexed text of session pk off search_terms'
// counts, before the session's delete deletes the text: the terms no
// other text holds go.
func dropTerms(ctx context.Context, tx *sqlx.Tx, pk int64) error {
	rows, err := tx.QueryContext(ctx, `SELECT folded FROM search_text WHERE session = $1`, pk)
	if err != nil {
		return err
	}
	defer rows.Close()
	var c termCounts
	var folded string
	for rows.Next() {
		if err := rows.Scan(&folded); err != nil {
			return err
		}
		c.add(folded, -1)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return adjustTerms(ctx, tx, c)
}

// termOwners maps each trigram of a session's indexed text to the first
// entry holding it, for Check.
type termOwners map[string]string

// add notes the trigrams of entry id's folded text, each a copy, so
// that the map does not keep the text (Check streams a session's).
func (o termOwners) add(id, folded string) {
	eachTrigram(folded, func(t string) {
		if _, ok := o[t]; !ok {
			o[strings.Clone(t)] = id
		}
	})
}

// termBatch is how many terms checkTerms looks up in one statement.
const termBatch = 10000

// checkTerms reports a trigram of the indexed text search_terms lacks
// (ExpandTerms would miss it: a short query would miss the entry),
// naming the entry holding it.
func (s *Storage) checkTerms(ctx context.Context, owners termOwners) error {
	list := slices.Sorted(maps.Keys(owners))
	for len(list) > 0 {
		batch := list[:min(len(list), termBatch)]
		list = list[len(batch):]
		var missing []string
		err := sqlx.SelectContext(ctx, s.db.reader(ctx), &missing, `SELECT t FROM unnest($1::text[]) t
WHERE NOT EXISTS (SELECT 1 FROM search_terms s WHERE s.term = t) LIMIT 1`, batch)
		if err != nil {
			return storageErr(err)
		}
		if len(missing) > 0 {
			return &sessiontree.CorruptError{EntryID: owners[missing[0]],
				Reason: fmt.Sprintf("the search index's vocabulary lacks the term %q of its text", missing[0])}
		}
	}
	return nil
}
