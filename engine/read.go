package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"

	"github.com/sessiontree/sessiontree"
)

// Meta returns the session's metadata, kept from when it was opened (it
// never changes).
func (s *Storage) Meta(ctx context.Context) (sessiontree.SessionMeta, error) {
	if err := s.check(ctx); err != nil {
		return sessiontree.SessionMeta{}, err
	}
	return s.meta, nil
}

// one reads values of the session row with a single statement.
func (s *Storage) one(ctx context.Context, op, query string, dest ...any) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	err := s.db.read(ctx, func(r q) error { return r.row(query, args(s.pk), dest...) })
	if errors.Is(err, sql.ErrNoRows) {
		err = &SessionNotFoundError{ID: s.meta.ID}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", op, translate(err))
	}
	return nil
}

// Leaf returns the current leaf id, "" when the leaf is null: one row.
func (s *Storage) Leaf(ctx context.Context) (string, error) {
	var leaf string
	return leaf, s.one(ctx, "read leaf", qSessionLeaf, &leaf)
}

// Name returns the session name, "" when it has none: one row.
func (s *Storage) Name(ctx context.Context) (string, error) {
	var name string
	return name, s.one(ctx, "read name", qSessionName, &name)
}

// Stats returns the counts, usage totals and breakdown kept in the
// session row (one row), the breakdown in pi's order
// (sessiontree.SortBreakdown).
func (s *Storage) Stats(ctx context.Context) (sessiontree.Stats, error) {
	if err := s.check(ctx); err != nil {
		return sessiontree.Stats{}, err
	}
	var st sessiontree.Stats
	var buckets []bucket
	err := s.db.read(ctx, func(r q) (err error) {
		st, buckets, err = s.stats(r)
		return err
	})
	if err != nil {
		return sessiontree.Stats{}, fmt.Errorf("read stats: %w", translate(err))
	}
	breakdown := make([]sessiontree.UsageBucket, len(buckets))
	for i, b := range buckets {
		breakdown[i] = sessiontree.UsageBucket{Key: b.key, Cost: b.cost, Tokens: b.tokens}
	}
	st.Breakdown = sessiontree.SortBreakdown(breakdown)
	return st, nil
}

// stats reads the stored stats, without Breakdown, and the usage buckets
// in order of first use.
func (s *Storage) stats(r q) (sessiontree.Stats, []bucket, error) {
	var st sessiontree.Stats
	var u sessiontree.Usage
	var breakdown []byte
	err := r.row(qSessionStats, args(s.pk), &st.Entries, &st.TotalMessages, &st.UserMessages, &st.AssistantMessages,
		&st.ToolResults, &st.ToolCalls, &u.Input, &u.Output, &u.CacheRead, &u.CacheWrite, &u.Cost, &breakdown)
	if errors.Is(err, sql.ErrNoRows) {
		return st, nil, &SessionNotFoundError{ID: s.meta.ID}
	}
	if err != nil {
		return st, nil, err
	}
	st.AddUsage(u)
	buckets, err := parseBreakdown(breakdown)
	return st, buckets, err
}

// NewEntryID returns an 8-hex-character id not used in the session.
func (s *Storage) NewEntryID(ctx context.Context) (string, error) {
	if err := s.check(ctx); err != nil {
		return "", err
	}
	var id string
	err := s.db.read(ctx, func(r q) error {
		var qerr error
		id = sessiontree.NewEntryID(func(id string) bool { return s.taken(r, id, &qerr) })
		return qerr
	})
	if err != nil {
		return "", fmt.Errorf("new entry id: %w", translate(err))
	}
	return id, nil
}

// taken reports whether id is used; a query error is kept in *errp and
// reported as taken, so the caller stops trying.
func (s *Storage) taken(x q, id string, errp *error) bool {
	var n int
	if err := x.row(qEntryTaken, args(s.pk, id), &n); err != nil {
		*errp = err
		return true
	}
	return n > 0
}

// scanEntry reads an entry from the columns entryCols lists, found in
// vals: the key, the JSON, its checksum and its canonical mark. JSON that
// does not match its checksum is a *checksumError (see q.entryError).
func scanEntry(vals []driver.Value) (sessiontree.Entry, error) {
	pk, ok0 := vals[0].(int64)
	raw, ok1 := vals[1].([]byte)
	if !ok0 || !ok1 {
		return sessiontree.Entry{}, fmt.Errorf("entry row of %T, %T", vals[0], vals[1])
	}
	sum, valid := vals[2].(int64)
	if reason := sessiontree.ChecksumProblem(raw, sum, valid); reason != "" {
		return sessiontree.Entry{}, &checksumError{pk: pk, reason: reason}
	}
	return scanFields(pk, raw, vals[3] != nil)
}

