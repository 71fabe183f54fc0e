package sessiontree

import (
	"context"
	"encoding/json"
	"errors"
)

// Database is a database of many sessions, as an engine gives it to the
// session store (package store) underneath its own logic: pi file import,
// fork rules, export formatting, search query parsing, ranking and
// snippets are written once in the store, above this contract; each
// engine (the SQLite engine in package engine, PostgreSQL in its own)
// implements it with its own SQL. It is shaped like litestream's
// ReplicaClient: small methods that read or write rows, each bounded,
// none holding a policy of its own.
//
// # Transactions
//
// Every method that reads or writes tables runs inside a transaction
// given by [Database.View] (a read: one snapshot, never blocking or
// blocked by a writer) or [Database.Update] (a write, serialized with
// every other write to the database). Both hand the function the same
// [DatabaseTx] type, as bbolt's View and Update do; write methods called
// in a View fail (with [ErrReadOnly] or the engine's own refusal). fn
// may run more than once (an engine retries a transaction that met a
// busy database), so it must keep no effects outside the transaction.
// A DatabaseTx is valid only inside fn and is not safe for concurrent
// use.
//
// # Errors
//
// Engines return the root sentinels: a session that does not exist
// matches [ErrNotFound] (a [*SessionNotFoundError] naming it), an id
// already used [ErrConflict] (a [*SessionExistsError] naming it), damage [ErrCorrupt] (a [*CorruptError]),
// a write while another process holds the database [ErrLocked]
// ([Database.TryUpdate]), a database opened read-only [ErrReadOnly],
// no room [ErrDiskFull], a closed database [ErrClosed], a search
// expression the engine cannot parse [ErrBadQuery] (a [*BadQueryError]).
// Errors are wrapped with the step that failed.
//
// # Cost
//
// Nothing loads a whole session, or every session: each method reads
// the rows it returns through an index, a page or a bound at a time,
// except [Database.Check] and [DatabaseTx.RawEntries], which read what
// they are asked to read once, in order, streaming.
//
// # Keys
//
// Sessions and entries have int64 keys the engine assigns (the SQLite
// engine: a session's rowid, and session*2^32+seq for an entry). They
// are opaque to callers, who only compare them: an entry appended later
// to a session has a greater key than the ones before it, and a session
// created later has greater keys than one created before it, so ordering
// by key, descending, is newest first. A key is valid as long as its
// session exists.
//
// Implementations are safe for concurrent use, also with other
// processes using the same database.
type Database interface {
	// View runs fn in one read transaction: every read in it sees the
	// same snapshot, and writers are not blocked.
	View(ctx context.Context, fn func(tx DatabaseTx) error) error
	// Update runs fn in one write transaction: it commits when fn
	// returns nil and rolls back when fn returns an error or panics.
	// It waits for other writers within the engine's busy timeout.
	Update(ctx context.Context, fn func(tx DatabaseTx) error) error
	// TryUpdate is Update without waiting: when another connection
	// holds the database's write lock it returns at once an error
	// matching [ErrLocked] without running fn.
	TryUpdate(ctx context.Context, fn func(tx DatabaseTx) error) error
	// WaitForLock returns once no other connection holds the write lock
	// (likely, not certainly, free for the next write), or with ctx's
	// error.
	WaitForLock(ctx context.Context) error

	// OpenSession opens session id (exact) outside any transaction; the
	// session's own methods run their own transactions. A session that
	// does not exist matches [ErrNotFound]. The session returned is the
	// one id names now: once it is deleted its reads find it no more
	// (ErrNotFound, or no entries), also after another session is made
	// with the same id.
	OpenSession(ctx context.Context, id string) (DatabaseSession, error)
	// Check verifies the database and one session (every session when id
	// is ""): the engine's storage, each session's tree against what is
	// derived from it, each entry against its checksum, and the search
	// index against the entries' text (entries not yet indexed are
	// pending, not damage). Problems match [ErrCorrupt]; one of an entry
	// is a [*CorruptError] naming it. It writes nothing, so it works on a
	// database opened read-only and never waits for a writer.
	Check(ctx context.Context, id string) error
	// Usage answers a usage report over every session (see
	// [UsageQuery]).
	Usage(ctx context.Context, q UsageQuery) (UsageReport, error)

	// ReadOnly returns nil when the database takes writes, and an error
	// matching [ErrReadOnly] saying why when it was opened for reading
	// only.
	ReadOnly() error
	// Path names the database for messages: a file path, or a
	// connection string without its password.
	Path() string
	// Close closes the database; sessions opened from it stop working.
	Close() error
}

