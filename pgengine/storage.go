package pgengine

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
)

var (
	_ sessiontree.Storage       = (*Storage)(nil)
	_ sessiontree.StateReader   = (*Storage)(nil)
	_ sessiontree.BatchAppender = (*Storage)(nil)
)

// Storage is one session of a [DB]. It is safe for concurrent use, also
// with other processes writing the same session (see the package doc).
type Storage struct {
	db     *DB
	pk     int64
	meta   sessiontree.SessionMeta // the header never changes
	closed atomic.Bool
	// claim is the writer claim this Storage writes under (claim.go),
	// nil for one opened without a claim.
	claim *sessiontree.ClaimToken
	// rows is the session's row as the last pipelined write committed it
	// (rowcache.go).
	rows rowCache
}

// ID returns the session id.
func (s *Storage) ID() string { return s.meta.ID }

// DB returns the database the session belongs to.
func (s *Storage) DB() *DB { return s.db }

// check returns ErrClosed once s or its database is closed.
func (s *Storage) check(ctx context.Context) error {
	if s.closed.Load() {
		return sessiontree.ErrClosed
	}
	return s.db.check(ctx)
}

// Close closes the session; the database stays open.
func (s *Storage) Close() error {
	s.closed.Store(true)
	return nil
}

// Meta returns the session's header.
func (s *Storage) Meta(ctx context.Context) (sessiontree.SessionMeta, error) {
	if err := s.check(ctx); err != nil {
		return sessiontree.SessionMeta{}, err
	}
	return s.meta, nil
}

// get reads one value of the session's row with a single statement.
func (s *Storage) get(ctx context.Context, op string, dest any, query string, args ...any) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	err := s.db.read(ctx, func(q sqlx.ExtContext) error {
		return sqlx.GetContext(ctx, q, dest, query, append([]any{s.pk}, args...)...)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return &SessionNotFoundError{ID: s.meta.ID}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", op, storageErr(err))
	}
	return nil
}

// Leaf returns the current leaf id, "" when it is null.
func (s *Storage) Leaf(ctx context.Context) (string, error) {
	var leaf sql.NullString
	err := s.get(ctx, "leaf", &leaf, `SELECT leaf_id FROM sessions WHERE pk = $1`)
	return leaf.String, err
}

// Name returns the session's name, "" when it has none.
func (s *Storage) Name(ctx context.Context) (string, error) {
	var name sql.NullString
	err := s.get(ctx, "name", &name, `SELECT name FROM sessions WHERE pk = $1`)
	return name.String, err
}

// Label returns the current label of entry id, "" when it has none.
func (s *Storage) Label(ctx context.Context, id string) (string, error) {
	if !storableText(id) {
		return "", s.check(ctx) // no entry has the id, so no label targets it
	}
	var label string
	err := s.get(ctx, "label", &label, `SELECT label FROM labels WHERE session = $1 AND target_id = $2`, id)
	if errors.Is(err, sessiontree.ErrNotFound) {
		return "", nil
	}
	return label, err
}

// Labels returns every current label by target id.
func (s *Storage) Labels(ctx context.Context) (map[string]string, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	var rows []struct {
		Target string `db:"target_id"`
		Label  string `db:"label"`
	}
	err := s.db.read(ctx, func(q sqlx.ExtContext) error {
		return sqlx.SelectContext(ctx, q, &rows, `SELECT target_id, label FROM labels WHERE session = $1`, s.pk)
	})
	if err != nil {
		return nil, fmt.Errorf("labels: %w", storageErr(err))
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.Target] = r.Label
	}
	return out, nil
}

// Stats returns the counters and usage totals kept in the session's row.
func (s *Storage) Stats(ctx context.Context) (sessiontree.Stats, error) {
	var c counters
	if err := s.get(ctx, "stats", &c, `SELECT `+countersColumns+` FROM sessions WHERE pk = $1`); err != nil {
		return sessiontree.Stats{}, err
	}
	t, err := c.tally()
	if err != nil {
		return sessiontree.Stats{}, err
	}
	return t.Stats(), nil
}

// NewEntryID returns an id the session does not use.
func (s *Storage) NewEntryID(ctx context.Context) (string, error) {
	if err := s.check(ctx); err != nil {
		return "", err
	}
	return newEntryID(ctx, s.db.db, s.pk)
}

// newEntryID picks an unused id through q (a transaction when writing).
// A failed look-up counts the id as free: the insert then fails on it.
func newEntryID(ctx context.Context, q sqlx.QueryerContext, session int64) (string, error) {
	var lookErr error
	id := sessiontree.NewEntryID(func(id string) bool {
		var n int
		lookErr = sqlx.GetContext(ctx, q, &n, `SELECT count(*) FROM entries WHERE session = $1 AND id = $2`, session, id)
		return lookErr == nil && n > 0
	})
	if lookErr != nil {
		return "", fmt.Errorf("new entry id: %w", storageErr(lookErr))
	}
	return id, nil
}

