package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/storetest"
)

// TestSearchDifferential draws small random corpora (sessions with
// branches, text from an alphabet of case pairs beyond ASCII, CJK, emoji,
// combining marks, the query language's own characters and words) and
// random queries (an AST drawn, then written out with the syntax's
// freedoms: bare or quoted, implicit or explicit AND, parentheses), and
// holds every answer to three things: the PostgreSQL engine's answer to
// the SQLite engine's (the same result, hits in the same order with the
// same ranks, snippets and active-branch flags, or the same error), and
// both to a reference matcher, a scan of each entry's search text
// (sessiontree.SearchText, made the text an index holds by
// sessiontree.IndexedText) folded by the store's rule
// (sessiontree.FoldCase), from the README's definition of the language.
// Each corpus is searched twice: with its newest entries pending and
// the index's catch-up refused (as when another process writes: the
// search reads them itself), then caught up. One corpus in three is
// written to PostgreSQL by importing SQLite's sessions, exported.
//
// SESSIONTREE_SEARCH_DIFF=N runs N corpora (the suite runs a few),
// SESSIONTREE_SEARCH_DIFF_SEED=K starts at seed K.
func TestSearchDifferential(t *testing.T) {
	t.Parallel()
	first, n := searchDiffSeeds(t)
	cases := 0
	for seed := first; seed < first+n; seed++ {
		// A subtest each, whose stores close when it ends.
		ok := t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { cases += searchDiffSeed(t, uint64(seed)) })
		if !ok {
			t.Fatalf("seed %d failed; rerun it with SESSIONTREE_SEARCH_DIFF_SEED=%d SESSIONTREE_SEARCH_DIFF=1", seed, seed)
		}
	}
	t.Logf("%d corpora, %d queries compared", n, cases)
}

// searchDiffSeeds returns the first seed and how many corpora to draw.
func searchDiffSeeds(t *testing.T) (first, n int) {
	n = 2
	if storetest.RaceEnabled {
		n = 1
	}
	for _, v := range []struct {
		name string
		to   *int
	}{{"SESSIONTREE_SEARCH_DIFF", &n}, {"SESSIONTREE_SEARCH_DIFF_SEED", &first}} {
		if s := os.Getenv(v.name); s != "" {
			k, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("%s=%q: %v", v.name, s, err)
			}
			*v.to = k
		}
	}
	return first, n
}

// searchDiffSeed draws the corpus and queries of one seed, compares, and
// returns how many queries it ran.
func searchDiffSeed(t *testing.T, seed uint64) int {
	r := rand.New(rand.NewPCG(seed, 0x5ea4c4))
	pg := openPostgresStore(t) // skips without a server
	lite := openStore(t)
	plan := drawCorpus(r)
	cut := len(plan.ops) * (1 + r.IntN(3)) / 4
	var c diffCorpus
	stores := []*store.Store{lite, pg}
	imported := r.IntN(3) == 0 // PostgreSQL's sessions imported from SQLite's, exported
	if imported {
		stores = stores[:1]
	}
	for _, s := range stores {
		c = plan.apply(t, s, 0, cut)
		if _, err := s.Index(context.Background(), store.IndexOptions{}); err != nil {
			t.Fatal(err)
		}
		c = plan.apply(t, s, cut, len(plan.ops))
	}
	if imported {
		var paths []string
		for _, o := range plan.sessions {
			path := filepath.Join(t.TempDir(), o.ID+".jsonl")
			if err := lite.ExportFile(context.Background(), o.ID, path, store.ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, path)
		}
		mustImport(t, pg, paths, store.ImportOptions{})
		c.imported = true
	}
	// The newest entries pending, read by the search itself.
	n := 0
	pending := []*store.Store{store.New(lockedDB{lite.Database()}), store.New(lockedDB{pg.Database()})}
	for range 12 {
		n += compareSearch(t, r, &c, pending, "pending")
	}
	for range 24 {
		n += compareSearch(t, r, &c, []*store.Store{lite, pg}, "indexed")
	}
	return n
}

// lockedDB is a database whose write lock another process holds: a
// search cannot catch its index up, and reads the pending entries itself.
type lockedDB struct{ sessiontree.Database }

func (d lockedDB) TryUpdate(context.Context, func(sessiontree.DatabaseTx) error) error {
	return fmt.Errorf("test: %w", sessiontree.ErrLocked)
}