// scanFields reads an entry from its key and its JSON: the common fields
// from the JSON's start when the row is canonical, else by decoding it
// (rare: JSON written in another order than pi's).
func scanFields(pk int64, raw []byte, canonical bool) (sessiontree.Entry, error) {
	seq := pk & 0xffffffff
	if !canonical {
		e, err := sessiontree.DecodeEntryOwned(raw) // raw is the driver's copy, ours
		if err != nil {
			return e, &sessiontree.CorruptError{Reason: fmt.Sprintf("entry %d: stored JSON: %v", seq, err)}
		}
		e.Seq = seq
		return e, nil
	}
	h, ok := canonicalHead(raw)
	if !ok {
		return sessiontree.Entry{}, &sessiontree.CorruptError{Reason: fmt.Sprintf("entry %d is marked canonical but its JSON does not start with its fields", seq)}
	}
	return sessiontree.Entry{Seq: seq, Type: h.typ, ID: h.id, ParentID: h.parent, Timestamp: h.ts, Raw: raw}, nil
}

// entries runs a query of entry rows (see entryCols) and reads them; n,
// when known, is how many it returns.
func (x q) entries(n int, query string, args ...any) ([]sessiontree.Entry, error) {
	return x.appendEntries(make([]sessiontree.Entry, 0, n), query, args...)
}

// appendEntries runs a query of entry rows and appends them to out.
func (x q) appendEntries(out []sessiontree.Entry, query string, args ...any) ([]sessiontree.Entry, error) {
	r, err := x.rows(query, args...)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	for r.Next() {
		e, err := scanEntry(r.dest)
		if err != nil {
			r.Close()
			return nil, x.entryError(err)
		}
		out = append(out, e)
	}
	return out, r.Err()
}

// Entry returns one entry by id: one indexed row.
func (s *Storage) Entry(ctx context.Context, id string) (sessiontree.Entry, error) {
	if err := s.check(ctx); err != nil {
		return sessiontree.Entry{}, err
	}
	var list []sessiontree.Entry
	err := s.db.read(ctx, func(r q) (err error) {
		list, err = r.entries(1, qEntryByID, s.pk, id)
		return err
	})
	if err != nil {
		return sessiontree.Entry{}, fmt.Errorf("read entry %s: %w", id, translate(err))
	}
	if len(list) == 0 {
		return sessiontree.Entry{}, &sessiontree.EntryNotFoundError{ID: id}
	}
	return list[0], nil
}

