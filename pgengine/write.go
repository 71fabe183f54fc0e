package pgengine

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
)

// session is the locked sessions row of a write transaction, changed in
// memory by each entry and written back once by save.
type session struct {
	pk     int64
	leafID sql.NullString
	// leaf is the leaf's placement, nil when the leaf is null: the parent
	// of the next append, read with the lock.
	leaf      *placement
	name      sql.NullString
	firstUser sql.NullString
	// created is the session's creation time, updatedAt its last change
	// (sessiontree.LastChange).
	created, updatedAt string
	count              int64 // entries stored: the next entry's seq is count + 1
	tally              sessiontree.Tally
	// shape is the tree's counts (shape.go); its Labels are not the
	// write's: a trigger on labels keeps the row's (migration 21).
	shape sessiontree.Shape
	// usage are the write's usage records, written by save.
	usage usageAdds
	// unclaimed is the session written without a claim, which save
	// checks nobody holds; nil for a write through a claim (lock checked
	// it).
	unclaimed *Storage
	// txid is the id of the pipelined write's transaction (probeQuery),
	// which the Storage keeps with the row once it commits (rowcache.go).
	txid int64
}

// lockRow is the sessions row a write reads under its lock, with its
// leaf's placement.
type lockRow struct {
	counters
	LeafID sql.NullString `db:"leaf_id"`
	nullPlacement
	Name      sql.NullString `db:"name"`
	FirstUser sql.NullString `db:"first_user_text"`
	UpdatedAt string         `db:"updated_at"`
	// LastSeq is the seq of the log's last entry (null: none), which
	// must be the row's entry count: the next append's seq is count + 1.
	LastSeq sql.NullInt64 `db:"last_seq"`
	treeCounts
}

// lockColumns are a locked sessions row's columns (lockRow), from s and
// its leaf's entry p (lockLeaf), and the seq of the session's last entry
// (one probe of the entries' primary key).
const lockColumns = `s.leaf_id, s.name, s.first_user_text, s.updated_at,
	(SELECT max(l.seq) FROM entries l WHERE l.session = s.pk) AS last_seq,
	p.seq AS leaf_seq, p.depth AS leaf_depth, p.start_depth AS leaf_start_depth,
	p.thinking_seq AS leaf_thinking_seq, p.model_seq AS leaf_model_seq, p.tools_seq AS leaf_tools_seq,
	p.type = 'leaf' AS leaf_is_leaf, ` + shapeColumns + `, ` + countersColumns

// lockLeaf joins the leaf's entry p to the sessions row s.
const lockLeaf = `LEFT JOIN entries p ON p.session = s.pk AND p.seq = s.leaf_seq`

// lockQuery locks session $1's row for the transaction and reads it.
const lockQuery = `SELECT ` + lockColumns + ` FROM sessions s ` + lockLeaf + `
	WHERE s.pk = $1 AND NOT s.deleting FOR UPDATE OF s`

// lock locks the session's row for the transaction and reads it: writers
// to the same session queue here, writers to others do not. It refuses a
// write the session's claim forbids.
func (s *Storage) lock(ctx context.Context, tx *sqlx.Tx) (*session, error) {
	var r lockRow
	err := tx.GetContext(ctx, &r, lockQuery, s.pk)
	if err == nil && r.Entries != r.LastSeq.Int64 {
		// A lock that waited for another writer returns the row as that
		// writer left it, but the entries as the statement's snapshot,
		// taken before the wait, saw them (READ COMMITTED's recheck of
		// a locked row): the count past the last seq read. Read again,
		// in a statement of its own under the lock now held.
		r = lockRow{}
		err = tx.GetContext(ctx, &r, lockQuery, s.pk)
	}
	if err != nil {
		return nil, s.lockErr(err)
	}
	// Under the row lock, which every write takes: the writer must still
	// hold the session (claim.go). A write without a claim is checked by
	// save, in the statement that writes the row back, still under the
	// lock: a round trip less, and a refused write rolls back all the
	// same.
	if s.claim != nil {
		if err := s.checkClaim(ctx, tx); err != nil {
			return nil, err
		}
	}
	return s.sessionOf(&r)
}