// The alphabet of the corpora and queries: few characters, so that
// random queries find something, and each a case to get right.
var diffAlphabet = []string{
	"a", "b", "k", "K", "s", "S", "i", "I", "x", "X", "1", "2", " ", " ", " ", ".", "-", "_", "%", `\`, "\n", "\t",
	`"`, "*", "^", "(", ")", ":", "+", ",", "'", "AND", "OR", "NOT", "NEAR", "near", "lock", "wait", "LOCK",
	"σ", "ς", "Σ", "μ", "Μ", "µ", "θ", "ϑ", "Θ", "ϴ", "д", "Д", "ё", "Ё", "ß", "ẞ",
	"İ", "ı", "i\u0307", "\u212a", "ſ", "\u212b", "å", "Å", "é", "É", "e\u0301", "\u0301",
	"日", "本", "語", "猫", "。", "\u3000", "\u00a0", "🙂", "👍🏽", "👨\u200d👩\u200d👧", "\ue000", "\x00",
}

// diffPlan is a drawn corpus: its sessions and the writes that make it.
type diffPlan struct {
	sessions []store.CreateOptions
	ops      []diffOp
}

// diffOp is a write: an entry appended under the leaf, under another
// entry (a branch), or a move of the leaf.
type diffOp struct {
	session int
	draft   sessiontree.Draft
	under   string // AppendUnder this entry ("" for Append)
	leafTo  string // SetLeaf to this entry, instead of an append
}

// diffCorpus is what a plan wrote, as the reference reads it.
type diffCorpus struct {
	entries []diffEntry
	parent  map[string]string // by session/entry key
	leaf    map[string]string // by session id: the current leaf's key
	// imported tells that the engines' indexes caught up at different
	// times: how many pending entries a search read differs.
	imported bool
}

type diffEntry struct {
	key, session, cwd string
	text              string // the search text as indexed: IndexedText of SearchText, two newlines
}

// drawCorpus draws a plan of two or three sessions of a few entries.
func drawCorpus(r *rand.Rand) diffPlan {
	var p diffPlan
	clock := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for i := range 2 + r.IntN(2) {
		p.sessions = append(p.sessions, store.CreateOptions{ID: fmt.Sprintf("s%d", i), Cwd: fmt.Sprintf("/w/%d", r.IntN(2))})
	}
	ids := make([][]string, len(p.sessions))
	for k := range 8 + r.IntN(16) {
		si := r.IntN(len(p.sessions))
		clock = clock.Add(time.Second)
		op := diffOp{session: si}
		switch prior := ids[si]; {
		case len(prior) > 1 && r.IntN(8) == 0:
			op.leafTo = prior[r.IntN(len(prior))]
			p.ops = append(p.ops, op)
			continue
		case len(prior) > 1 && r.IntN(4) == 0:
			op.under = prior[r.IntN(len(prior))]
		}
		id, target := fmt.Sprintf("e%d", k), ""
		if len(ids[si]) > 0 {
			target = ids[si][0]
		}
		ids[si] = append(ids[si], id)
		op.draft = drawDraft(r, id, sessiontree.FormatTime(clock), target)
		p.ops = append(p.ops, op)
	}
	return p
}

