package store

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// Options configure [Open]. The zero value works.
type Options struct {
	// Engine configures the database underneath (durability, busy
	// timeout, readers, clock).
	Engine engine.Options
}

// Store is a database of many sessions: the SQLite engine plus what an
// application needs around it (listing, forking, importing and exporting
// pi's files, full-text search). A Store is safe for concurrent use, also
// with other processes using the same file; see package engine for how
// writers serialize.
type Store struct {
	db *engine.DB
}

// Open opens the store at dbPath, creating the database (mode 0600, its
// directories 0700) when it does not exist and applying pending
// migrations, which add the store's tables and the search index to a
// database the engine made. The errors of engine.Open apply: a file that
// is not ours is refused and left untouched.
func Open(ctx context.Context, dbPath string, opts Options) (*Store, error) {
	db, err := engine.Open(ctx, dbPath, opts.Engine)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	return &Store{db: db}, nil
}

// Close closes the database. Sessions opened from the store stop working.
func (s *Store) Close() error { return s.db.Close() }

// DB returns the engine database underneath.
func (s *Store) DB() *engine.DB { return s.db }

// Path returns the database file's absolute path.
func (s *Store) Path() string { return s.db.Path() }

// CreateOptions describe a new session. The zero value makes a session
// with a fresh id in no particular directory.
type CreateOptions struct {
	// ID is the session id; empty means a fresh UUID v7.
	ID string
	// Cwd is the working directory the session belongs to.
	Cwd string
	// ParentSession is the session this one continues or was forked from.
	ParentSession string
	// Metadata is free-form JSON kept with the session and returned by
	// [Store.Info] and [Store.List]; nil means none. It must be valid
	// JSON; it is stored exactly as given.
	Metadata json.RawMessage
}

// Create adds an empty session and returns it, ready for appends (wrap it
// in sessiontree.NewSession for the typed API). An id already used is
// refused with sessiontree.ErrConflict.
func (s *Store) Create(ctx context.Context, opts CreateOptions) (*engine.Storage, error) {
	if opts.Metadata != nil && !json.Valid(opts.Metadata) {
		return nil, fmt.Errorf("create session: metadata is not valid JSON: %w", ErrBadOptions)
	}
	var out *engine.Storage
	var inner error // the step's own error, which names the session already
	err := s.db.Update(ctx, func(tx *engine.Tx) error {
		st, err := tx.CreateSession(sessiontree.SessionMeta{ID: opts.ID, Cwd: opts.Cwd, ParentSession: opts.ParentSession})
		if err == nil {
			if err = setMetadata(tx, st, opts.Metadata); err != nil {
				err = fmt.Errorf("create session %s: %w", st.ID(), err)
			}
		}
		out, inner = st, err
		return err
	})
	switch {
	case err != nil && inner != nil && errors.Is(err, inner):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("create session: %w", err)
	}
	return out, nil
}

func setMetadata(tx *engine.Tx, st *engine.Storage, md json.RawMessage) error {
	if md == nil {
		return nil
	}
	_, err := tx.SQL().ExecContext(tx.Context(), `UPDATE sessions SET metadata = ? WHERE pk = ?`, string(md), st.Key())
	if err != nil {
		return fmt.Errorf("set metadata: %w", err)
	}
	return nil
}

// OpenSession opens a session by its id or by a prefix of it that only
// one session starts with (as git takes a short commit hash). An exact id
// wins over a prefix. No match is an error matching
// sessiontree.ErrNotFound; several are an [*AmbiguousError] listing them.
func (s *Store) OpenSession(ctx context.Context, idOrPrefix string) (*engine.Storage, error) {
	id, err := s.Resolve(ctx, idOrPrefix)
	if err != nil {
		return nil, err
	}
	// The engine's error says "open session <id>" already.
	return s.db.OpenSession(ctx, id)
}

