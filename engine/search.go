package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sessiontree/sessiontree"
)

// The search primitives the store's search is built of (store/search.go
// parses the query, ranks and cuts snippets): FTS5 over the trigrams of
// each entry's text (entries_fts, filled from the search_text view).

// scope is a [sessiontree.SearchScope] as keys: the entries lo..hi, of
// sessions in cwd when it is set.
type scope struct {
	lo, hi int64
	cwd    string
}

// scopeOf resolves a search scope.
func (tx *Tx) scopeOf(s sessiontree.SearchScope) (scope, error) {
	sc := scope{lo: 0, hi: 1<<63 - 1, cwd: s.Cwd}
	if s.SessionID != "" {
		pk, err := tx.sessionKey(s.SessionID)
		if err != nil {
			return sc, err
		}
		sc.lo, sc.hi = entryPK(pk, 0), entryPK(pk, 0xffffffff)
	}
	return sc, nil
}

// MatchKeys implements [sessiontree.DatabaseTx.MatchKeys]: FTS5 walks
// its index in rowid order and stops at limit.
func (tx *Tx) MatchKeys(s sessiontree.SearchScope, match sessiontree.MatchQuery, limit int) ([]int64, error) {
	sc, err := tx.scopeOf(s)
	if err != nil {
		return nil, err
	}
	query := `SELECT rowid FROM entries_fts WHERE entries_fts MATCH ?1 AND rowid BETWEEN ?2 AND ?3`
	params := []any{fts5Query(match), sc.lo, sc.hi}
	if sc.cwd != "" {
		query += ` AND (rowid >> 32) IN (SELECT pk FROM sessions WHERE cwd = ?4)`
		params = append(params, sc.cwd)
	}
	query += ` ORDER BY rowid DESC LIMIT ` + strconv.Itoa(limit)
	var keys []int64
	if err := tx.tx.SelectContext(tx.ctx, &keys, query, params...); err != nil {
		return nil, badQuery(err)
	}
	return keys, nil
}

// ScanKeys implements [sessiontree.DatabaseTx.ScanKeys] with LIKE over
// the search_text view, newest first: one LIKE per case of the text's
// letters beyond ASCII (caseLikes), since LIKE ignores ASCII case only.
func (tx *Tx) ScanKeys(s sessiontree.SearchScope, text string, limit int) ([]int64, error) {
	sc, err := tx.scopeOf(s)
	if err != nil {
		return nil, err
	}
	likes, err := caseLikes(text)
	if err != nil {
		return nil, err
	}
	query := `SELECT t.pk FROM search_text t WHERE t.pk BETWEEN ?1 AND ?2`
	params := []any{sc.lo, sc.hi}
	if sc.cwd != "" {
		query += ` AND (t.pk >> 32) IN (SELECT pk FROM sessions WHERE cwd = ?3)`
		params = append(params, sc.cwd)
	}
	conds := make([]string, len(likes))
	for i, l := range likes {
		params = append(params, l)
		conds[i] = `t.body LIKE ?` + strconv.Itoa(len(params)) + ` ESCAPE '\'`
	}
	query += ` AND (` + strings.Join(conds, " OR ") + `) ORDER BY t.pk DESC LIMIT ` + strconv.Itoa(limit)
	var keys []int64
	if err := tx.tx.SelectContext(tx.ctx, &keys, query, params...); err != nil {
		return nil, err
	}
	return keys, nil
}

// maxCaseLikes bounds the patterns of caseLikes: the store scans for
// one or two characters, at most 16 patterns (Θ, θ, ϑ and ϴ are one
// letter).
const maxCaseLikes = 64

// caseLikes returns the LIKE patterns (ESCAPE '\') that together find
// the texts containing text, ignoring case, followed by as many
// characters as it takes to start a trigram ([sessiontree.TrigramTail]): LIKE ignores the case of
// ASCII letters itself, so there is one pattern per combination of the
// cases of the other letters, and of the Kelvin sign and the long s for
// k and s ([sessiontree.CaseVariants]). A text with
// more than maxCaseLikes combinations is refused.
func caseLikes(text string) ([]string, error) {
	variants, ok := sessiontree.CaseVariants(text, maxCaseLikes)
	if !ok {
		return nil, fmt.Errorf("scan for %q: more than %d combinations of cases", text, maxCaseLikes)
	}
	tail := strings.Repeat("_", sessiontree.TrigramTail(text))
	for i, v := range variants {
		variants[i] = "%" + likeEscape(v) + tail + "%"
	}
	return variants, nil
}