// drawDraft draws an entry: a message of each kind pi writes, a custom
// message, a session name, a compaction or branch summary, or a label
// of target (which has no search text).
func drawDraft(r *rand.Rand, id, ts, target string) sessiontree.Draft {
	d := sessiontree.Draft{ID: id, Timestamp: ts, Type: sessiontree.TypeMessage}
	var fields any
	k := r.IntN(9)
	if k >= 6 && target == "" {
		k = 0
	}
	switch k {
	case 0, 1:
		fields = map[string]any{"message": map[string]any{"role": "user", "content": drawText(r), "timestamp": 1}}
	case 2:
		fields = map[string]any{"message": map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "thinking", "thinking": drawText(r)},
			map[string]any{"type": "text", "text": drawText(r)},
			map[string]any{"type": "toolCall", "id": "c", "name": "bash", "arguments": map[string]any{"a": drawText(r), "b": []any{drawText(r), 7}}},
		}, "provider": "p", "model": "m", "timestamp": 2,
			"usage": map[string]any{"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3, "cost": map[string]any{"total": 0.001}}}}
	case 3:
		fields = map[string]any{"message": map[string]any{"role": "bashExecution", "command": drawText(r), "output": drawText(r), "exitCode": 0, "timestamp": 3}}
	case 4:
		d.Type = sessiontree.TypeCustomMessage
		fields = map[string]any{"customType": "note", "content": []any{map[string]any{"type": "text", "text": drawText(r)}}, "display": true}
	case 5:
		d.Type = sessiontree.TypeSessionInfo
		fields = map[string]any{"name": drawText(r)}
	case 7:
		d.Type = sessiontree.TypeCompaction
		fields = map[string]any{"summary": drawText(r), "firstKeptEntryId": target, "tokensBefore": 100}
	case 8:
		d.Type = sessiontree.TypeBranchSummary
		fields = map[string]any{"fromId": target, "summary": drawText(r)}
	default:
		d.Type = sessiontree.TypeLabel
		fields = map[string]any{"targetId": target, "label": drawText(r)}
	}
	raw, err := json.Marshal(fields)
	if err != nil {
		panic(err)
	}
	// U+E000 stands for a lone surrogate's escape, which SearchText
	// decodes as three bytes that are not UTF-8.
	d.Fields = bytes.ReplaceAll(raw, []byte("\ue000"), []byte(`\ud800`))
	return d
}

// drawText draws a text of a few words from the alphabet.
func drawText(r *rand.Rand) string {
	var b strings.Builder
	for w := range 1 + r.IntN(8) {
		if w > 0 {
			b.WriteString(" ")
		}
		for range 1 + r.IntN(4) {
			b.WriteString(diffAlphabet[r.IntN(len(diffAlphabet))])
		}
	}
	return b.String()
}