// Resolve returns the full id of the session idOrPrefix names, with the
// rules of [Store.OpenSession]. It reads at most MaxAmbiguousMatches+1
// rows of the sessions table's id index.
func (s *Store) Resolve(ctx context.Context, idOrPrefix string) (string, error) {
	if idOrPrefix == "" {
		return "", fmt.Errorf("resolve session: empty id: %w", &engine.SessionNotFoundError{ID: `""`})
	}
	var ids []string
	err := s.db.View(ctx, func(tx *sqlx.Tx) error {
		ids = ids[:0]
		rows, err := tx.QueryContext(ctx, `SELECT id FROM sessions WHERE id >= ? AND deleting = 0 ORDER BY id LIMIT ?`,
			idOrPrefix, MaxAmbiguousMatches+1)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			if !strings.HasPrefix(id, idOrPrefix) {
				break
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
	if err != nil {
		return "", fmt.Errorf("resolve session %s: %w", idOrPrefix, err)
	}
	switch {
	case len(ids) == 0:
		return "", &engine.SessionNotFoundError{ID: idOrPrefix}
	case ids[0] == idOrPrefix || len(ids) == 1:
		return ids[0], nil
	}
	e := &AmbiguousError{Prefix: idOrPrefix, Matches: ids}
	if len(ids) > MaxAmbiguousMatches {
		e.Matches, e.More = ids[:MaxAmbiguousMatches], true
	}
	return "", e
}

// SessionInfo is one session as a list shows it, read from the sessions
// table's row alone.
type SessionInfo struct {
	// ID is the session id.
	ID string `json:"id"`
	// Name is the session name, "" when it has none.
	Name string `json:"name,omitempty"`
	// Cwd is the session's working directory.
	Cwd string `json:"cwd"`
	// CreatedAt is the header timestamp (ISO-8601).
	CreatedAt string `json:"createdAt"`
	// UpdatedAt is the newest entry's timestamp, CreatedAt for an empty
	// session (ISO-8601).
	UpdatedAt string `json:"updatedAt"`
	// Entries counts every entry, Messages the message entries.
	Entries  int64 `json:"entries"`
	Messages int64 `json:"messages"`
	// FirstUserMessage is the text of the first user message (a string
	// content, or its first text block), "" when there is none.
	FirstUserMessage string `json:"firstUserMessage,omitempty"`
	// ParentSession is the session this one was forked from or continues.
	ParentSession string `json:"parentSession,omitempty"`
	// Leaf is the current leaf id, "" when null.
	Leaf string `json:"leaf,omitempty"`
	// Metadata is the JSON given to [Store.Create], nil when none.
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

const infoCols = `s.id, coalesce(s.name, ''), s.cwd, s.created_at, s.updated_at, s.entry_count, s.message_count,
       coalesce(s.first_user_text, ''), coalesce(s.parent_session, ''), coalesce(s.leaf_id, ''), s.metadata`

func scanInfo(sc interface{ Scan(...any) error }, pre ...any) (SessionInfo, error) {
	var in SessionInfo
	var md sql.NullString
	err := sc.Scan(append(pre, &in.ID, &in.Name, &in.Cwd, &in.CreatedAt, &in.UpdatedAt, &in.Entries, &in.Messages,
		&in.FirstUserMessage, &in.ParentSession, &in.Leaf, &md)...)
	if md.Valid {
		in.Metadata = json.RawMessage(md.String)
	}
	return in, err
}

// Info returns one session's row (the id must be exact; see
// [Store.Resolve]).
func (s *Store) Info(ctx context.Context, id string) (SessionInfo, error) {
	var in SessionInfo
	err := s.db.View(ctx, func(tx *sqlx.Tx) (err error) {
		in, err = scanInfo(tx.QueryRowContext(ctx, `SELECT `+infoCols+` FROM sessions s WHERE s.id = ? AND s.deleting = 0`, id))
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		err = &engine.SessionNotFoundError{ID: id}
	}
	if err != nil {
		return SessionInfo{}, fmt.Errorf("session info %s: %w", id, err)
	}
	return in, nil
}

// ListOptions select and page a [Store.List]. The zero value lists the
// newest sessions, DefaultListLimit of them.
type ListOptions struct {
	// Cwd keeps the sessions of this working directory (exact match).
	Cwd string
	// Name keeps the sessions whose name contains it, ignoring ASCII case.
	Name string
	// Limit is the page size; 0 means DefaultListLimit, and it is capped
	// at MaxListLimit.
	Limit int
	// After is the Next cursor of the previous page; "" starts at the
	// newest session.
	After string
}

// Page sizes of [Store.List].
const (
	DefaultListLimit = 50
	MaxListLimit     = 1000
)

// Page is one page of a [Store.List].
type Page struct {
	// Sessions are newest-updated first.
	Sessions []SessionInfo
	// Next is the cursor of the next page ([ListOptions.After]), "" when
	// this page is the last.
	Next string
}

// List returns sessions newest-updated first (ties broken by creation
// order, newest first), one page at a time. It reads the sessions table
// only, never entries: each row carries its counts, name and first user
// message. With a Cwd it is a range of the sessions_by_cwd index; without
// it, a scan of the sessions table that keeps the page's rows in a
// top-N sort. A cursor stays valid while sessions change: a page starts
// strictly after the last row of the page before.
func (s *Store) List(ctx context.Context, opts ListOptions) (Page, error) {
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultListLimit
	}
	limit = min(limit, MaxListLimit)
	var where []string
	var params []any
	where = append(where, "deleting = 0")
	if opts.Cwd != "" {
		where = append(where, "cwd = ?")
		params = append(params, opts.Cwd)
	}
	if opts.Name != "" {
		where = append(where, `name LIKE ? ESCAPE '\'`)
		params = append(params, "%"+likeEscape(opts.Name)+"%")
	}
	if opts.After != "" {
		ts, pk, err := decodeCursor(opts.After)
		if err != nil {
			return Page{}, fmt.Errorf("list sessions: %w", err)
		}
		where = append(where, "(updated_at < ? OR (updated_at = ? AND pk < ?))")
		params = append(params, ts, ts, pk)
	}
	// The inner query sorts keys only; the outer one reads the page's
	// rows, so a long first message is never carried through the sort.
	query := `SELECT s.pk, ` + infoCols + ` FROM (
    SELECT pk FROM sessions WHERE ` + strings.Join(where, " AND ") + `
    ORDER BY updated_at DESC, pk DESC LIMIT ?) AS p
JOIN sessions s ON s.pk = p.pk
ORDER BY s.updated_at DESC, s.pk DESC`
	params = append(params, limit+1)
	var page Page
	var lastPK int64
	err := s.db.View(ctx, func(tx *sqlx.Tx) error {
		page = Page{}
		rows, err := tx.QueryContext(ctx, query, params...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var pk int64
			in, err := scanInfo(rows, &pk)
			if err != nil {
				return err
			}
			if len(page.Sessions) == limit {
				page.Next = encodeCursor(page.Sessions[limit-1].UpdatedAt, lastPK)
				break
			}
			page.Sessions = append(page.Sessions, in)
			lastPK = pk
		}
		return rows.Err()
	})
	if err != nil {
		return Page{}, fmt.Errorf("list sessions: %w", err)
	}
	return page, nil
}

// ListN returns up to n sessions in the order of [Store.List], however
// many that is (every session when n <= 0), reading them page after page
// of MaxListLimit: List caps a page, ListN does the paging a caller
// wanting n rows would do. opts selects as for List, its Limit ignored;
// its After, when set, is where the listing starts. Each page is read in
// its own snapshot, as when a caller pages through List: a session
// written to meanwhile moves before the pages read, so it is listed once
// at its old place if a page read before had it, and not at all
// otherwise; no session is listed twice.
func (s *Store) ListN(ctx context.Context, opts ListOptions, n int) ([]SessionInfo, error) {
	var out []SessionInfo
	for {
		opts.Limit = MaxListLimit
		if n > 0 {
			opts.Limit = min(n-len(out), MaxListLimit)
		}
		page, err := s.List(ctx, opts)
		if err != nil {
			return out, err
		}
		out = append(out, page.Sessions...)
		if page.Next == "" || n > 0 && len(out) >= n {
			return out, nil
		}
		opts.After = page.Next
	}
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// A cursor is the last row's updated_at and key, base64url encoded: the
// key breaks ties between sessions updated at the same instant.
func encodeCursor(updatedAt string, pk int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(pk, 10) + " " + updatedAt))
}

func decodeCursor(c string) (string, int64, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return "", 0, fmt.Errorf("cursor %q: %w", c, ErrBadCursor)
	}
	k, ts, ok := strings.Cut(string(b), " ")
	pk, err := strconv.ParseInt(k, 10, 64)
	if !ok || err != nil || pk <= 0 {
		return "", 0, fmt.Errorf("cursor %q: %w", c, ErrBadCursor)
	}
	return ts, pk, nil
}

// Delete deletes sessions with everything they own (entries, branch,
// labels, search index rows, import records) in one transaction: all of
// them or, on error, none. Ids that do not exist are skipped, so deleting
// again is not an error. It returns how many sessions it deleted.
func (s *Store) Delete(ctx context.Context, ids ...string) (int, error) {
	var n int
	err := s.db.Update(ctx, func(tx *engine.Tx) error {
		n = 0
		seen := map[string]bool{}
		for _, id := range ids {
			if seen[id] {
				continue
			}
			seen[id] = true
			err := tx.DeleteSession(id)
			if errors.Is(err, sessiontree.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("delete sessions: %w", err)
	}
	return n, nil
}

// Check verifies the database and one session (every session when id is
// ""): the engine's check (SQLite's integrity_check, which runs FTS5's
// check of the search index's own structure too, and foreign keys, and
// each session replayed against its materialized branch, counters and
// labels, and every entry's JSON against its checksum), then the index
// against the entries' text: it holds a document for exactly the entries
// with text among those it should hold (entries not yet indexed are
// pending, see [Store.Index]), and, for entries drawn at random up to a
// bounded number of index lookups (about a second in a store of 430,000
// entries), one with as many tokens as the entry's text gives and holding
// its text's trigrams (see indexcheck.go: a small store is
// compared whole, a large one in part). Problems match
// sessiontree.ErrCorrupt; one of an entry is a *sessiontree.CorruptError
// naming it, wrapped with its session's id. Entries of
// types this version does not know are not damage; [Store.Warnings] names
// the sessions holding them. It reads everything it checks, in read
// transactions only and writing nothing, so another process writing never
// fails it or makes it wait, and it checks a database opened read-only as
// well; it is for the command line's check and for tests.
//
// (FTS5's own check is also a write of a special row, 'integrity-check',
// which Check ran itself before, rolled back; SQLite 3.44 and later run
// the same check, rank 0, from integrity_check, without writing.)
func (s *Store) Check(ctx context.Context, id string) error {
	if err := s.db.Check(ctx, id); err != nil {
		return err
	}
	var lo, hi int64 = 0, 1<<63 - 1
	if id != "" {
		st, err := s.db.OpenSession(ctx, id)
		if err != nil {
			return fmt.Errorf("check: %w", err)
		}
		lo, hi = st.Key()<<32, st.Key()<<32|0xffffffff
	}
	var unlisted int64
	err := s.db.View(ctx, func(tx *sqlx.Tx) error {
		if err := checkIndexText(ctx, tx, lo, hi); err != nil {
			return err
		}
		// search_pending must list exactly the sessions the index lags
		// behind, or a search would miss the entries of one left out.
		return tx.GetContext(ctx, &unlisted, `SELECT count(*) FROM sessions s
WHERE s.pk BETWEEN ? AND ? AND (s.indexed_count < s.entry_count) <> EXISTS (SELECT 1 FROM search_pending p WHERE p.session = s.pk)`,
			lo>>32, hi>>32)
	})
	if err != nil {
		return fmt.Errorf("check search index: %w", err)
	}
	if unlisted != 0 {
		return fmt.Errorf("check search index: %w", &sessiontree.CorruptError{
			Reason: fmt.Sprintf("the list of sessions it lags behind is wrong for %d sessions", unlisted)})
	}
	return nil
}

// notFoundOr turns sql.ErrNoRows from a lookup of session id into a
// SessionNotFoundError.
func notFoundOr(err error, id string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return &engine.SessionNotFoundError{ID: id}
	}
	return err
}