// EntriesByType returns every entry of type t in append order: through
// the partial index entries_by_type, or for messages, which are most of a
// session, by the session's key range.
func (s *Storage) EntriesByType(ctx context.Context, t sessiontree.EntryType) ([]sessiontree.Entry, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	var list []sessiontree.Entry
	err := s.db.read(ctx, func(r q) (err error) {
		if t == sessiontree.TypeMessage {
			lo, hi := pkRange(s.pk)
			list, err = r.entries(0, qMessages, lo, hi)
		} else {
			list, err = r.entries(0, qByType, s.pk, string(t))
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read %s entries: %w", t, translate(err))
	}
	return list, nil
}

// Log returns up to limit entries with Seq > after, in append order: a
// range of the entries table's key.
func (s *Storage) Log(ctx context.Context, after int64, limit int) ([]sessiontree.Entry, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	lo, hi := pkRange(s.pk)
	if after >= hi-lo+1 {
		return []sessiontree.Entry{}, nil // past the largest possible seq
	}
	from := max(lo-1, entryPK(s.pk, max(after, 0)))
	lim := int64(limit)
	if limit <= 0 {
		lim = -1
	}
	var list []sessiontree.Entry
	err := s.db.read(ctx, func(r q) (err error) {
		list, err = r.entries(min(max(limit, 0), 1024), qLog, from, hi, lim)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read log: %w", translate(err))
	}
	return list, nil
}

// Label returns the current label of an entry, "" when it has none.
func (s *Storage) Label(ctx context.Context, id string) (string, error) {
	if err := s.check(ctx); err != nil {
		return "", err
	}
	var label string
	err := s.db.read(ctx, func(r q) error { return r.row(qLabel, args(s.pk, id), &label) })
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("read label of %s: %w", id, translate(err))
	}
	return label, nil
}

// Labels returns every current label by target id.
func (s *Storage) Labels(ctx context.Context) (map[string]string, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	out := map[string]string{}
	err := s.db.read(ctx, func(r q) error {
		rows, err := r.rows(qLabels, s.pk)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, label string
			if err := rows.Scan(&id, &label); err != nil {
				return err
			}
			out[id] = label
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("read labels: %w", translate(err))
	}
	return out, nil
}

// Path returns the path from entry from to the root or the compaction
// boundary, root first.
func (s *Storage) Path(ctx context.Context, from string) ([]sessiontree.Entry, error) {
	return s.path(ctx, from, false)
}

// FullPath returns the path from entry from to the root, root first.
func (s *Storage) FullPath(ctx context.Context, from string) ([]sessiontree.Entry, error) {
	return s.path(ctx, from, true)
}

// path reads a path in one snapshot. An entry on the active branch reads
// it from the materialized branch: its path is a prefix of the branch,
// starting at the entry's stored start depth (or at the root for a full
// path). Any other entry walks parent ids with a recursive query.
func (s *Storage) path(ctx context.Context, from string, full bool) ([]sessiontree.Entry, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	if from == "" {
		return nil, nil
	}
	var out []sessiontree.Entry
	err := s.db.view(ctx, func(r q) (err error) {
		out, err = s.readPath(r, from, full, q.branchRange)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read path from %s: %w", from, translate(err))
	}
	return out, nil
}

// rangeReader reads the entries of a session's branch rows at depths
// lo..hi, appended to out.
type rangeReader func(r q, out []sessiontree.Entry, session, lo, hi int64) ([]sessiontree.Entry, error)

// readPath reads the path from entry from; an entry on the active branch
// reads it through rng.
func (s *Storage) readPath(r q, from string, full bool, rng rangeReader) ([]sessiontree.Entry, error) {
	var pk, depth, start int64
	var onBranch bool
	err := r.row(qEntryPlace, args(s.pk, from), &pk, &depth, &start, &onBranch)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &sessiontree.EntryNotFoundError{ID: from}
	}
	if err != nil {
		return nil, err
	}
	if err := checkPlace(from, pk, depth, start); err != nil {
		return nil, err
	}
	if onBranch {
		lo := start
		if full {
			lo = 1
		}
		out, err := rng(r, make([]sessiontree.Entry, 0, depth-lo+1), s.pk, lo, depth)
		if err != nil {
			return nil, err
		}
		if int64(len(out)) != depth-lo+1 || out[len(out)-1].ID != from {
			return nil, &sessiontree.CorruptError{EntryID: from, Reason: "materialized branch has gaps"}
		}
		return out, nil
	}
	if full {
		start = 0
	}
	return s.walk(r, from, start)
}

// maxSizeHint bounds what [sizeHint] preallocates: a million entries,
// more than almost any session holds.
const maxSizeHint = 1 << 20

// sizeHint is how many elements a read preallocates for a list of n
// rows, n a count kept in the sessions row: within 0..maxSizeHint, so
// that a damaged count (Check reports it) makes no read panic or
// allocate what it says; a longer list grows as it is read.
func sizeHint(n int64) int { return int(min(max(n, 0), maxSizeHint)) }

// checkPlace refuses the stored place of entry id, key pk, unless
// 1 <= start <= depth <= its seq (an entry comes after its ancestors), so
// that a damaged row makes no read size a path by it: a start past the
// depth made a slice of negative capacity (a panic), a huge depth a read
// of as many branch rows.
func checkPlace(id string, pk, depth, start int64) error {
	if seq := pk & 0xffffffff; start < 1 || start > depth || depth > seq {
		return &sessiontree.CorruptError{EntryID: id,
			Reason: fmt.Sprintf("stored depth %d and start depth %d do not fit its place %d in the log", depth, start, seq)}
	}
	return nil
}

// walk runs the recursive path query from entry from up to depth start
// (0: to the root) and checks how it ended (walkEnd).
func (s *Storage) walk(r q, from string, start int64) ([]sessiontree.Entry, error) {
	lo, hi := pkRange(s.pk)
	var bound int64
	if err := r.row(qLastSeq, args(lo, hi), &bound); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	rows, err := r.rows(qWalk, s.pk, from, bound, start)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sessiontree.Entry
	var end walkState
	for rows.Next() {
		if err := end.scan(rows.dest); err != nil {
			return nil, err
		}
		e, err := scanEntry(rows.dest[3:])
		if err != nil {
			rows.Close()
			return nil, r.entryError(err)
		}
		end.step(e)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, &sessiontree.EntryNotFoundError{ID: from}
	}
	if err := end.check(out[len(out)-1], bound, start); err != nil {
		return nil, err
	}
	slices.Reverse(out)
	return out, nil
}

// walkState follows the rows of qWalk: the last row's step count, depth
// and stop flag, and the first entry whose depth is not its child's minus
// one.
type walkState struct {
	n, depth, prev int64
	stop           bool
	bad            string
}

// scan reads a row's step count, depth and stop flag.
func (w *walkState) scan(dest []driver.Value) error {
	w.prev = w.depth
	if err := assign(&w.n, dest[0]); err != nil {
		return err
	}
	if err := assign(&w.depth, dest[1]); err != nil {
		return err
	}
	return assign(&w.stop, dest[2])
}

// step takes the row's entry: each step of the walk goes up one depth.
func (w *walkState) step(e sessiontree.Entry) {
	if w.n > 1 && w.depth != w.prev-1 && w.bad == "" {
		w.bad = e.ID
	}
}

// check tells how a walk that ended at entry top went: up to the start
// depth, or to a root at depth 1, with a depth one less at each step;
// otherwise a parent is missing, the parent ids cycle, or the depths
// disagree with them (so a walk never ends early on a damaged row).
func (w *walkState) check(top sessiontree.Entry, bound, start int64) error {
	switch {
	case top.ParentID != "" && !w.stop && w.n >= bound:
		return &sessiontree.CorruptError{EntryID: top.ID, Reason: "cycle in parent ids"}
	case top.ParentID != "" && !w.stop:
		return &sessiontree.CorruptError{EntryID: top.ID, Reason: "parent " + top.ParentID + " does not exist"}
	case w.bad != "":
		return &sessiontree.CorruptError{EntryID: w.bad, Reason: "depth disagrees with parent ids"}
	case w.stop && w.depth != start, (top.ParentID == "") != (w.depth == 1):
		return &sessiontree.CorruptError{EntryID: top.ID, Reason: "depth disagrees with parent ids"}
	}
	return nil
}

// State returns the state at entry from: the entry points at the latest
// thinking-level, model and tools entries on its full path, so this reads
// at most four rows whatever the path's length.
func (s *Storage) State(ctx context.Context, from string) (sessiontree.State, error) {
	st := sessiontree.DefaultState()
	if err := s.check(ctx); err != nil {
		return st, err
	}
	if from == "" {
		return st, nil
	}
	var sr stateRows
	err := s.db.read(ctx, func(r q) error { return sr.read(r, s.pk, from) })
	if errors.Is(err, sql.ErrNoRows) {
		return st, fmt.Errorf("read state at %s: %w", from, &sessiontree.EntryNotFoundError{ID: from})
	}
	if err != nil {
		return st, fmt.Errorf("read state at %s: %w", from, translate(err))
	}
	for _, se := range sr.entries() {
		if se.pk.Valid {
			st.Apply(se.entry())
		}
	}
	return st, nil
}

// stateRows is what qState reads of an entry: its key and its three
// state entries.
type stateRows struct {
	pk                     int64
	thinking, model, tools stateEntry
}

// entries are sr's state entries, in the order of sessiontree.StateSetting.
func (sr *stateRows) entries() []*stateEntry {
	return []*stateEntry{&sr.thinking, &sr.model, &sr.tools}
}

// read reads the state rows of entry from of session and verifies them.
func (sr *stateRows) read(r q, session int64, from string) error {
	dest := []any{&sr.pk}
	for _, se := range sr.entries() {
		dest = append(dest, se.dest()...)
	}
	if err := r.row(qState, args(session, from), dest...); err != nil {
		return err
	}
	lo, _ := pkRange(session)
	for i, se := range sr.entries() {
		if err := se.verify(sessiontree.StateSetting(i), from, lo, sr.pk); err != nil {
			return r.entryError(err)
		}
	}
	return nil
}

// stateEntry is one of the state-setting entries qState reads: the
// pointer the entry holds (NULL when none), and the row it points at:
// its key (NULL when there is none), type, JSON and checksum.
type stateEntry struct {
	ptr, pk sql.NullInt64
	typ     sql.NullString
	raw     []byte
	sum     sql.NullInt64
}

// dest is where qState's columns for se go.
func (se *stateEntry) dest() []any {
	return []any{&se.ptr, &se.pk, &se.typ, &se.raw, &se.sum}
}

// entry is the entry pointed at, as much as State applies of it.
func (se *stateEntry) entry() sessiontree.Entry {
	return sessiontree.Entry{Type: sessiontree.EntryType(se.typ.String), Raw: se.raw}
}

// verify returns a *checksumError when the entry pointed at does not
// match its checksum, and a *sessiontree.CorruptError naming entry from,
// key pk, whose session's keys start at lo, when the pointer for setting
// s names no entry of the session at or before it that may set s
// (sessiontree.MaySet).
func (se *stateEntry) verify(s sessiontree.StateSetting, from string, lo, pk int64) error {
	if !se.ptr.Valid {
		return nil
	}
	if se.pk.Valid {
		if reason := sessiontree.ChecksumProblem(se.raw, se.sum.Int64, se.sum.Valid); reason != "" {
			return &checksumError{pk: se.pk.Int64, reason: reason}
		}
	}
	if !se.pk.Valid || se.ptr.Int64 < lo || se.ptr.Int64 > pk || !sessiontree.MaySet(s, se.entry()) {
		return &sessiontree.CorruptError{EntryID: from,
			Reason: fmt.Sprintf("state pointer to key %d: no entry of the session at or before it that sets the state", se.ptr.Int64)}
	}
	return nil
}