// EntryChecker is implemented by a [Database] that cannot store every
// entry the others can: the PostgreSQL engine, whose text holds neither a
// NUL nor bytes that are not UTF-8. CheckEntry returns the
// [*InvalidEntryError] the database's writes refuse e with, nil when it
// can store e. An import asks it of each entry in the pass that checks a
// file before any of it is written, so that the refusal names the file
// and line and leaves nothing of the file half imported.
type EntryChecker interface {
	CheckEntry(e Entry) error
}

// Repairer is implemented by a [Database] that can compute again, from
// a session's entries, what its writes derive from them (counters,
// stats, usage by day, name, labels, the tree's counts, the active
// branch) when [Database.Check] reports that they disagree with the log:
// what an engine older than a rule wrote by its older rule. Repair does
// so for session id, or for every session when id is "", each in a
// write transaction of its own, and returns the sessions it repaired;
// entries are never changed. A session whose own data (its header, an
// entry) is damaged is left as it is, its problem in the returned error,
// which joins one per such session, each matching [ErrCorrupt].
type Repairer interface {
	Repair(ctx context.Context, id string) ([]RepairedSession, error)
}

// RepairedSession is a session a [Repairer] repaired.
type RepairedSession struct {
	// ID is the session's id.
	ID string
	// Was is what the check reported of the session before the repair
	// (it matches [ErrCorrupt]).
	Was error
}

// RepairEach is a [Repairer]'s loop over the sessions ids: repair
// repairs one, returning what its check reported before (nil when it
// was sound), or an error. It collects the sessions repaired and joins
// the errors matching [ErrCorrupt] (sessions left for damage), and stops
// at any other error, returning what it repaired before. When listed,
// ids are every session's, read before the loop, and one deleted since
// ([ErrNotFound]) is passed over; else a missing one is the error.
func RepairEach(ids []string, listed bool, repair func(id string) (was error, err error)) ([]RepairedSession, error) {
	var repaired []RepairedSession
	var problems []error
	for _, id := range ids {
		was, err := repair(id)
		switch {
		case listed && errors.Is(err, ErrNotFound):
		case errors.Is(err, ErrCorrupt):
			problems = append(problems, err)
		case err != nil:
			return repaired, err
		case was != nil:
			repaired = append(repaired, RepairedSession{ID: id, Was: was})
		}
	}
	return repaired, errors.Join(problems...)
}