// lockErr is the error of a lockQuery that failed: no row is a missing
// session, a wait past the server's bound ErrLocked (lockWaitErr).
func (s *Storage) lockErr(err error) error {
	if errors.Is(err, sql.ErrNoRows) || errors.Is(err, pgx.ErrNoRows) {
		return &SessionNotFoundError{ID: s.meta.ID}
	}
	if isLockNotAvailable(err) {
		s.db.contended.Store(s.pk) // for WaitForLock
	}
	return lockWaitErr(err)
}

// sessionOf is the write's session from its locked row. A row whose
// entry count is not its log's last seq is refused as corrupt: the next
// append would take a seq far past the log (a count damaged high) or one
// an entry has (damaged low).
func (s *Storage) sessionOf(r *lockRow) (*session, error) {
	if r.Entries != r.LastSeq.Int64 {
		return nil, &sessiontree.CorruptError{Reason: fmt.Sprintf("session %s counts %d entries, but its log ends at seq %d",
			s.meta.ID, r.Entries, r.LastSeq.Int64)}
	}
	st := &session{pk: s.pk, leafID: r.LeafID, leaf: r.nullPlacement.placement(),
		name: r.Name, firstUser: r.FirstUser, created: s.meta.CreatedAt, updatedAt: r.UpdatedAt, count: r.Entries,
		shape: r.treeCounts.shape()}
	if s.claim == nil {
		st.unclaimed = s
	}
	var err error
	if st.tally, err = r.counters.tally(); err != nil {
		return nil, err
	}
	return st, nil
}

// save writes the row back, and the write's usage records, in one
// statement that also refuses a session written without a claim while
// someone holds a live one (the write then rolls back).
func (st *session) save(ctx context.Context, tx *sqlx.Tx) error {
	query, args, err := st.saveStatement(ctx, tx)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, query, args...)
	return st.saveErr(err)
}

// saveStatement is save's statement and its arguments. Usage records of
// a write that adds several to one row are written first, through tx (a
// single append has one at most, and needs no tx).
func (st *session) saveStatement(ctx context.Context, tx *sqlx.Tx) (string, []any, error) {
	c, err := countersOf(&st.tally)
	if err != nil {
		return "", nil, err
	}
	leafSeq, depth, boundary := st.leafColumns()
	args := []any{st.pk, leafSeq, st.leafID, depth, boundary, st.name, st.firstUser, st.updatedAt,
		c.Entries, c.Messages, c.UserMessages, c.AssistantMessages, c.ToolResults, c.ToolCalls,
		c.Input, c.Output, c.CacheRead, c.CacheWrite, c.Cost, c.Buckets, st.claimCheckTime(),
		st.shape.Branches, st.shape.Roots, st.shape.Compactions}
	adds, err := st.usage.flush(ctx, tx, st.pk)
	if err != nil {
		return "", nil, err
	}
	query := saveQuery
	if adds {
		args = append(args, st.usage.arrays()...)
		query = saveUsageQuery
	}
	st.usage = usageAdds{}
	return query, args, nil
}

// leafColumns are the session row's copy of the leaf's placement: its
// key, depth and boundary (where its path starts), null and 0 when the
// leaf is null.
func (st *session) leafColumns() (seq sql.NullInt64, depth, boundary int) {
	if st.leaf == nil {
		return sql.NullInt64{}, 0, 0
	}
	return sql.NullInt64{Int64: st.leaf.Seq, Valid: true}, st.leaf.Depth, st.leaf.StartDepth
}

// saveRow writes session $1's row back ($2 to $20, the tree's counts
// $22 to $24) and refuses the write when someone holds a live claim on
// the session ($21: the time after which an unexpired claim refuses it).
const saveRow = `s AS (UPDATE sessions SET leaf_seq = $2, leaf_id = $3,
		leaf_depth = $4, boundary_depth = $5, name = $6, first_user_text = $7, updated_at = $8, entry_count = $9,
		message_count = $10, user_messages = $11, assistant_messages = $12, tool_results = $13, tool_calls = $14,
		input_tokens = $15, output_tokens = $16, cache_read_tokens = $17, cache_write_tokens = $18, cost = $19,
		usage_buckets = $20, branch_count = $22, root_count = $23, compaction_count = $24 WHERE pk = $1)
		SELECT refuse_claimed_write(holder, expires_ms) FROM claims
		WHERE session = $1 AND holder <> '' AND expires_ms > $21`

