package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree/engine"
)

// IndexedTextLimit is how much of an entry's text the search index holds:
// its first 1 MiB, in bytes of UTF-8 (the search_text view, migration 10,
// computed by [engine.SearchText] since migration 13; a cut inside a
// character keeps that character's first bytes). The entry is stored
// whole, and read whole; a search does not find text beyond the limit,
// and its snippets and ranking read no further.
const IndexedTextLimit = engine.SearchTextLimit

// Bounds of what a search reads of the entries not yet in the index
// ([Store.Search]): at most PendingScanEntries of them, newest first, and
// of those as many as hold PendingScanBytes of JSON. Indexing that much
// text for the query costs a search about a tenth of a second at most.
const (
	PendingScanEntries = 1000
	PendingScanBytes   = 2 << 20
)

// pendingVocab is the vocabulary of the scratch index, as
// entries_fts_vocab is the index's.
const pendingVocab = "pending_fts_vocab"

// pendingScan is what a search reads of the entries not yet in the index:
// their text, indexed for the search alone in a private in-memory
// database by an FTS5 table made as entries_fts is, so that a query, its
// short phrases and their expansion mean there what they mean in the
// index. db is nil when the search reads no pending entry.
type pendingScan struct {
	db         *sqlx.DB
	scanned    int64 // pending entries read
	unsearched int64 // pending entries left unread (the bounds)
}

// pendingEntry is one pending entry a search considers.
type pendingEntry struct {
	PK   int64 `db:"pk"`
	Size int64 `db:"size"`
}

// readPending reads the pending entries the search takes, in its read
// transaction, and indexes their text in the scratch index.
func (sr *searcher) readPending() error {
	keys, total, err := sr.pendingKeys()
	if err != nil || len(keys) == 0 {
		sr.pend.unsearched = total
		return err
	}
	sr.pend.scanned, sr.pend.unsearched = int64(len(keys)), total-int64(len(keys))
	list, err := json.Marshal(keys)
	if err != nil {
		return err
	}
	var rows []struct {
		PK   int64  `db:"pk"`
		Body string `db:"body"`
	}
	err = sr.tx.SelectContext(sr.ctx, &rows, `SELECT t.pk, t.body FROM json_each(?) k CROSS JOIN search_text t WHERE t.pk = k.value`, string(list))
	if err != nil {
		return fmt.Errorf("read pending entries: %w", err)
	}
	db, err := sqlx.Open("sqlite", ":memory:")
	if err != nil {
		return fmt.Errorf("scratch index: %w", err)
	}
	db.SetMaxOpenConns(1) // one connection: one in-memory database
	sr.pend.db = db
	tx, err := db.BeginTxx(sr.ctx, nil)
	if err != nil {
		return fmt.Errorf("scratch index: %w", err)
	}
	defer tx.Rollback()
	for _, q := range []string{
		`CREATE VIRTUAL TABLE pending_fts USING fts5 (body, tokenize = 'trigram')`,
		`CREATE VIRTUAL TABLE ` + pendingVocab + ` USING fts5vocab (pending_fts, 'row')`,
	} {
		if _, err := tx.ExecContext(sr.ctx, q); err != nil {
			return fmt.Errorf("scratch index: %w", err)
		}
	}
	stmt, err := tx.PreparexContext(sr.ctx, `INSERT INTO pending_fts (rowid, body) VALUES (?, ?)`)
	if err != nil {
		return fmt.Errorf("scratch index: %w", err)
	}
	defer stmt.Close()
	for _, r := range rows {
		if _, err := stmt.ExecContext(sr.ctx, r.PK, r.Body); err != nil {
			return fmt.Errorf("scratch index: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("scratch index: %w", err)
	}
	return nil
}

// pendingKeys picks the pending entries within the search's filters to
// read: of the sessions written to last first, each session's newest
// first, at most PendingScanEntries looked at, those whose JSON still
// fits in PendingScanBytes taken. total counts every pending entry within
// the filters. Sizes come from the rows' headers (octet_length), not from
// their JSON.
func (sr *searcher) pendingKeys() (keys []int64, total int64, err error) {
	// CROSS JOIN keeps search_pending, empty when the index is current,
	// the outer loop: every search runs this, and the sessions table is
	// long.
	query := `SELECT s.pk, s.indexed_count, s.entry_count FROM search_pending p CROSS JOIN sessions s ON s.pk = p.session
WHERE p.session BETWEEN ?1 AND ?2 AND s.indexed_count < s.entry_count AND s.deleting = 0`
	params := []any{sr.lo >> 32, sr.hi >> 32}
	if sr.opts.Cwd != "" {
		query += ` AND s.cwd = ?3`
		params = append(params, sr.opts.Cwd)
	}
	var sessions []pendingSession
	if err := sr.tx.SelectContext(sr.ctx, &sessions, query+` ORDER BY s.updated_at DESC, s.pk DESC`, params...); err != nil {
		return nil, 0, fmt.Errorf("read pending sessions: %w", err)
	}
	looked, bytes := 0, int64(0)
	for _, ps := range sessions {
		if looked == PendingScanEntries {
			break
		}
		var entries []pendingEntry
		err := sr.tx.SelectContext(sr.ctx, &entries, `SELECT pk, octet_length(raw) AS size FROM entries
WHERE pk BETWEEN ? AND ? ORDER BY pk DESC LIMIT `+strconv.Itoa(PendingScanEntries-looked),
			ps.PK<<32|(ps.Indexed+1), ps.PK<<32|ps.Count)
		if err != nil {
			return nil, 0, fmt.Errorf("read pending entries: %w", err)
		}
		looked += len(entries)
		for _, e := range entries {
			if bytes+e.Size <= PendingScanBytes {
				bytes += e.Size
				keys = append(keys, e.PK)
			}
		}
	}
	return keys, pendingTotal(sessions), nil
}

// match runs an FTS5 query over the pending entries read, newest first,
// up to RankWindow of them, as searcher.match does over the index.
func (p *pendingScan) match(ctx context.Context, match string) ([]int64, error) {
	if p.db == nil {
		return nil, nil
	}
	var keys []int64
	err := p.db.SelectContext(ctx, &keys, `SELECT rowid FROM pending_fts WHERE pending_fts MATCH ? ORDER BY rowid DESC LIMIT `+
		strconv.Itoa(RankWindow), match)
	return keys, err
}

// close drops the scratch index.
func (sr *searcher) close() {
	if sr.pend.db != nil {
		sr.pend.db.Close()
	}
}