// DatabaseTx is one transaction of a [Database] (see its doc for the
// rules every method follows). Reads see the transaction's own writes.
type DatabaseTx interface {
	// Context returns the context the transaction runs under.
	Context() context.Context

	// Sessions.

	// NewSession adds an empty session with metadata (nil for none;
	// valid JSON, stored as given). meta.ID "" means a fresh UUID v7,
	// meta.CreatedAt "" the engine's clock. An id in use is a
	// [*SessionExistsError], not wrapped. The session returned is usable after the
	// transaction commits.
	NewSession(meta SessionMeta, metadata json.RawMessage) (DatabaseSession, error)
	// Session opens session id (exact) as the transaction sees it.
	Session(id string) (DatabaseSession, error)
	// ResolvePrefix returns the ids that start with prefix, ascending,
	// at most limit of them (an exact id is the first, if it exists).
	// It reads at most limit rows of an index on ids.
	ResolvePrefix(prefix string, limit int) ([]string, error)
	// SessionInfo returns one session's row. A session that does not
	// exist matches [ErrNotFound].
	SessionInfo(id string) (SessionInfo, error)
	// ListSessions returns up to q.Limit sessions, newest-updated first
	// (UpdatedAt descending, then Key descending), strictly after q's
	// cursor when set, filtered by q. It reads the sessions' rows only,
	// through an index or a top-N sort, never their entries.
	ListSessions(q ListQuery) ([]ListedSession, error)
	// DeleteSession deletes a session with everything it owns (entries,
	// branch, labels, search index rows, import records, its claim). A
	// session that does not exist matches [ErrNotFound]. A delete is a
	// write made without a claim: while another holder's claim on the
	// session is live it fails with a [*ClaimedError], checked under the
	// lock writes to the session take, unless opts.Force ([CheckDelete]).
	DeleteSession(id string, opts DeleteOptions) error
	// AppendEntries appends entries that already have ids, parents and
	// timestamps to s (a session of this database), validated as
	// [BatchAppender] says. A refused batch leaves the transaction as it
	// was, so the caller may go on. Fork copies a session's entries into
	// a new one with it, a page at a time.
	AppendEntries(s DatabaseSession, entries []Entry) error

	// Export.

	// ExportHead returns what an export of session id writes before its
	// entries. A session that does not exist matches [ErrNotFound]; an
	// engine that keeps a [HeaderChecksum] refuses a header that does not
	// match it with a [CorruptError], rather than export another header
	// than the one the session was created with.
	ExportHead(id string) (ExportHead, error)
	// ReferencedLeaves returns the ids of session id's leaf entries that
	// another entry names as its parent or target (only imported data
	// has such).
	ReferencedLeaves(id string) (map[string]bool, error)
	// RawEntries calls fn with every entry of session id in append
	// order, its JSON exactly as stored, after checking it against its
	// checksum (a mismatch ends the walk with a [*CorruptError] naming the
	// entry). e.Raw is valid only during the call. An error from fn ends
	// the walk and is returned as is.
	RawEntries(id string, fn func(e RawEntry) error) error

	// Warnings.

	// UnknownTypes returns, for session id (every session when id is
	// ""), one row per session and entry type that is not in known, in
	// session order and then by first appearance. A session that does not
	// exist matches [ErrNotFound].
	UnknownTypes(id string, known []EntryType) ([]UnknownTypeRow, error)

	// Search index catch-up. Appends write entries only; the index holds
	// each session's entries up to a mark, and these methods move the
	// mark (see store.Index for the policy).

	// IndexBacklog counts the entries the search index does not hold
	// yet. With nothing pending it reads an empty list, not every
	// session.
	IndexBacklog() (int64, error)
	// NextIndexChunk picks the next pending entries to index: up to
	// maxEntries of them, whole sessions in key order and the first part
	// of the one that does not fit, of those the first whose JSON holds
	// maxBytes (always at least one), and reads their text. The entries
	// of after (the spans of a chunk read and not written yet) count as
	// indexed, so that the next chunk is read while that one is written.
	// An empty chunk means nothing else is pending.
	NextIndexChunk(maxEntries, maxBytes int64, after []IndexSpan) (IndexChunk, error)
	// WriteIndexChunk indexes a chunk read by NextIndexChunk (in an
	// earlier transaction) and moves its sessions' marks, if they are
	// still where the chunk found them; if another indexer moved them
	// first it writes nothing and returns an error matching
	// [ErrConflict].
	WriteIndexChunk(c IndexChunk) error

	// Search primitives. A match query is parsed by the store and
	// rendered by the engine into its own syntax (the SQLite engine:
	// FTS5's, on trigrams; PostgreSQL: ILIKE over a pg_trgm index); a
	// query the engine still refuses is a [*BadQueryError]. Keys come
	// newest first.

	// MatchKeys returns the keys of up to limit indexed entries in scope
	// matching match, newest first.
	MatchKeys(scope SearchScope, match MatchQuery, limit int) ([]int64, error)
	// ScanKeys returns the keys of up to limit entries in scope whose
	// indexed text contains text (ignoring case) followed by at least
	// TrigramTail(text) characters, so starting a trigram, newest first,
	// indexed or pending; it reads the text itself.
	ScanKeys(scope SearchScope, text string, limit int) ([]int64, error)
	// ExpandTerms returns the index's terms t with from <= t < to,
	// ascending, at most limit of them: what a phrase of fewer than
	// three characters (from, one spelling of it, see CaseVariants) is
	// expanded into before it is matched. The terms are the trigrams
	// of the indexed text folded by FoldCase, the same on every engine
	// (SQLite: FTS5's vocabulary; PostgreSQL: search_terms), so that the
	// store takes the same path for a short phrase on each.
	ExpandTerms(from, to string, limit int) ([]string, error)
	// PendingTexts returns the text of the pending entries in scope a
	// search reads itself: of the sessions written to last first, each
	// session's newest first, at most maxEntries looked at, those whose
	// JSON still fits in maxBytes taken; Total counts every pending entry
	// in scope.
	PendingTexts(scope SearchScope, maxEntries int, maxBytes int64) (PendingTexts, error)
	// Texts returns the indexed text of the entries with keys, in no
	// particular order; keys without text are left out.
	Texts(keys []int64) ([]KeyText, error)
	// Hits returns what a search shows of the entries with keys, in no
	// particular order; with text, each row's Text is its indexed text.
	Hits(keys []int64, text bool) ([]HitRow, error)
	// TextIndex indexes texts for one search alone, so that a match
	// query and its term expansion mean there what they mean in the
	// database's index. Close it when done.
	TextIndex(texts []KeyText) (TextIndex, error)

	// Import records: the session store's record of each file it
	// imported (one per path, returned as saved), and the lookups of
	// sessions and entries an import makes around them, in the same
	// snapshot as its entries.

	// ImportRecord returns the import record of the file at path, and
	// false when there is none.
	ImportRecord(path string) (ImportRecord, bool, error)
	// PutImportRecord saves rec, replacing the record of the same path.
	PutImportRecord(rec ImportRecord) error
	// DeleteImportRecord deletes the import record of path, if any.
	DeleteImportRecord(path string) error
	// ImportPathOf returns the path of a file imported into session id,
	// and false when none was.
	ImportPathOf(id string) (string, bool, error)
	// SessionExists tells whether the database holds session id, also
	// one being deleted.
	SessionExists(id string) (bool, error)
	// SessionEntryCount returns how many entries session id holds; a
	// session missing (or being deleted) matches [ErrNotFound].
	SessionEntryCount(id string) (int64, error)
	// SessionEntryIDs returns the ids of session id's entries, in
	// append order; a session missing (or being deleted) matches
	// [ErrNotFound].
	SessionEntryIDs(id string) ([]string, error)
	// EntryRaw returns the JSON of entry entryID of session sessionID as
	// stored; a missing entry matches [ErrNotFound].
	EntryRaw(sessionID, entryID string) (string, error)
}