// apply makes the plan's sessions in s (when from is 0) and writes its
// ops from..to, and returns the corpus as written so far.
func (p diffPlan) apply(t *testing.T, s *store.Store, from, to int) diffCorpus {
	t.Helper()
	ctx := context.Background()
	sessions := make([]sessiontree.DatabaseSession, len(p.sessions))
	for i, o := range p.sessions {
		var err error
		if from == 0 {
			sessions[i], err = s.Create(ctx, o)
		} else {
			sessions[i], err = s.OpenSession(ctx, o.ID)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, op := range p.ops[from:to] {
		st := sessions[op.session]
		var err error
		switch {
		case op.leafTo != "":
			_, err = st.SetLeaf(ctx, op.leafTo, sessiontree.AppendOptions{})
		case op.under != "":
			_, err = st.AppendUnder(ctx, op.under, op.draft, sessiontree.AppendOptions{})
		default:
			_, err = st.Append(ctx, op.draft, sessiontree.AppendOptions{})
		}
		if err != nil {
			t.Fatalf("write %+v: %v", op, err)
		}
	}
	return p.corpus(t, s, sessions)
}

// corpus reads back what the plan wrote: each entry's search text, its
// parent and each session's leaf.
func (p diffPlan) corpus(t *testing.T, s *store.Store, sessions []sessiontree.DatabaseSession) diffCorpus {
	t.Helper()
	c := diffCorpus{parent: map[string]string{}, leaf: map[string]string{}}
	for i, st := range sessions {
		id := p.sessions[i].ID
		for _, e := range logOf(t, st) {
			key := id + "/" + e.ID
			if e.ParentID != "" {
				c.parent[key] = id + "/" + e.ParentID
			}
			text, ok, err := sessiontree.SearchText(string(e.Type), e.Raw)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				c.entries = append(c.entries, diffEntry{key: key, session: id, cwd: p.sessions[i].Cwd, text: sessiontree.IndexedText(text) + "\n\n"})
			}
		}
		if leaf := leafOf(t, st); leaf != "" {
			c.leaf[id] = id + "/" + leaf
		}
	}
	return c
}

// active reports whether key is on its session's active branch.
func (c *diffCorpus) active(session, key string) bool {
	for at := c.leaf[session]; at != ""; at = c.parent[at] {
		if at == key {
			return true
		}
	}
	return false
}

// tri is a reference match: yes, no, or unknown (NEAR, whose distance
// the reference does not measure, may be either).
type tri uint8

const (
	triNo tri = iota
	triYes
	triMaybe
)

func triOf(b bool) tri {
	if b {
		return triYes
	}
	return triNo
}

// refMatch is the README's definition of a match: a phrase is found
// anywhere in the text ignoring case (the store's fold), AND, OR and NOT
// combine, NEAR needs all of its phrases, close together (certainly when
// its distance is as long as the text). folded is the text as indexed,
// folded: ending in two newlines, which let each character of the text
// start a trigram, and which a phrase may end in but not start in.
func refMatch(q sessiontree.MatchQuery, folded string) tri {
	switch q.Kind {
	case sessiontree.MatchPhrase:
		i := strings.Index(folded, sessiontree.FoldCase(q.Text))
		return triOf(i >= 0 && i < len(folded)-2)
	case sessiontree.MatchNot:
		a, b := refMatch(q.Sub[0], folded), refMatch(q.Sub[1], folded)
		switch {
		case a == triNo || b == triYes:
			return triNo
		case a == triYes && b == triNo:
			return triYes
		}
		return triMaybe
	case sessiontree.MatchOr:
		return refAll(q.Sub, folded, triYes)
	}
	out := refAll(q.Sub, folded, triNo) // AND, NEAR
	if q.Kind == sessiontree.MatchNear && out == triYes && q.Near < utf8.RuneCountInString(folded) {
		out = triMaybe
	}
	return out
}

// refAll combines the matches of subs: stop (yes for an OR, no for an
// AND) when one of them is, the other certain answer when all are, or
// unknown.
func refAll(subs []sessiontree.MatchQuery, folded string, stop tri) tri {
	out := triYes + triNo - stop
	for _, s := range subs {
		switch refMatch(s, folded) {
		case stop:
			return stop
		case triMaybe:
			out = triMaybe
		}
	}
	return out
}

// diffQuery is a drawn query: its text, options, and, when drawn from an
// AST, the AST (nil for a query of random characters, which only the
// engines are compared on).
type diffQuery struct {
	text string
	opts store.SearchOptions
	ast  *sessiontree.MatchQuery
}

// compareSearch draws a query, runs it on each store (SQLite's first),
// and compares; it returns 1.
func compareSearch(t *testing.T, r *rand.Rand, c *diffCorpus, stores []*store.Store, stage string) int {
	t.Helper()
	q := drawQuery(r, c)
	type answer struct {
		res store.SearchResult
		err string
	}
	var answers []answer
	for _, s := range stores {
		res, err := s.Search(context.Background(), q.text, q.opts)
		var a answer
		a.res = res
		if c.imported {
			a.res.Scanned = 0
		}
		if err != nil {
			var qe *store.QueryError
			if !errors.As(err, &qe) {
				t.Errorf("%s: Search(%q, %+v) = %v; want hits or a *QueryError", stage, q.text, q.opts, err)
			}
			a.err = err.Error()
		}
		answers = append(answers, a)
	}
	for i, a := range answers[1:] {
		if diff := cmp.Diff(answers[0], a, cmp.AllowUnexported(answer{})); diff != "" {
			t.Errorf("%s: Search(%q, %+v) differs on engine %d (-SQLite +other):\n%s\ncorpus: %q", stage, q.text, q.opts, i+1, diff, c.entries)
		}
	}
	checkReference(t, c, q, answers[0].res.Hits, answers[0].err, stage)
	return 1
}

// checkReference holds an engine's answer to the reference: every hit
// in scope, matching, with its active-branch flag; every entry certain
// to match among the hits; an error only where the query has a phrase
// of fewer than three characters (too common to expand).
func checkReference(t *testing.T, c *diffCorpus, q diffQuery, hits []store.Hit, err string, stage string) {
	t.Helper()
	if q.ast == nil {
		return
	}
	if err != "" {
		if !hasShort(*q.ast) {
			t.Errorf("%s: Search(%q, %+v) = %s; want hits, the query is valid", stage, q.text, q.opts, err)
		}
		return
	}
	want := map[string]tri{}
	for _, e := range c.entries {
		if q.opts.SessionID != "" && e.session != q.opts.SessionID || q.opts.Cwd != "" && e.cwd != q.opts.Cwd {
			continue
		}
		if m := refMatch(*q.ast, sessiontree.FoldCase(e.text)); m != triNo {
			want[e.key] = m
		}
	}
	got := map[string]bool{}
	for _, h := range hits {
		key := h.SessionID + "/" + h.EntryID
		if got[key] {
			t.Errorf("%s: Search(%q, %+v) finds %s twice", stage, q.text, q.opts, key)
		}
		got[key] = true
		if _, ok := want[key]; !ok {
			t.Errorf("%s: Search(%q, %+v) finds %s, whose text %q does not match", stage, q.text, q.opts, key, c.text(key))
		}
		if a := c.active(h.SessionID, key); h.OnActiveBranch != a {
			t.Errorf("%s: Search(%q) hit %s on the active branch: %v; want %v", stage, q.text, key, h.OnActiveBranch, a)
		}
	}
	for key, m := range want {
		if m == triYes && !got[key] && len(hits) < q.opts.Limit {
			t.Errorf("%s: Search(%q, %+v) misses %s, whose text %q matches", stage, q.text, q.opts, key, c.text(key))
		}
	}
}

// text returns the search text of the entry of key.
func (c *diffCorpus) text(key string) string {
	for _, e := range c.entries {
		if e.key == key {
			return e.text
		}
	}
	return ""
}

// hasShort reports whether q has a phrase of fewer than three characters.
func hasShort(q sessiontree.MatchQuery) bool {
	found := false
	q.Phrases(func(p sessiontree.MatchQuery) {
		found = found || utf8.RuneCountInString(p.Text) < 3
	})
	return found
}

// drawQuery draws a query: mostly an AST written out, sometimes literal
// words, sometimes random characters; in a random scope.
func drawQuery(r *rand.Rand, c *diffCorpus) diffQuery {
	var q diffQuery
	q.opts.Limit = store.MaxSearchLimit
	if r.IntN(4) == 0 {
		q.opts.Limit = 1 + r.IntN(4)
		q.opts.Marks = [2]string{"<", ">"}
	}
	switch r.IntN(10) {
	case 0:
		q.opts.SessionID = c.entries[r.IntN(len(c.entries))].session
	case 1:
		q.opts.Cwd = c.entries[r.IntN(len(c.entries))].cwd
	}
	switch k := r.IntN(10); {
	case k == 0:
		var b strings.Builder
		for range 1 + r.IntN(6) {
			if r.IntN(10) == 0 {
				b.WriteString("\xff") // not UTF-8
			}
			b.WriteString(diffAlphabet[r.IntN(len(diffAlphabet))])
		}
		q.text = b.String()
	case k <= 2:
		q.opts.Literal = true
		words := fieldsOf(drawPhrase(r, c) + " " + drawPhrase(r, c))
		subs := make([]sessiontree.MatchQuery, len(words))
		for i, w := range words {
			subs[i] = sessiontree.MatchQuery{Kind: sessiontree.MatchPhrase, Text: w}
		}
		ast := sessiontree.MatchQuery{Kind: sessiontree.MatchAnd, Sub: subs}
		q.text, q.ast = strings.Join(words, " "), &ast
		if len(words) == 0 {
			q.ast = nil // an empty query, refused
		}
	default:
		ast := drawAST(r, c, 2)
		q.text, q.ast = render(r, ast, 0), &ast
	}
	return q
}

// fieldsOf splits a literal query into its words, as the README says:
// at white space and NUL bytes.
func fieldsOf(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == 0 || unicode.IsSpace(r) })
}