// qExpand reads a vocabulary table (fts5vocab, 'row') by term range.
const qExpand = `SELECT term FROM %s WHERE term >= ? AND term < ? ORDER BY term LIMIT ?`

// ExpandTerms implements [sessiontree.DatabaseTx.ExpandTerms] over
// entries_fts_vocab.
func (tx *Tx) ExpandTerms(from, to string, limit int) ([]string, error) {
	var terms []string
	err := tx.tx.SelectContext(tx.ctx, &terms, fmt.Sprintf(qExpand, "entries_fts_vocab"), from, to, limit)
	return terms, err
}

// keyText is a row of search_text.
type keyText struct {
	PK   int64  `db:"pk"`
	Body string `db:"body"`
}

func keyTexts(rows []keyText) []sessiontree.KeyText {
	out := make([]sessiontree.KeyText, len(rows))
	for i, r := range rows {
		out[i] = sessiontree.KeyText{Key: r.PK, Text: r.Body}
	}
	return out
}

// Texts implements [sessiontree.DatabaseTx.Texts].
func (tx *Tx) Texts(keys []int64) ([]sessiontree.KeyText, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	var rows []keyText
	marks, args := inList(keys)
	if err := tx.tx.SelectContext(tx.ctx, &rows, `SELECT pk, body FROM search_text WHERE pk IN (`+marks+`)`, args...); err != nil {
		return nil, err
	}
	return keyTexts(rows), nil
}

func inList(keys []int64) (string, []any) {
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = k
	}
	marks := strings.Repeat("?,", len(keys))
	return marks[:len(marks)-1], args
}