// saveQuery and saveUsageQuery are saveStatement's statements, the
// second adding the write's usage records (usageUpsert, $25 to $31).
// They are built once: a statement built at each append was a tenth of
// what a writer allocated.
var (
	saveQuery      = `WITH ` + saveRow
	saveUsageQuery = `WITH u AS (` + usageUpsert(25, false) + `), ` + saveRow
)

// codeClaimedWrite is the error refuse_claimed_write raises (migration
// 8): the holder in its detail, the expiry (Unix ms) in its hint.
const codeClaimedWrite = "ST001"

// saveErr is the error of save's statement: the claim refusal it raises
// becomes the session's ClaimedError.
func (st *session) saveErr(err error) error {
	var pg *pgconn.PgError
	if !errors.As(err, &pg) || pg.Code != codeClaimedWrite || st.unclaimed == nil {
		return err
	}
	expires, _ := strconv.ParseInt(pg.Hint, 10, 64)
	return claimedError(st.unclaimed.meta.ID, pg.Detail, expires)
}

// claimCheckTime is the time (Unix ms) after which a claim that has not
// expired refuses the write: now for a write without a claim, never
// for one through a claim.
func (st *session) claimCheckTime() int64 {
	if st.unclaimed == nil {
		return math.MaxInt64
	}
	return st.unclaimed.db.opts.now().UnixMilli()
}

// write runs fn on the locked session in a write transaction and saves
// the row.
func (s *Storage) write(ctx context.Context, op string, fn func(tx *sqlx.Tx, st *session) error) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	return s.db.update(ctx, op, func(tx *sqlx.Tx) error { return s.writeIn(ctx, tx, fn) })
}

// writeIn is write's body in a transaction of the caller's: it locks the
// session's row, runs fn and saves the row.
func (s *Storage) writeIn(ctx context.Context, tx *sqlx.Tx, fn func(tx *sqlx.Tx, st *session) error) error {
	st, err := s.lock(ctx, tx)
	if err != nil {
		return err
	}
	if err := fn(tx, st); err != nil {
		return err
	}
	return st.save(ctx, tx)
}

// Append adds an entry under the current leaf and makes it the leaf.
func (s *Storage) Append(ctx context.Context, d sessiontree.Draft, opts sessiontree.AppendOptions) (sessiontree.Entry, error) {
	if err := sessiontree.CheckDraft(d); err != nil {
		return sessiontree.Entry{}, err
	}
	return s.appendDraft(ctx, d, opts)
}

// SetLeaf appends a leaf entry moving the leaf to target.
func (s *Storage) SetLeaf(ctx context.Context, target string, opts sessiontree.AppendOptions) (sessiontree.Entry, error) {
	if !storableText(target) {
		// Before the draft, whose JSON would carry the id changed
		// (U+FFFD for each byte that is not UTF-8) or be refused.
		return sessiontree.Entry{}, cmp.Or(s.check(ctx), error(&sessiontree.EntryNotFoundError{ID: target}))
	}
	d, err := sessiontree.LeafDraft(target)
	if err != nil {
		return sessiontree.Entry{}, err
	}
	d.Timestamp = opts.Timestamp // empty: appendDraft stamps now
	return s.appendDraft(ctx, d, opts)
}

// AppendUnder appends d under parent instead of the current leaf, in one
// transaction under the session's lock: the branch moves to parent and
// the entry is appended there, so the move happens with the entry or not
// at all. No leaf entry is written.
func (s *Storage) AppendUnder(ctx context.Context, parent string, d sessiontree.Draft, opts sessiontree.AppendOptions) (sessiontree.Entry, error) {
	if err := sessiontree.CheckDraft(d); err != nil {
		return sessiontree.Entry{}, err
	}
	var out sessiontree.Entry
	err := s.write(ctx, "append", func(tx *sqlx.Tx, st *session) error {
		if err := sessiontree.CheckLeafGuard(opts, st.leafID.String); err != nil {
			return err
		}
		if err := st.moveBranch(ctx, tx, parent); err != nil {
			return err
		}
		var err error
		out, err = st.addDraft(ctx, tx, d)
		return err
	})
	return stored(out, err)
}

