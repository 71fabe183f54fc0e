package store

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/pgengine"
)

// Options configure [Open]. The zero value works.
type Options struct {
	// Engine configures the database underneath (durability, busy
	// timeout, readers, clock).
	Engine engine.Options
	// Postgres configures a PostgreSQL database ([OpenPostgres]).
	Postgres pgengine.Options
}

// Store is a database of many sessions: an engine (SQLite, [Open], or
// PostgreSQL, [OpenPostgres]; [OpenURL] picks one) plus what an application
// needs around it (listing, forking, importing and exporting pi's files,
// full-text search). Its sessions are [sessiontree.DatabaseSession]s: wrap
// one in [sessiontree.NewSession] for the typed API. A Store is safe for
// concurrent use, also with other processes using the same database; see
// packages engine and pgengine for how writers serialize.
type Store struct {
	d sessiontree.Database
	// db is the SQLite engine underneath, nil under another engine, for
	// [Store.DB] alone.
	db *engine.DB
	// indexTune bounds Index's chunks (tests make them small).
	indexTune indexTune
	// listPageSize is how many sessions a page of ListN holds; 0 means
	// MaxListLimit (tests make it small, to page through a few).
	listPageSize int
}

// New returns a store over d, any engine's implementation of the
// contract. Closing the store closes d.
func New(d sessiontree.Database) *Store {
	s := &Store{d: d}
	if ed, ok := d.(*engine.Database); ok {
		s.db = ed.DB()
	}
	return s
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
	return New(engine.NewDatabase(db)), nil
}

// Close closes the database. Sessions opened from the store stop working.
func (s *Store) Close() error { return s.d.Close() }

// Database returns the database underneath, through the contract.
func (s *Store) Database() sessiontree.Database { return s.d }

// DB returns the SQLite engine database underneath, nil when the store
// runs on another engine. Prefer [Store.Database].
func (s *Store) DB() *engine.DB { return s.db }

// Path returns the database file's absolute path (for another engine,
// what its Path says).
func (s *Store) Path() string { return s.d.Path() }

// CreateOptions describe a new session. The zero value makes a session
// with a fresh id in no particular directory.
type CreateOptions struct {
	// ID is the session id; empty means a fresh UUID v7. An id pi or the
	// command could not name is refused
	// (sessiontree.CheckNewSessionID).
	ID string
	// Cwd is the working directory the session belongs to.
	Cwd string
	// ParentSession is the session this one continues or was forked from.
	ParentSession string
	// Metadata is free-form JSON kept with the session and returned by
	// [Store.Info] and [Store.List]; nil means none. It must be valid
	// JSON; it is stored exactly as given.
	Metadata json.RawMessage
	// Name, when not empty, names the session, cleaned as
	// [sessiontree.Session.SetName] cleans it ([sessiontree.CleanName]):
	// its one entry is then a session_info entry stamped with its
	// creation time, written in the same transaction, so the session is
	// never listed without its name. A name that cleans to nothing (white
	// space alone) is refused ([CheckNewName]).
	Name string
}

// CheckNewName is the rule for the name a new session is given
// ([CreateOptions.Name], the command's new --name, the HTTP API's
// create): "" gives none, and any other name must hold something once
// cleaned ([sessiontree.CleanName]). One of white space alone would name
// nothing, which is a mistake, not a wish for no name, unlike a rename
// to it ([sessiontree.Session.SetName] clears the name): it is refused
// with an error matching [ErrBadOptions], which the caller prefixes
// with the name's field.
func CheckNewName(name string) error {
	if name != "" && sessiontree.CleanName(name) == "" {
		return fmt.Errorf("only white space, which names nothing (leave it out for no name): %w", ErrBadOptions)
	}
	return nil
}