// drawAST draws a query of at most depth levels of operators.
func drawAST(r *rand.Rand, c *diffCorpus, depth int) sessiontree.MatchQuery {
	if depth == 0 || r.IntN(5) < 2 {
		return sessiontree.MatchQuery{Kind: sessiontree.MatchPhrase, Text: drawPhrase(r, c), Prefix: r.IntN(6) == 0}
	}
	switch k := r.IntN(4); k {
	case 3:
		near := sessiontree.MatchQuery{Kind: sessiontree.MatchNear, Near: sessiontree.DefaultNear}
		if r.IntN(2) == 0 {
			near.Near = []int{0, 1, 3, 100}[r.IntN(4)]
		}
		for len(near.Sub) < 2+r.IntN(2) {
			if p := drawPhrase(r, c); utf8.RuneCountInString(p) >= 3 {
				near.Sub = append(near.Sub, sessiontree.MatchQuery{Kind: sessiontree.MatchPhrase, Text: p, Prefix: r.IntN(6) == 0})
			}
		}
		return near
	default:
		kind := []sessiontree.MatchKind{sessiontree.MatchAnd, sessiontree.MatchOr, sessiontree.MatchNot}[k]
		n := 2
		if kind != sessiontree.MatchNot {
			n += r.IntN(2)
		}
		q := sessiontree.MatchQuery{Kind: kind}
		for range n {
			q.Sub = append(q.Sub, drawAST(r, c, depth-1))
		}
		return q
	}
}