// row is an entry as the reads select it (rowCols).
type row struct {
	Seq int64         `db:"seq"`
	ID  string        `db:"id"`
	Raw []byte        `db:"raw"`
	Sum sql.NullInt64 `db:"checksum"`
}

// rowCols are the columns of a row, of the entries table as e.
const rowCols = `e.seq, e.id, e.raw, e.checksum`

// entry decodes a stored row; JSON that does not match its checksum
// (migration 2), or does not read as an entry, is damage.
func (r row) entry() (sessiontree.Entry, error) {
	if err := sessiontree.VerifyChecksum(r.ID, r.Raw, r.Sum); err != nil {
		return sessiontree.Entry{}, err
	}
	e, err := sessiontree.DecodeEntryOwned(r.Raw)
	if err != nil {
		return sessiontree.Entry{}, &sessiontree.CorruptError{EntryID: r.ID, Reason: fmt.Sprintf("stored JSON (seq %d): %v", r.Seq, err)}
	}
	e.Seq = r.Seq
	return e, nil
}

func entriesOf(rows []row) ([]sessiontree.Entry, error) {
	out := make([]sessiontree.Entry, len(rows))
	for i, r := range rows {
		e, err := r.entry()
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// selectEntries runs a query of rows (rowCols) with the session as $1.
func (s *Storage) selectEntries(ctx context.Context, op, query string, args ...any) ([]sessiontree.Entry, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	var rows []row
	err := s.db.read(ctx, func(q sqlx.ExtContext) error {
		return sqlx.SelectContext(ctx, q, &rows, query, append([]any{s.pk}, args...)...)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, storageErr(err))
	}
	return entriesOf(rows)
}

// storableText reports whether s, a key looked up (a session or entry
// id, a working directory), is text this engine may have stored: valid
// UTF-8 without a NUL, the rule [sessiontree.CheckSessionMeta] holds a
// header's fields to and storable an entry. PostgreSQL's text holds
// nothing else, and the server refuses such a parameter with an error
// that would read as a storage failure, so a look-up of one finds
// nothing without asking it, as on SQLite.
func storableText(s string) bool { return sessiontree.StorableSessionID(s) }

// Entry returns one entry by id.
func (s *Storage) Entry(ctx context.Context, id string) (sessiontree.Entry, error) {
	if !storableText(id) {
		return sessiontree.Entry{}, cmp.Or(s.check(ctx), error(&sessiontree.EntryNotFoundError{ID: id}))
	}
	es, err := s.selectEntries(ctx, "entry "+id, `SELECT `+rowCols+` FROM entries e WHERE session = $1 AND id = $2`, id)
	if err != nil {
		return sessiontree.Entry{}, err
	}
	if len(es) == 0 {
		return sessiontree.Entry{}, &sessiontree.EntryNotFoundError{ID: id}
	}
	return es[0], nil
}

// EntriesByType returns every entry of type t in append order.
func (s *Storage) EntriesByType(ctx context.Context, t sessiontree.EntryType) ([]sessiontree.Entry, error) {
	return s.selectEntries(ctx, "entries of type "+string(t),
		`SELECT `+rowCols+` FROM entries e WHERE session = $1 AND type = $2 ORDER BY seq`, string(t))
}

// Log returns up to limit entries with Seq > after, in append order;
// limit <= 0 means no limit.
func (s *Storage) Log(ctx context.Context, after int64, limit int) ([]sessiontree.Entry, error) {
	var lim any // NULL: no limit
	if limit > 0 {
		lim = limit
	}
	return s.selectEntries(ctx, "log", `SELECT `+rowCols+` FROM entries e WHERE session = $1 AND seq > $2 ORDER BY seq LIMIT $3`, after, lim)
}

// State returns the state at entry from: the at most three entries its
// pointers name, applied with sessiontree.State.Apply. A pointer that
// names no entry at or before from that sets its setting is damage: a
// *sessiontree.CorruptError, not the state of whatever it names.
func (s *Storage) State(ctx context.Context, from string) (sessiontree.State, error) {
	st := sessiontree.DefaultState()
	if err := s.check(ctx); err != nil || from == "" {
		return st, err
	}
	if !storableText(from) {
		return st, &sessiontree.EntryNotFoundError{ID: from}
	}
	var sr stateRows
	err := s.db.read(ctx, func(q sqlx.ExtContext) error {
		return q.QueryRowxContext(ctx, stateQuery, s.pk, from).Scan(sr.dest()...)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return st, &sessiontree.EntryNotFoundError{ID: from}
	}
	if err != nil {
		return st, fmt.Errorf("state at %s: %w", from, storageErr(err))
	}
	for i, se := range sr.entries() {
		if !se.ptr.Valid {
			continue
		}
		e, err := se.verify(sessiontree.StateSetting(i), from, sr.seq)
		if err != nil {
			return st, err
		}
		st.Apply(e)
	}
	return st, nil
}

// stateQuery reads entry $2 of session $1: its seq and its three state
// pointers, each with the entry it names (NULL when there is none), for
// State to check that the entry is there and sets the state.
const stateQuery = `SELECT e.seq, e.thinking_seq, t.id, t.raw, t.checksum, e.model_seq, m.id, m.raw, m.checksum,
	e.tools_seq, o.id, o.raw, o.checksum FROM entries e
	LEFT JOIN entries t ON t.session = e.session AND t.seq = e.thinking_seq
	LEFT JOIN entries m ON m.session = e.session AND m.seq = e.model_seq
	LEFT JOIN entries o ON o.session = e.session AND o.seq = e.tools_seq
	WHERE e.session = $1 AND e.id = $2`

// stateRows is what stateQuery reads of an entry: its seq and its three
// state entries.
type stateRows struct {
	seq                    int64
	thinking, model, tools stateEntry
}

// entries are sr's state entries, in the order of sessiontree.StateSetting.
func (sr *stateRows) entries() []*stateEntry {
	return []*stateEntry{&sr.thinking, &sr.model, &sr.tools}
}

// dest is where stateQuery's columns go.
func (sr *stateRows) dest() []any {
	dest := []any{&sr.seq}
	for _, se := range sr.entries() {
		dest = append(dest, &se.ptr, &se.id, &se.raw, &se.sum)
	}
	return dest
}

// stateEntry is one of the state pointers stateQuery reads: the seq the
// entry holds (NULL when none) and the JSON of the entry it names (nil
// when there is none).
type stateEntry struct {
	ptr sql.NullInt64
	id  sql.NullString
	raw []byte
	sum sql.NullInt64
}

// verify returns the entry se names, or a *sessiontree.CorruptError
// naming entry from, seq seq, when the pointer for setting s names no
// entry at or before from that may set s (sessiontree.MaySet).
func (se *stateEntry) verify(s sessiontree.StateSetting, from string, seq int64) (sessiontree.Entry, error) {
	var e sessiontree.Entry
	if se.raw != nil {
		var err error
		if e, err = (row{Seq: se.ptr.Int64, ID: se.id.String, Raw: se.raw, Sum: se.sum}).entry(); err != nil {
			return e, err
		}
	}
	if se.raw == nil || se.ptr.Int64 > seq || !sessiontree.MaySet(s, e) {
		return e, &sessiontree.CorruptError{EntryID: from,
			Reason: fmt.Sprintf("state pointer to seq %d: no entry at or before it that sets the state", se.ptr.Int64)}
	}
	return e, nil
}

// counters are the sessions row's Stats columns.
type counters struct {
	Entries           int64   `db:"entry_count"`
	Messages          int64   `db:"message_count"`
	UserMessages      int64   `db:"user_messages"`
	AssistantMessages int64   `db:"assistant_messages"`
	ToolResults       int64   `db:"tool_results"`
	ToolCalls         int64   `db:"tool_calls"`
	Input             int64   `db:"input_tokens"`
	Output            int64   `db:"output_tokens"`
	CacheRead         int64   `db:"cache_read_tokens"`
	CacheWrite        int64   `db:"cache_write_tokens"`
	Cost              float64 `db:"cost"`
	Buckets           string  `db:"usage_buckets"`
}

const countersColumns = `entry_count, message_count, user_messages, assistant_messages, tool_results, tool_calls,
	input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost, usage_buckets`

// tally resumes the session's sessiontree.Tally from the row.
func (c counters) tally() (sessiontree.Tally, error) {
	var buckets []sessiontree.UsageBucket
	if err := json.Unmarshal([]byte(c.Buckets), &buckets); err != nil {
		return sessiontree.Tally{}, &sessiontree.CorruptError{Reason: "usage_buckets: " + err.Error()}
	}
	s := sessiontree.Stats{
		Entries: c.Entries, TotalMessages: c.Messages, UserMessages: c.UserMessages,
		AssistantMessages: c.AssistantMessages, ToolResults: c.ToolResults, ToolCalls: c.ToolCalls,
		Tokens: sessiontree.TokenStats{Input: c.Input, Output: c.Output, CacheRead: c.CacheRead, CacheWrite: c.CacheWrite,
			Total: c.Input + c.Output + c.CacheRead + c.CacheWrite},
		Cost: c.Cost,
	}
	return sessiontree.ResumeTally(s, buckets), nil
}

// countersOf is the row's columns for a tally.
func countersOf(t *sessiontree.Tally) (counters, error) {
	s := t.Stats()
	b, err := json.Marshal(t.Buckets())
	if err != nil {
		return counters{}, err
	}
	if string(b) == "null" {
		b = []byte("[]")
	}
	return counters{Entries: s.Entries, Messages: s.TotalMessages, UserMessages: s.UserMessages,
		AssistantMessages: s.AssistantMessages, ToolResults: s.ToolResults, ToolCalls: s.ToolCalls,
		Input: s.Tokens.Input, Output: s.Tokens.Output, CacheRead: s.Tokens.CacheRead, CacheWrite: s.Tokens.CacheWrite,
		Cost: s.Cost, Buckets: string(b)}, nil
}