// DatabaseSession is a session of a [Database]: the per-session
// [Storage], with [StateReader], [BatchAppender] and [InfoReader], and
// its id.
type DatabaseSession interface {
	Storage
	StateReader
	BatchAppender
	InfoReader
	// ID returns the session id.
	ID() string
	// AppendAll appends drafts in order, each under the one before (the
	// first under the current leaf), in one transaction: all of them or,
	// on error, none. The guard in opts is checked once, against the leaf
	// before the first. It returns the stored entries.
	AppendAll(ctx context.Context, drafts []Draft, opts AppendOptions) ([]Entry, error)
}

// TextIndex is a private full-text index of a few texts (see
// [DatabaseTx.TextIndex]). It is not safe for concurrent use.
type TextIndex interface {
	// MatchKeys returns the keys of up to limit texts matching match,
	// greatest key first.
	MatchKeys(ctx context.Context, match MatchQuery, limit int) ([]int64, error)
	// ExpandTerms returns the terms t with from <= t < to, ascending, at
	// most limit of them.
	ExpandTerms(ctx context.Context, from, to string, limit int) ([]string, error)
	// Close drops the index.
	Close() error
}

// InfoReader is implemented by a [Storage] that is a session of a
// [Database]: its row, as a list shows it.
type InfoReader interface {
	// Info returns the session's [SessionInfo], read from its row as
	// [DatabaseTx.SessionInfo] reads it: one row. A session deleted
	// since it was opened matches [ErrNotFound].
	Info(ctx context.Context) (SessionInfo, error)
}