// drawPhrase draws a phrase of one to six characters without NUL: part
// of a text of the corpus, some letters in another case, or characters
// of the alphabet.
func drawPhrase(r *rand.Rand, c *diffCorpus) string {
	for {
		var rs []rune
		if r.IntN(3) > 0 && len(c.entries) > 0 {
			text := []rune(c.entries[r.IntN(len(c.entries))].text)
			text = text[:len(text)-2] // not the two newlines the index adds
			if len(text) == 0 {
				continue // only bytes that are not UTF-8, left out
			}
			i := r.IntN(len(text))
			rs = text[i:min(len(text), i+1+r.IntN(6))]
			for j := range rs {
				if r.IntN(3) == 0 {
					rs[j] = unicode.SimpleFold(rs[j])
				}
			}
		} else {
			rs = []rune(drawText(r))
			rs = rs[:min(len(rs), 1+r.IntN(6))]
		}
		s := strings.ReplaceAll(string(rs), "\x00", "")
		if s != "" {
			return s
		}
	}
}

// render writes a query in the query language, taking the syntax's
// freedoms at random. level is what may hold it without parentheses:
// 0 anything, 1 an AND's operand (not an OR), 2 a NOT's operand (a
// phrase or NEAR; a NOT on the left).
func render(r *rand.Rand, q sessiontree.MatchQuery, level int) string {
	var s string
	need := 0 // the level q needs
	switch q.Kind {
	case sessiontree.MatchPhrase:
		s = renderPhrase(r, q)
		need = 3
	case sessiontree.MatchNear:
		parts := make([]string, len(q.Sub))
		for i, p := range q.Sub {
			parts[i] = renderPhrase(r, p)
		}
		s = "NEAR" + []string{"(", " ("}[r.IntN(2)] + strings.Join(parts, " ")
		if q.Near != sessiontree.DefaultNear || r.IntN(3) == 0 {
			s += ", " + strconv.Itoa(q.Near)
		}
		s += ")"
		need = 3
	case sessiontree.MatchNot:
		s = render(r, q.Sub[0], 2) + " NOT " + render(r, q.Sub[1], 3)
		need = 2
	case sessiontree.MatchAnd:
		parts := make([]string, len(q.Sub))
		for i, sub := range q.Sub {
			parts[i] = render(r, sub, 1)
		}
		s = strings.Join(parts, []string{" ", " AND "}[r.IntN(2)])
		need = 1
	case sessiontree.MatchOr:
		parts := make([]string, len(q.Sub))
		for i, sub := range q.Sub {
			parts[i] = render(r, sub, 1)
		}
		s = strings.Join(parts, " OR ")
	}
	if need < level || r.IntN(8) == 0 {
		return "(" + s + ")"
	}
	return s
}

// renderPhrase writes a phrase bare when it can be, or quoted.
func renderPhrase(r *rand.Rand, p sessiontree.MatchQuery) string {
	s := `"` + strings.ReplaceAll(p.Text, `"`, `""`) + `"`
	if canBeBare(p.Text) && r.IntN(2) == 0 {
		s = p.Text
	}
	if p.Prefix {
		s += "*"
	}
	return s
}

// canBeBare reports whether a phrase can be written as a bareword: FTS5's
// bareword characters only (any beyond ASCII), no keyword, and no white
// space at either end, which the query loses.
func canBeBare(text string) bool {
	switch text {
	case "AND", "OR", "NOT", "NEAR":
		return false
	}
	first, _ := utf8.DecodeRuneInString(text)
	last, _ := utf8.DecodeLastRuneInString(text)
	if unicode.IsSpace(first) || unicode.IsSpace(last) {
		return false
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		if !(c >= 0x80 || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