// Create adds a session and returns it, ready for appends (wrap it in
// sessiontree.NewSession for the typed API): an empty one, a header only,
// as pi's SessionManager.create makes it, unless opts.Name names it. An
// id already used is refused with sessiontree.ErrConflict.
func (s *Store) Create(ctx context.Context, opts CreateOptions) (sessiontree.DatabaseSession, error) {
	if opts.Metadata != nil && !json.Valid(opts.Metadata) {
		return nil, fmt.Errorf("create session: metadata is not valid JSON: %w", ErrBadOptions)
	}
	if err := sessiontree.CheckNewSessionID(opts.ID); err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	if err := CheckNewName(opts.Name); err != nil {
		return nil, fmt.Errorf("create session: name %q: %w", opts.Name, err)
	}
	var out sessiontree.DatabaseSession
	var inner error // the step's own error, which names the session already
	err := s.d.Update(ctx, func(tx sessiontree.DatabaseTx) error {
		st, err := tx.NewSession(sessiontree.SessionMeta{ID: opts.ID, Cwd: opts.Cwd, ParentSession: opts.ParentSession}, opts.Metadata)
		out, inner = st, err
		if err != nil {
			return err
		}
		return nameNew(tx, st, opts.Name)
	})
	switch {
	case err != nil && inner != nil && errors.Is(err, inner):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("create session: %w", err)
	}
	return out, nil
}

// nameNew names st, a session tx has just made, with its first entry
// (CreateOptions.Name): a session_info entry at the root, stamped with
// the session's creation time, the engine's clock's. No name ("")
// writes nothing.
func nameNew(tx sessiontree.DatabaseTx, st sessiontree.DatabaseSession, name string) error {
	name = sessiontree.CleanName(name)
	if name == "" {
		return nil
	}
	info, err := tx.SessionInfo(st.ID())
	if err != nil {
		return err
	}
	fields, err := sessiontree.Fields("name", name)
	if err != nil {
		return err
	}
	e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: sessiontree.TypeSessionInfo, Fields: fields},
		sessiontree.NewEntryID(nil), "", info.CreatedAt)
	if err != nil {
		return err
	}
	return tx.AppendEntries(st, []sessiontree.Entry{e})
}

// OpenSession opens a session by its id or by a prefix of it that only
// one session starts with (as git takes a short commit hash). An exact id
// wins over a prefix. No match is an error matching
// sessiontree.ErrNotFound; several are an [*AmbiguousError] listing them.
func (s *Store) OpenSession(ctx context.Context, idOrPrefix string) (sessiontree.DatabaseSession, error) {
	if len(idOrPrefix) >= fullIDLen {
		// Likely a whole id, which wins: one lookup instead of two.
		st, err := s.d.OpenSession(ctx, idOrPrefix)
		if !errors.Is(err, sessiontree.ErrNotFound) {
			return st, err
		}
	}
	id, err := s.Resolve(ctx, idOrPrefix)
	if err != nil {
		return nil, err
	}
	// The engine's error says "open session <id>" already.
	return s.d.OpenSession(ctx, id)
}

// Resume opens a session by its id or a unique prefix, as
// [Store.OpenSession] does, for the typed API: the returned Session's
// Close closes the session.
func (s *Store) Resume(ctx context.Context, idOrPrefix string, opts sessiontree.SessionOptions) (*sessiontree.Session, error) {
	st, err := s.OpenSession(ctx, idOrPrefix)
	if err != nil {
		return nil, err
	}
	return sessiontree.NewSession(st, opts), nil
}

// fullIDLen is the length of a session id as pi makes them (a UUID).
const fullIDLen = 36