// SessionInfo is one session as a list shows it, read from its row
// alone.
type SessionInfo struct {
	// ID is the session id.
	ID string `json:"id"`
	// Name is the session name, "" when it has none.
	Name string `json:"name,omitempty"`
	// Cwd is the session's working directory.
	Cwd string `json:"cwd"`
	// CreatedAt is the header timestamp (ISO-8601).
	CreatedAt string `json:"createdAt"`
	// UpdatedAt is when the session last changed (ISO-8601): its last
	// entry's timestamp, or CreatedAt when that is later, as for an empty
	// session or a fork, whose copied entries are older than it
	// ([LastChange]).
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
	// Metadata is the JSON given when the session was made, nil when
	// none.
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// ListInfo returns the row's message count and first message as pi's
// session list gives them ([ListInfo]): every message entry counted,
// system messages included, and the first user message's text, or
// [NoMessages] when the session has none.
func (in SessionInfo) ListInfo() ListInfo {
	first := in.FirstUserMessage
	if first == "" {
		first = NoMessages
	}
	return ListInfo{MessageCount: in.Messages, FirstMessage: first}
}

// ListedSession is a row of [DatabaseTx.ListSessions]: the session and
// its key, which a cursor carries to break ties of UpdatedAt.
type ListedSession struct {
	Key  int64
	Info SessionInfo
}

// ListQuery selects a page of [DatabaseTx.ListSessions].
type ListQuery struct {
	// Cwd keeps the sessions of this working directory (exact match).
	Cwd string
	// Name keeps the sessions whose name contains it, ignoring ASCII
	// case.
	Name string
	// Limit is how many rows to return (> 0).
	Limit int
	// AfterKey, when not 0, starts the page strictly after the session
	// with AfterUpdated and AfterKey in the list's order.
	AfterUpdated string
	AfterKey     int64
}

// ExportHead is what an export writes before a session's entries.
type ExportHead struct {
	// Meta is the session's header.
	Meta SessionMeta
	// Leaf is the current leaf id, "" when null.
	Leaf string
	// Entries counts the session's entries.
	Entries int64
}

// RawEntry is one stored entry as [DatabaseTx.RawEntries] gives it.
type RawEntry struct {
	Type EntryType
	ID   string
	// Raw is the entry's JSON exactly as stored, valid during the call.
	Raw []byte
}

// UnknownTypeRow counts the entries of one type this version does not
// know in one session.
type UnknownTypeRow struct {
	SessionID string
	// File is the first path the session was imported from, "" when none.
	File  string
	Type  EntryType
	Count int
}

// IndexSpan is a run of one session's entries, seq From..To.
type IndexSpan struct {
	Session  int64 // the session's key
	From, To int64
}

// IndexedPast returns how many of session's entries the index holds once
// the spans of after are written too, of indexed that it holds now: the
// rule by which [DatabaseTx.NextIndexChunk] reads past a chunk being
// written.
func IndexedPast(session, indexed int64, after []IndexSpan) int64 {
	for _, sp := range after {
		if sp.Session == session {
			indexed = max(indexed, sp.To)
		}
	}
	return indexed
}

// IndexChunk is one transaction's worth of pending entries for the
// search index (see [DatabaseTx.NextIndexChunk]).
type IndexChunk struct {
	// Spans are the runs of entries the chunk holds.
	Spans []IndexSpan
	// Entries counts them.
	Entries int64
	// More reports that entries beyond the chunk were pending.
	More bool
	// Text is the chunk's text in the engine's own encoding, for
	// [DatabaseTx.WriteIndexChunk] of the same engine alone.
	Text []byte
}

// SearchScope narrows a search.
type SearchScope struct {
	// SessionID keeps one session (exact id); a session that does not
	// exist matches [ErrNotFound].
	SessionID string
	// Cwd keeps the sessions of this working directory.
	Cwd string
}

// KeyText is an entry's indexed text and key.
type KeyText struct {
	Key  int64
	Text string
}

// PendingTexts is what [DatabaseTx.PendingTexts] reads.
type PendingTexts struct {
	// Texts are the pending entries read that have text.
	Texts []KeyText
	// Read counts the pending entries read, with text or not.
	Read int64
	// Total counts every pending entry in scope, read or not.
	Total int64
}

// HitRow is what a search shows of one entry.
type HitRow struct {
	Key            int64
	SessionID      string
	EntryID        string
	Type           string
	Role           string
	Timestamp      string
	Cwd            string
	SessionName    string
	OnActiveBranch bool
	// Text is the entry's indexed text, when asked for.
	Text string
}

// ErrBadQuery is returned for a search query that cannot be parsed, or
// that the engine refuses (a [*BadQueryError]).
var ErrBadQuery = errors.New("malformed search query")

// BadQueryError is an engine's refusal of a search query.
type BadQueryError struct {
	// Reason is the engine's reason, without its error code.
	Reason string
}

// Error returns the reason.
func (e *BadQueryError) Error() string { return e.Reason }

// Is makes a BadQueryError match [ErrBadQuery].
func (e *BadQueryError) Is(target error) bool { return target == ErrBadQuery }

// SessionNotFoundError reports a session that does not exist; it
// matches [ErrNotFound].
type SessionNotFoundError struct{ ID string }

// Error names the session.
func (e *SessionNotFoundError) Error() string { return "session " + e.ID + " not found" }

// Is makes a SessionNotFoundError match [ErrNotFound].
func (e *SessionNotFoundError) Is(target error) bool { return target == ErrNotFound }

// SessionExistsError refuses a new session whose id the database holds
// already; it matches [ErrConflict]. Every engine's
// [DatabaseTx.NewSession] returns it as it is, not wrapped in a step:
// it says what was refused, and so reads the same whatever the engine,
// in a push's conflict as in the answer to a create.
type SessionExistsError struct{ ID string }

// Error names the session.
func (e *SessionExistsError) Error() string { return "session " + e.ID + " already exists" }

// Is makes a SessionExistsError match [ErrConflict].
func (e *SessionExistsError) Is(target error) bool { return target == ErrConflict }