// appendDraft builds d under the leaf read under the session's lock.
func (s *Storage) appendDraft(ctx context.Context, d sessiontree.Draft, opts sessiontree.AppendOptions) (sessiontree.Entry, error) {
	if err := s.check(ctx); err != nil {
		return sessiontree.Entry{}, err
	}
	if s.pipelines(d) {
		if e, err := s.appendPiped(ctx, d, opts); !errors.Is(err, errNotPiped) {
			return stored(e, err)
		}
	}
	var out sessiontree.Entry
	err := s.write(ctx, "append", func(tx *sqlx.Tx, st *session) error {
		if err := sessiontree.CheckLeafGuard(opts, st.leafID.String); err != nil {
			return err
		}
		var err error
		out, err = st.addDraft(ctx, tx, d)
		return err
	})
	return stored(out, err)
}

// stored is what an append returns: e, or on error the zero Entry with
// err, as the sessiontree.Storage contract says. The paths of a write
// build the entry before it is stored (a refused id, target, value or
// commit comes after), so each append method returns through stored.
func stored(e sessiontree.Entry, err error) (sessiontree.Entry, error) {
	if err != nil {
		return sessiontree.Entry{}, err
	}
	return e, nil
}

// AppendAll appends drafts in order, each under the one before (the first
// under the current leaf), in one transaction: all of them or, on error,
// none. The guard in opts is checked once, against the leaf before the
// first. It returns the stored entries.
func (s *Storage) AppendAll(ctx context.Context, drafts []sessiontree.Draft, opts sessiontree.AppendOptions) ([]sessiontree.Entry, error) {
	var out []sessiontree.Entry
	err := s.write(ctx, "append", func(tx *sqlx.Tx, st *session) error {
		if err := sessiontree.CheckLeafGuard(opts, st.leafID.String); err != nil {
			return err
		}
		out = make([]sessiontree.Entry, 0, len(drafts))
		for i, d := range drafts {
			if err := sessiontree.CheckDraft(d); err != nil {
				return err
			}
			e, err := st.addDraft(ctx, tx, d)
			if err != nil {
				return fmt.Errorf("draft %d: %w", i+1, err)
			}
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// addDraft builds d under the leaf (the append rule), giving it an id and
// a time when it has none, and stores it. A generated id is tried as it
// is, without a look-up: one the session has already aborts the
// transaction with errIDTaken, which the write tries again, with a new
// id (retryable).
func (st *session) addDraft(ctx context.Context, tx *sqlx.Tx, d sessiontree.Draft) (sessiontree.Entry, error) {
	e, f, err := st.build(d)
	if err != nil {
		return e, err
	}
	e, err = st.add(ctx, tx, e, &f)
	return e, st.idErr(d, e, err)
}

// build builds d under the leaf, with a new id and the current time when
// it has none, and reads its facts.
func (st *session) build(d sessiontree.Draft) (sessiontree.Entry, sessiontree.Facts, error) {
	id := d.ID
	if id == "" {
		id = sessiontree.NewEntryID(nil)
	}
	ts := d.Timestamp
	if ts == "" {
		ts = sessiontree.FormatTime(now())
	}
	e, f, err := sessiontree.BuildEntryFacts(d, id, st.leafID.String, ts)
	if err == nil {
		err = storable(e)
	}
	return e, f, err
}

// storable refuses an entry whose JSON is not UTF-8 (a pi file's bytes
// are kept as they came), or that holds a NUL where the engine keeps it
// as text of its own ([nulColumn]): PostgreSQL's text, which keeps every
// other JSON byte for byte, cannot hold either, and the server's own
// refusal reads as a storage failure naming no entry.
func storable(e sessiontree.Entry) error {
	if !utf8.Valid(e.Raw) {
		return &sessiontree.InvalidEntryError{EntryID: e.ID, Reason: "its JSON is not UTF-8, which a PostgreSQL database cannot store as it is (a SQLite one can)"}
	}
	if name := nulColumn(e); name != "" {
		return &sessiontree.InvalidEntryError{EntryID: e.ID, Reason: "its " + name + " holds a NUL, which a PostgreSQL database cannot store (a SQLite one can)"}
	}
	for _, c := range []struct{ name, value string }{{"id", e.ID}, {"parentId", e.ParentID}} {
		if reason := tooLongKey(c.value); reason != "" {
			return &sessiontree.InvalidEntryError{EntryID: e.ID, Reason: "its " + c.name + " " + reason}
		}
	}
	return nil
}

// maxKeyBytes is the longest id or working directory the engine stores:
// the server's indexes on them take at most about 2,700 bytes a row
// (what the value compresses to), and refuse a longer one with an error
// naming no entry.
const maxKeyBytes = 2048

// tooLongKey says why value, an indexed text, is refused when it is
// longer than maxKeyBytes; "" when it is not.
func tooLongKey(value string) string {
	if len(value) <= maxKeyBytes {
		return ""
	}
	return fmt.Sprintf("is %d bytes, longer than a PostgreSQL database indexes (%d; a SQLite one takes it)", len(value), maxKeyBytes)
}

var _ sessiontree.EntryChecker = (*DB)(nil)

// CheckEntry returns the error the database's writes refuse e with when
// PostgreSQL cannot store it as it is ([storable]), nil when it can
// ([sessiontree.EntryChecker]).
func (db *DB) CheckEntry(e sessiontree.Entry) error { return storable(e) }

// nulColumn names the first of e's values the engine stores as text of
// its own (its id, parent, type, timestamp, target, the provider and
// model of its usage row) that holds a NUL, "" when none does. A NUL in
// JSON is written \u0000, so an entry without one is passed at once.
func nulColumn(e sessiontree.Entry) string {
	if !bytes.Contains(e.Raw, []byte(`\u0000`)) {
		return "" // the fields are the JSON's (DecodeEntry, BuildEntry)
	}
	for _, c := range []struct{ name, value string }{
		{"id", e.ID}, {"parentId", e.ParentID}, {"type", string(e.Type)}, {"timestamp", e.Timestamp},
		{"targetId", e.TargetID()}, {"provider or model", sessiontree.StatsOf(e).Bucket},
	} {
		if strings.Contains(c.value, "\x00") {
			return c.name
		}
	}
	return ""
}

// idErr is the error of storing e, built from d: a taken id the draft
// gave is a conflict; a generated one is errIDTaken, tried again.
func (st *session) idErr(d sessiontree.Draft, e sessiontree.Entry, err error) error {
	if errors.Is(err, errIDTaken) && d.ID != "" {
		return &sessiontree.IDTakenError{ID: e.ID}
	}
	return err
}

// errIDTaken is the refusal of an entry id the session has: the insert
// failed, and the transaction with it.
var errIDTaken = errors.New("entry id taken")

// insertEntry stores an entry and, unless $15 is false (a leaf entry),
// extends the branch with it (the parent is the branch's end).
const insertEntry = `WITH e AS (INSERT INTO entries (session, seq, id, parent_id, parent_seq, type, timestamp,
	depth, start_depth, thinking_seq, model_seq, tools_seq, target_id, raw, checksum)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $16) RETURNING session, depth, seq)
	INSERT INTO branch (session, depth, seq) SELECT session, depth, seq FROM e WHERE $15`

// insertArgs are insertEntry's arguments for e, whose row keeps r,
// placed at p under parent.
func (st *session) insertArgs(e sessiontree.Entry, r rowFacts, p placement, parent *placement) []any {
	return []any{st.pk, p.Seq, e.ID, nullString(e.ParentID), nullSeq(parent), string(e.Type), e.Timestamp,
		p.Depth, p.StartDepth, p.Thinking, p.Model, p.Tools, nullString(r.target), string(e.Raw),
		e.Type != sessiontree.TypeLeaf, r.checksum}
}

// insertErr is the error of insertEntry: errIDTaken for an id the
// session has.
func insertErr(err error) error {
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == codeUnique && pg.ConstraintName == "entries_session_id_key" {
		return fmt.Errorf("%w: %w", errIDTaken, err)
	}
	return err
}

// add stores e, with facts f, whose parent exists, and makes what the
// leaf rule says the leaf: the branch table follows. An id the session
// has already is errIDTaken, and the transaction is aborted.
func (st *session) add(ctx context.Context, tx *sqlx.Tx, e sessiontree.Entry, f *sessiontree.Facts) (sessiontree.Entry, error) {
	if err := st.checkTarget(ctx, tx, &f.Effects); err != nil {
		return e, err
	}
	parent, err := st.moveToParent(ctx, tx, e)
	if err != nil {
		return e, err
	}
	p, err := st.place(ctx, tx, e, f, parent)
	if err != nil {
		return e, err
	}
	e.Seq = p.Seq
	if err := st.countEntry(ctx, tx, e.Type, parent, p.Seq); err != nil {
		return e, err
	}
	if _, err := tx.ExecContext(ctx, insertEntry, st.insertArgs(e, rowOf(f), p, parent)...); err != nil {
		return e, insertErr(err)
	}
	if e.Type != sessiontree.TypeLeaf {
		st.setLeaf(e.ID, &p)
	} else if err := st.moveBranch(ctx, tx, e.TargetID()); err != nil {
		return e, err
	}
	return e, st.noteStats(ctx, tx, e, f.Stats)
}

// checkTarget checks the target of an appended draft's entry, with
// effects f, by the root's rule (sessiontree.CheckNewTarget): a leaf or
// label entry's must exist.
func (st *session) checkTarget(ctx context.Context, tx *sqlx.Tx, f *sessiontree.Effects) error {
	return sessiontree.CheckNewTarget(f, storedBefore{ctx: ctx, q: tx, session: st.pk, seq: math.MaxInt64})
}

// storedBefore is the sessiontree.Earlier of the entries of a session
// stored before the one of sequence number seq, for the target checks.
type storedBefore struct {
	ctx     context.Context
	q       sqlx.QueryerContext
	session int64
	seq     int64
}

// Taken implements sessiontree.Earlier: whether an entry before seq has
// id (false when the lookup fails, which Exists reports).
func (s storedBefore) Taken(id string) bool { ok, _ := s.Exists(id); return ok }

// Exists implements sessiontree.Earlier: whether an entry before seq has
// id.
func (s storedBefore) Exists(id string) (bool, error) {
	p, ok, err := placementOf(s.ctx, s.q, s.session, id)
	return ok && p.Seq < s.seq, err
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// moveToParent makes the branch the path to e's parent (an append's
// parent is the leaf already; a batch's may be anywhere) and returns the
// parent's placement, nil for a root.
func (st *session) moveToParent(ctx context.Context, tx *sqlx.Tx, e sessiontree.Entry) (*placement, error) {
	if e.ParentID == "" {
		return nil, st.moveBranch(ctx, tx, "")
	}
	if st.leafID.String != e.ParentID || st.leaf == nil {
		if err := st.moveBranch(ctx, tx, e.ParentID); errors.Is(err, sessiontree.ErrNotFound) {
			return nil, &sessiontree.CorruptError{EntryID: e.ID, Reason: "parent " + e.ParentID + " does not exist"}
		} else if err != nil {
			return nil, err
		}
	}
	return st.leaf, nil
}

func nullSeq(p *placement) any {
	if p == nil {
		return nil
	}
	return p.Seq
}

// place computes where e, with facts f, goes under parent (nil for a
// root): its seq, depth, where its path starts, and the state pointers
// (placeEntry); a compaction's first kept entry is looked up on the
// branch, which is the path to e's parent now.
func (st *session) place(ctx context.Context, tx *sqlx.Tx, e sessiontree.Entry, f *sessiontree.Facts, parent *placement) (placement, error) {
	return placeEntry(st.count+1, e, &f.Effects, parent, func(id string) (int64, error) {
		var depth int64
		err := tx.GetContext(ctx, &depth, `SELECT e.depth FROM entries e JOIN branch b
			ON b.session = e.session AND b.depth = e.depth AND b.seq = e.seq
			WHERE e.session = $1 AND e.id = $2`, st.pk, id)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, nil
		}
		return depth, err
	})
}

// ancestorDepth returns the depth of entry id when it is on the path to
// the entry being placed, its parent included; 0 when it is not.
type ancestorDepth func(id string) (int64, error)

// placeEntry is the root package's placement rule (sessiontree.Place)
// of e, entry seq with effects fx, under parent (nil for a root), in this
// package's columns: the writes' (place) and Check's.
func placeEntry(seq int64, e sessiontree.Entry, fx *sessiontree.Effects, parent *placement, ancestor ancestorDepth) (placement, error) {
	var rp *sessiontree.Placement
	if parent != nil {
		r := parent.root()
		rp = &r
	}
	p, err := sessiontree.Place(e, fx, seq, rp, ancestor)
	return fromRoot(p), err
}

// noteFirstUser sets first, the session's first user text (pi's
// session list), from e when it has none yet.
func noteFirstUser(first *sql.NullString, e sessiontree.Entry) {
	if first.Valid {
		return
	}
	if text, ok := sessiontree.UserText(e); ok {
		*first = sql.NullString{String: text, Valid: true}
	}
}

// setLeaf makes entry id, placed at p, the leaf ("" and nil: none).
func (st *session) setLeaf(id string, p *placement) {
	st.leafID = sql.NullString{String: id, Valid: id != ""}
	st.leaf = p
}

// clearBranch empties session $1's branch table.
const clearBranch = `DELETE FROM branch WHERE session = $1`

// moveBranch makes the branch table the full path of target ("": empty),
// rewriting only the rows below where the old and new paths meet. A
// target that does not exist is an EntryNotFoundError.
func (st *session) moveBranch(ctx context.Context, tx *sqlx.Tx, target string) error {
	if target == "" {
		st.setLeaf("", nil)
		_, err := tx.ExecContext(ctx, clearBranch, st.pk)
		return err
	}
	if target == st.leafID.String && st.leaf != nil {
		return nil
	}
	p, ok, err := placementOf(ctx, tx, st.pk, target)
	if err != nil || !ok {
		return cmpErr(err, &sessiontree.EntryNotFoundError{ID: target})
	}
	var up []upRow
	if err := tx.SelectContext(ctx, &up, upQuery, st.pk, p.Seq, 1); err != nil {
		return err
	}
	meet, add := 0, up
	if last := up[len(up)-1]; last.OnBranch {
		meet, add = last.Depth, up[:len(up)-1]
	} else if last.ParentID.Valid || last.Depth != 1 {
		return &sessiontree.CorruptError{EntryID: last.ID, Reason: "parent " + last.ParentID.String + " does not exist where the tree needs it"}
	}
	depths, seqs := make([]int64, len(add)), make([]int64, len(add))
	for i, r := range add {
		depths[i], seqs[i] = int64(r.Depth), r.Seq
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM branch WHERE session = $1 AND depth > $2`, st.pk, meet); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO branch (session, depth, seq)
		SELECT $1, d, s FROM unnest($2::bigint[], $3::bigint[]) AS t (d, s)`, st.pk, depths, seqs); err != nil {
		return err
	}
	st.setLeaf(target, &p)
	return nil
}

// noteStats updates what the row keeps for e, which adds es to the
// stats: counters, labels, name, title, time.
func (st *session) noteStats(ctx context.Context, tx *sqlx.Tx, e sessiontree.Entry, es sessiontree.EntryStats) error {
	st.tally.AddEntryStats(es)
	st.usage.add(e, es)
	st.count++
	st.updatedAt = sessiontree.LastChange(st.created, e.Timestamp)
	noteFirstUser(&st.firstUser, e)
	switch e.Type {
	case sessiontree.TypeSessionInfo:
		name := sessiontree.NameOf(e)
		st.name = sql.NullString{String: name, Valid: name != ""}
	case sessiontree.TypeLabel:
		return st.label(ctx, tx, e)
	}
	return nil
}

// label records the label e, stored, sets (or clears) on its target; a
// label of an entry not stored before it labels nothing
// (sessiontree.CheckTarget).
func (st *session) label(ctx context.Context, tx *sqlx.Tx, e sessiontree.Entry) error {
	f := sessiontree.EffectsOf(e, "")
	if err := sessiontree.CheckTarget(&f, storedBefore{ctx: ctx, q: tx, session: st.pk, seq: e.Seq}); err != nil || !f.Label {
		return err
	}
	if f.LabelText == "" {
		_, err := tx.ExecContext(ctx, `DELETE FROM labels WHERE session = $1 AND target_id = $2`, st.pk, f.Target)
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO labels (session, target_id, label, entry_seq) VALUES ($1, $2, $3, $4)
		ON CONFLICT (session, target_id) DO UPDATE SET label = EXCLUDED.label, entry_seq = EXCLUDED.entry_seq`,
		st.pk, f.Target, f.LabelText, e.Seq)
	return err
}