// Resolve returns the full id of the session idOrPrefix names, with the
// rules of [Store.OpenSession]. It reads at most MaxAmbiguousMatches+1
// rows of the sessions table's id index.
func (s *Store) Resolve(ctx context.Context, idOrPrefix string) (string, error) {
	if idOrPrefix == "" {
		return "", fmt.Errorf("resolve session: empty id: %w", &sessiontree.SessionNotFoundError{ID: `""`})
	}
	var ids []string
	err := s.d.View(ctx, func(tx sessiontree.DatabaseTx) (err error) {
		ids, err = tx.ResolvePrefix(idOrPrefix, MaxAmbiguousMatches+1)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("resolve session %s: %w", idOrPrefix, err)
	}
	switch {
	case len(ids) == 0:
		return "", &sessiontree.SessionNotFoundError{ID: idOrPrefix}
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
type SessionInfo = sessiontree.SessionInfo

// Info returns one session's row (the id must be exact; see
// [Store.Resolve]).
func (s *Store) Info(ctx context.Context, id string) (SessionInfo, error) {
	var in SessionInfo
	err := s.d.View(ctx, func(tx sessiontree.DatabaseTx) (err error) {
		in, err = tx.SessionInfo(id)
		return err
	})
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
	// Name keeps the sessions whose name contains it, ignoring ASCII case;
	// a NUL in it stands for a space, as in the names themselves
	// (sessiontree.DerivedText). A Name holding a byte that is not UTF-8
	// keeps none, on every engine: SQLite's LIKE decodes such bytes
	// loosely (E3 89, a sequence cut short, as É, so that it kept
	// "École"), and a PostgreSQL database holds no such name.
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
	var page Page
	err := s.d.View(ctx, func(tx sessiontree.DatabaseTx) error {
		var err error
		page, err = listPage(tx, opts)
		return err
	})
	if err != nil {
		return Page{}, fmt.Errorf("list sessions: %w", err)
	}
	return page, nil
}

// listPage reads one page of [Store.List] in tx.
func listPage(tx sessiontree.DatabaseTx, opts ListOptions) (Page, error) {
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultListLimit
	}
	limit = min(limit, MaxListLimit)
	lq := sessiontree.ListQuery{Cwd: opts.Cwd, Name: sessiontree.DerivedText(opts.Name), Limit: limit + 1}
	if opts.After != "" {
		var err error
		if lq.AfterUpdated, lq.AfterKey, err = decodeCursor(opts.After); err != nil {
			return Page{}, err
		}
	}
	if !utf8.ValidString(lq.Name) {
		return Page{}, nil // see ListOptions.Name
	}
	rows, err := tx.ListSessions(lq)
	if err != nil {
		return Page{}, err
	}
	var page Page
	if len(rows) > 0 {
		page.Sessions = make([]SessionInfo, 0, min(len(rows), limit))
	}
	for i, r := range rows {
		if i == limit {
			page.Next = encodeCursor(page.Sessions[limit-1].UpdatedAt, rows[limit-1].Key)
			break
		}
		page.Sessions = append(page.Sessions, r.Info)
	}
	return page, nil
}

// ListN returns up to n sessions in the order of [Store.List], however
// many that is (every session when n <= 0), reading them page after page
// of MaxListLimit: List caps a page, ListN does the paging a caller
// wanting n rows would do. opts selects as for List, its Limit ignored;
// its After, when set, is where the listing starts. Every page is read
// in one snapshot, so a session written to meanwhile is listed once, at
// its place when the listing began: a page of its own snapshot each, the
// session moved before the pages read and was listed by none.
func (s *Store) ListN(ctx context.Context, opts ListOptions, n int) ([]SessionInfo, error) {
	var out []SessionInfo
	pageLimit := cmp.Or(s.listPageSize, MaxListLimit)
	err := s.d.View(ctx, func(tx sessiontree.DatabaseTx) error {
		out = nil
		for {
			opts.Limit = pageLimit
			if n > 0 {
				opts.Limit = min(n-len(out), pageLimit)
			}
			page, err := listPage(tx, opts)
			if err != nil {
				return err
			}
			out = append(out, page.Sessions...)
			if page.Next == "" || n > 0 && len(out) >= n {
				return nil
			}
			opts.After = page.Next
		}
	})
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
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
// labels, search index rows, import records, claims) in one transaction:
// all of them or, on error, none. Ids that do not exist are skipped, so
// deleting again is not an error. A session another holder has a live
// claim on is not deleted: the delete fails with a
// [*sessiontree.ClaimedError] naming the holder (see
// [sessiontree.Claimer]), and deletes none of ids; [Store.DeleteWith]
// with Force deletes it anyway. It returns how many sessions it deleted.
func (s *Store) Delete(ctx context.Context, ids ...string) (int, error) {
	return s.DeleteWith(ctx, sessiontree.DeleteOptions{}, ids...)
}

// DeleteWith is [Store.Delete] with options: opts.Force deletes sessions
// even while another holder's claim on them is live.
func (s *Store) DeleteWith(ctx context.Context, opts sessiontree.DeleteOptions, ids ...string) (int, error) {
	var n int
	err := s.d.Update(ctx, func(tx sessiontree.DatabaseTx) error {
		n = 0
		seen := map[string]bool{}
		for _, id := range ids {
			if seen[id] {
				continue
			}
			seen[id] = true
			err := tx.DeleteSession(id, opts)
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

// Check verifies one session, or the whole database when id is "".
//
// A session's check (the command line's check SESSION) reads that session
// and nothing else, so its cost follows the session's size: the engine's
// replay of its log against its materialized branch, counters, labels and
// usage, every entry's JSON against its checksum, its rows through each
// index against the same rows from their tables, then its search rows:
// the index holds a document for exactly its entries with text among
// those it should hold (entries not yet indexed are pending, see
// [Store.Index]), and, for entries drawn at random up to a bounded number
// of index lookups, one with as many tokens as the entry's text gives and
// holding its text's trigrams (see engine/indexcheck.go).
//
// The whole database's check adds the database-wide structural checks
// ([Store.CheckStructure]: SQLite's integrity_check, which runs FTS5's
// check of the search index's own structure too, and foreign keys), then
// checks every session, and the index against every entry's text, with a
// larger sample (about a second of lookups in a store of 430,000
// entries). Damage to pages no session's rows are on (a free page, the
// search index's segments, another table) is found there.
//
// Problems match sessiontree.ErrCorrupt; one of an entry is a
// *sessiontree.CorruptError naming it, wrapped with its session's id.
// Entries of types this version does not know are not damage;
// [Store.Warnings] names the sessions holding them. It reads everything
// it checks, in read transactions only and writing nothing, so another
// process writing never fails it or makes it wait, and it checks a
// database opened read-only as well; it is for the command line's check
// and for tests.
//
// (FTS5's own check is also a write of a special row, 'integrity-check',
// which Check ran itself before, rolled back; SQLite 3.44 and later run
// the same check, rank 0, from integrity_check, without writing.)
func (s *Store) Check(ctx context.Context, id string) error {
	return s.d.Check(ctx, id)
}

// Repair computes again, from its entries, what the writes derive from
// session id's log (every session's when id is "") where [Store.Check]
// reports that it disagrees with the log, as an engine older than a rule
// left it (sessiontree.Repairer: the SQLite engine's [engine.DB.Repair],
// pgengine's DB.Repair). It returns the sessions it repaired; it changes
// no entry, and a session whose entries or header are damaged is left as
// it is, its problem in the error (matching sessiontree.ErrCorrupt). A
// database that cannot repair returns an error matching
// errors.ErrUnsupported.
func (s *Store) Repair(ctx context.Context, id string) ([]sessiontree.RepairedSession, error) {
	r, ok := s.d.(sessiontree.Repairer)
	if !ok {
		return nil, fmt.Errorf("repair %s: %w", s.d.Path(), errors.ErrUnsupported)
	}
	return r.Repair(ctx, id)
}

// structureChecker is a database with database-wide structural checks
// (the SQLite engine's [engine.Database.CheckStructure]).
type structureChecker interface {
	CheckStructure(ctx context.Context) error
}

// CheckStructure runs the database-wide structural checks that
// [Store.Check] of the whole database runs first, and a session's check
// does not: under SQLite, integrity_check (every page, every index
// against its table, the search index's own structure) and
// foreign_key_check. Its cost follows the database's size. An engine
// without such checks (PostgreSQL, which keeps its own structures)
// returns nil. Problems match sessiontree.ErrCorrupt.
func (s *Store) CheckStructure(ctx context.Context) error {
	if c, ok := s.d.(structureChecker); ok {
		return c.CheckStructure(ctx)
	}
	return nil
}