// Hits implements [sessiontree.DatabaseTx.Hits].
func (tx *Tx) Hits(keys []int64, text bool) ([]sessiontree.HitRow, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	marks, args := inList(keys)
	body := `''`
	if text {
		body = `coalesce((SELECT t.body FROM search_text t WHERE t.pk = e.pk), '')`
	}
	rows, err := tx.tx.QueryContext(tx.ctx, `SELECT e.pk, s.id, e.id, e.type, coalesce(e.role, ''), e.timestamp, s.cwd,
       coalesce(s.name, ''),
       EXISTS (SELECT 1 FROM branch b WHERE b.session = e.session AND b.depth = e.depth AND b.entry = e.pk),
       `+body+`
FROM entries e JOIN sessions s ON s.pk = e.session WHERE e.pk IN (`+marks+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]sessiontree.HitRow, 0, len(keys))
	for rows.Next() {
		var h sessiontree.HitRow
		if err := rows.Scan(&h.Key, &h.SessionID, &h.EntryID, &h.Type, &h.Role, &h.Timestamp, &h.Cwd, &h.SessionName,
			&h.OnActiveBranch, &h.Text); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// PendingTexts implements [sessiontree.DatabaseTx.PendingTexts]. Sizes
// come from the rows' headers (octet_length), not from their JSON.
func (tx *Tx) PendingTexts(s sessiontree.SearchScope, maxEntries int, maxBytes int64) (sessiontree.PendingTexts, error) {
	var out sessiontree.PendingTexts
	sc, err := tx.scopeOf(s)
	if err != nil {
		return out, err
	}
	// CROSS JOIN keeps search_pending, empty when the index is current,
	// the outer loop: every search runs this, and the sessions table is
	// long.
	query := `SELECT s.pk, s.indexed_count, s.entry_count FROM search_pending p CROSS JOIN sessions s ON s.pk = p.session
WHERE p.session BETWEEN ?1 AND ?2 AND s.indexed_count < s.entry_count AND s.deleting = 0`
	params := []any{sc.lo >> 32, sc.hi >> 32}
	if sc.cwd != "" {
		query += ` AND s.cwd = ?3`
		params = append(params, sc.cwd)
	}
	var sessions []pendingSession
	if err := tx.tx.SelectContext(tx.ctx, &sessions, query+` ORDER BY s.updated_at DESC, s.pk DESC`, params...); err != nil {
		return out, fmt.Errorf("read pending sessions: %w", err)
	}
	out.Total = pendingTotal(sessions)
	var keys []int64
	looked, bytes := 0, int64(0)
	for _, ps := range sessions {
		if looked == maxEntries {
			break
		}
		var entries []struct {
			PK   int64 `db:"pk"`
			Size int64 `db:"size"`
		}
		err := tx.tx.SelectContext(tx.ctx, &entries, `SELECT pk, octet_length(raw) AS size FROM entries
WHERE pk BETWEEN ? AND ? ORDER BY pk DESC LIMIT `+strconv.Itoa(maxEntries-looked),
			entryPK(ps.PK, ps.Indexed+1), entryPK(ps.PK, ps.Count))
		if err != nil {
			return out, fmt.Errorf("read pending entries: %w", err)
		}
		looked += len(entries)
		for _, e := range entries {
			if bytes+e.Size <= maxBytes {
				bytes += e.Size
				keys = append(keys, e.PK)
			}
		}
	}
	out.Read = int64(len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	list, err := json.Marshal(keys)
	if err != nil {
		return out, err
	}
	var rows []keyText
	err = tx.tx.SelectContext(tx.ctx, &rows, `SELECT t.pk, t.body FROM json_each(?) k CROSS JOIN search_text t WHERE t.pk = k.value`, string(list))
	if err != nil {
		return out, fmt.Errorf("read pending entries: %w", err)
	}
	out.Texts = keyTexts(rows)
	return out, nil
}

// badQuery turns SQLite's refusal of a MATCH expression into a
// [*sessiontree.BadQueryError]; other errors pass.
func badQuery(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_ERROR {
		reason := se.Error()
		if i := strings.Index(reason, ": "); i >= 0 && strings.HasPrefix(reason, "SQL logic error") {
			reason = reason[i+2:]
		}
		return &sessiontree.BadQueryError{Reason: strings.TrimSuffix(reason, " (1)")}
	}
	return err
}

// textIndex is a scratch FTS5 index in a private in-memory database, made
// as entries_fts is, so that a query, its short phrases and their
// expansion mean there what they mean in the index.
type textIndex struct{ db *sqlx.DB }

// pendingVocab is the vocabulary of the scratch index, as
// entries_fts_vocab is the index's.
const pendingVocab = "pending_fts_vocab"

// TextIndex implements [sessiontree.DatabaseTx.TextIndex].
func (tx *Tx) TextIndex(texts []sessiontree.KeyText) (sessiontree.TextIndex, error) {
	db, err := sqlx.Open("sqlite", ":memory:")
	if err != nil {
		return nil, fmt.Errorf("scratch index: %w", err)
	}
	db.SetMaxOpenConns(1) // one connection: one in-memory database
	if err := fillTextIndex(tx.ctx, db, texts); err != nil {
		db.Close()
		return nil, fmt.Errorf("scratch index: %w", err)
	}
	return textIndex{db: db}, nil
}

func fillTextIndex(ctx context.Context, db *sqlx.DB, texts []sessiontree.KeyText) error {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, q := range []string{
		`CREATE VIRTUAL TABLE pending_fts USING fts5 (body, tokenize = 'trigram')`,
		`CREATE VIRTUAL TABLE ` + pendingVocab + ` USING fts5vocab (pending_fts, 'row')`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	stmt, err := tx.PreparexContext(ctx, `INSERT INTO pending_fts (rowid, body) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, t := range texts {
		if _, err := stmt.ExecContext(ctx, t.Key, t.Text); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// MatchKeys implements [sessiontree.TextIndex.MatchKeys].
func (ti textIndex) MatchKeys(ctx context.Context, match sessiontree.MatchQuery, limit int) ([]int64, error) {
	var keys []int64
	err := ti.db.SelectContext(ctx, &keys, `SELECT rowid FROM pending_fts WHERE pending_fts MATCH ? ORDER BY rowid DESC LIMIT `+
		strconv.Itoa(limit), fts5Query(match))
	if err != nil {
		return nil, badQuery(err)
	}
	return keys, nil
}

// ExpandTerms implements [sessiontree.TextIndex.ExpandTerms].
func (ti textIndex) ExpandTerms(ctx context.Context, from, to string, limit int) ([]string, error) {
	var terms []string
	err := ti.db.SelectContext(ctx, &terms, fmt.Sprintf(qExpand, pendingVocab), from, to, limit)
	return terms, err
}

// Close implements [sessiontree.TextIndex.Close].
func (ti textIndex) Close() error { return ti.db.Close() }
