package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sessiontree/sessiontree"
)

const qCheckEntries = `SELECT pk, session, seq, id, parent_id, parent_pk, type, timestamp, depth, start_depth,
       thinking_pk, model_pk, tools_pk, target_id, custom_type, role, CAST(raw AS BLOB), coalesce(canonical, 0), checksum
FROM entries WHERE pk BETWEEN ?1 AND ?2 ORDER BY pk`

const qCheckSession = `SELECT pk, leaf_pk, leaf_id, leaf_depth, boundary_depth, name, first_user_text, updated_at, deleting,
       id, version, created_at, cwd, coalesce(parent_session, ''), header_checksum
FROM sessions WHERE id = ?1`

const qCheckBranch = `SELECT depth, entry FROM branch WHERE session = ?1 ORDER BY depth`

const qSessionIDs = `SELECT id FROM sessions ORDER BY pk`

// Check verifies a session, or the whole database when sessionID is "".
//
// A session's check (the command line's check SESSION) reads that
// session and nothing else: its header against its checksum (see
// [sessiontree.HeaderChecksum]), its log replayed in append order against
// what the engine keeps (each stored row's JSON matches its checksum (see
// [sessiontree.EntryChecksum]) and the row agrees with the JSON, parents exist
// earlier, depths, compaction boundaries and state pointers are what an
// append computes, the stats (exactly, through sessiontree.Tally) and the
// usage by day and bucket (usage_days, exactly), the session list's first
// user text, name and last change, labels, tree counters and leaf follow
// the log, and the materialized branch equals the path recomputed from
// parent ids), then its rows read through each index of their tables
// against the same rows read from the table (see checkindex.go). Its cost follows the session's
// size, not the database's.
//
// The whole database's check runs the database-wide structural checks
// first ([DB.CheckStructure]: SQLite's integrity_check, which also runs
// FTS5's check of the search index's structure, and foreign_key_check),
// then the replay of every session. Page-level damage outside a session's
// rows (a free page, another table's b-tree, the search index's segments)
// is found there, not by a session's check.
//
// It reads whole sessions; it is a tool for tests and repair, not for the
// hot path. Problems are reported as a sessiontree.CorruptError.
func (db *DB) Check(ctx context.Context, sessionID string) error {
	if sessionID == "" {
		return db.checkFresh(ctx, func(r q) error { return db.checkAll(r) })
	}
	return db.checkSession(ctx, sessionID, false)
}

// checkSession is the check of one session in one read transaction,
// with search its search rows too (checkSessionSearch).
func (db *DB) checkSession(ctx context.Context, id string, search bool) error {
	err := db.readView(ctx, func(t *Tx) error {
		var rp *replayed
		err := t.raw(func(r q) (err error) {
			rp, err = checkOne(r, id, search)
			return err
		})
		if err != nil || !search {
			return err
		}
		if err := checkSessionSearch(ctx, t.tx, rp, db.opts.CheckLookups); err != nil {
			return fmt.Errorf("check search index: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("check %s: %w", db.path, err)
	}
	return nil
}

// CheckStructure runs the database-wide structural checks: SQLite's
// integrity_check (every b-tree page, every index against its table, and,
// from SQLite 3.44, FTS5's check of the search index's own structure) and
// foreign_key_check. Its cost follows the database's size. Problems are
// reported as a sessiontree.CorruptError, one per pragma.
func (db *DB) CheckStructure(ctx context.Context) error {
	return db.checkFresh(ctx, func(r q) error {
		problems, err := checkPragmas(r)
		if err != nil {
			return err
		}
		return errors.Join(problems...)
	})
}

// checkFresh runs fn in a read transaction on a connection of its own,
// opened for it: SQLite's integrity check of an FTS5 table (the session
// store's search index) reads the index through the structure the
// connection cached when it last used the table, without noticing what
// other connections have written since, and then reports corruption that
// is not there.
func (db *DB) checkFresh(ctx context.Context, fn func(r q) error) error {
	if db.closed.Load() {
		return sessiontree.ErrClosed
	}
	err := db.retry(ctx, func() error {
		dc, err := db.rc.Connect(ctx)
		if err != nil {
			return err
		}
		c := dc.(*conn)
		defer c.Close()
		return inView(ctx, c, func(c *conn) error { return fn(newQ(ctx, db, c, false)) })
	})
	if err != nil {
		return fmt.Errorf("check %s: %w", db.path, translate(err))
	}
	return nil
}

// checkAll is the whole database's check inside a read transaction.
// Corrupt data is collected, one problem per pragma and per session, so a
// damaged database is reported whole; any other failure stops the check.
func (db *DB) checkAll(r q) error {
	problems, err := checkPragmas(r)
	if err != nil {
		return err
	}
	ids, err := sessionIDs(r)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := checkSession(r, id, false); err != nil {
			// translate: SQLite's SQLITE_CORRUPT, where the session's
			// rows are on a damaged page, is damage found, not a failure.
			err = fmt.Errorf("session %s: %w", id, translate(err))
			if !errors.Is(err, sessiontree.ErrCorrupt) {
				return err
			}
			problems = append(problems, err)
		}
	}
	return errors.Join(problems...)
}

// checkPragmas runs the structural pragmas, collecting what they report.
func checkPragmas(r q) ([]error, error) {
	var problems []error
	for _, pragma := range []string{"PRAGMA integrity_check", "PRAGMA foreign_key_check"} {
		if err := pragmaClean(r, pragma); err != nil {
			if !errors.Is(err, sessiontree.ErrCorrupt) {
				return nil, err
			}
			problems = append(problems, err)
		}
	}
	return problems, nil
}

// sessionIDs lists every session's id, in key order.
func sessionIDs(r q) ([]string, error) {
	rows, err := r.rows(qSessionIDs)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scanIDs(rows, func(string) bool { return true })
}

// checkOne is one session's check: the replay (checkSession), then its
// rows through each index (checkIndexes). withText also notes which
// entries have search text (replayed.texts).
func checkOne(r q, id string, withText bool) (*replayed, error) {
	rp, err := checkSession(r, id, withText)
	if err == nil {
		err = checkIndexes(r, rp)
	}
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	return rp, nil
}

// pragmaClean runs a checking pragma: "ok" or no rows is clean.
func pragmaClean(r q, pragma string) error {
	problems, err := pragmaRows(r, pragma)
	if err != nil {
		if sqliteCode(err) != sqlite3.SQLITE_CORRUPT {
			return err
		}
		// SQLite stops at a page it cannot read, after listing what it
		// found before: both are the report.
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return &sessiontree.CorruptError{Reason: pragma + ": " + strings.Join(problems, "; ")}
	}
	return nil
}

// pragmaRows runs a checking pragma and returns its rows that are not
// "ok", each one line of its columns, and the error that stopped it.
func pragmaRows(r q, pragma string) ([]string, error) {
	rows, err := r.rows(pragma)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		vals := make([]sql.NullString, len(rows.dest))
		ptrs := make([]any, len(rows.dest))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return problems, err
		}
		var parts []string
		for _, v := range vals {
			parts = append(parts, v.String)
		}
		if line := strings.Join(parts, " "); line != "ok" {
			problems = append(problems, line)
		}
	}
	return problems, rows.Err()
}

// checkedIDs are the entries replayed so far, by id: the
// sessiontree.Earlier of Check's replay.
type checkedIDs = sessiontree.EarlierMap[*checked]

// checked is what the replay keeps of an entry: no payload except for
// compactions, which path cutting reads.
type checked struct {
	e    sessiontree.Entry
	node node
}

// storedSession is what a session's row says of its log.
type storedSession struct {
	pk                  int64
	leafPK              sql.NullInt64
	leafID, name, first sql.NullString
	leafDepth, boundary int64
	updated             string
	// deleting: marked as being deleted (see checkSession).
	deleting bool
	// header is the session's header, headerSum its checksum
	// (migration 25).
	header    sessiontree.SessionMeta
	headerSum sql.NullInt64
}

// scan reads the row qCheckSession reads of session id.
func (ss *storedSession) scan(r q, id string) error {
	h := &ss.header
	err := r.row(qCheckSession, args(id), &ss.pk, &ss.leafPK, &ss.leafID, &ss.leafDepth, &ss.boundary, &ss.name, &ss.first,
		&ss.updated, &ss.deleting, &h.ID, &h.Version, &h.CreatedAt, &h.Cwd, &h.ParentSession, &ss.headerSum)
	if err == sql.ErrNoRows {
		return &SessionNotFoundError{ID: id}
	}
	return err
}

// replayed is a session's log as its check replayed it.
type replayed struct {
	pk        int64
	byID      checkedIDs
	replay    sessiontree.Replayer
	tally     sessiontree.Tally
	firstUse  map[string]int64 // bucket -> seq of its first record
	days      sessiontree.UsageDays
	wantFirst sql.NullString
	seq       int64
	// last is the timestamp of the last entry replayed.
	last string
	// indexes are the digests of its entries rows as each index of
	// entries holds them (see checkIndexes).
	indexes entryDigests
	// texts are the keys of the entries with search text, in key order:
	// for the search rows' check, when asked.
	texts []int64
}

func corruptEntry(entry, format string, a ...any) error {
	return &sessiontree.CorruptError{EntryID: entry, Reason: fmt.Sprintf(format, a...)}
}

// checkSession replays session id's log against what the engine keeps of
// it (see [DB.Check]); withText also notes which entries have search text.
func checkSession(r q, id string, withText bool) (*replayed, error) {
	rp, ss, err := replaySession(r, id, withText, nil)
	if err != nil {
		return nil, err
	}
	if err := rp.compareDerived(r, ss); err != nil {
		return nil, err
	}
	return rp, nil
}

// replaySession is the first part of a session's check: its row
// (sessionToReplay), then its log replayed (replayLog).
func replaySession(r q, id string, withText bool, each func(*checkRow)) (*replayed, *storedSession, error) {
	ss, err := sessionToReplay(r, id)
	if err != nil {
		return nil, nil, err
	}
	rp, err := replayLog(r, ss, withText, each)
	return rp, ss, err
}

// sessionToReplay reads session id's row and checks its header against
// its checksum.
func sessionToReplay(r q, id string) (*storedSession, error) {
	var ss storedSession
	if err := ss.scan(r, id); err != nil {
		return nil, err
	}
	if ss.deleting {
		// A delete removes the row in the transaction that marks it, so
		// a marked row is damage, which hides the session from every read.
		return nil, corruptEntry("", "the session row is marked as being deleted, and is still there with its entries")
	}
	if err := sessiontree.VerifyHeaderChecksum(ss.header, ss.headerSum); err != nil {
		return nil, err
	}
	return &ss, nil
}

// replayLog replays the log of session ss in append order, each entries
// row against its JSON and what an append computes of its placement from
// the entries before it. It compares none of the derived values the
// writes keep beside the log (compareDerived does): an error here, or
// from sessionToReplay, is damage of the session's data, its header or
// its entries, which no computing again can mend (see repair.go). each,
// when not nil, is called with each row once the replay took it.
func replayLog(r q, ss *storedSession, withText bool, each func(*checkRow)) (*replayed, error) {
	rp := &replayed{pk: ss.pk, byID: checkedIDs{}, firstUse: map[string]int64{}, days: sessiontree.UsageDays{}}
	lo, hi := pkRange(ss.pk)
	add := rp.add
	if each != nil {
		add = func(w *checkRow) error {
			if err := rp.add(w); err != nil {
				return err
			}
			each(w)
			return nil
		}
	}
	if err := eachCheckRow(r, lo, hi, withText, add); err != nil {
		return nil, err
	}
	return rp, nil
}

// compareDerived is the second part of a session's check: what the
// writes derive from the log and keep beside it (the session row's
// counters, list fields, leaf and tree counts, the labels, the usage by
// day, the materialized branch) against the replay's.
func (rp *replayed) compareDerived(r q, ss *storedSession) error {
	for _, step := range []func(q, *storedSession) error{rp.compareCounters, rp.compareState, rp.compareBranch} {
		if err := step(r, ss); err != nil {
			return err
		}
	}
	return nil
}

// add replays the next entry of the log, in append order, and compares
// its row with what an append computes from the entries before it.
func (rp *replayed) add(w *checkRow) error {
	rp.seq++
	e := &w.c.e
	rp.last = e.Timestamp
	if e.Seq != rp.seq {
		return corruptEntry(e.ID, "seq %d, want %d", e.Seq, rp.seq)
	}
	if w.err != nil {
		return w.err
	}
	dec, f := w.dec, &w.f
	if err := rp.replay.Next(dec, &f.Effects, rp.byID); err != nil {
		var nf *sessiontree.EntryNotFoundError
		if errors.As(err, &nf) {
			return corruptEntry(e.ID, "target %s does not exist earlier in the log", nf.ID)
		}
		return err
	}
	if err := rp.place(w); err != nil {
		return err
	}
	rp.indexes.add(w)
	c := w.c
	if e.Type == sessiontree.TypeCompaction {
		c.e.Raw = dec.Raw
	}
	rp.byID[e.ID] = &c
	rp.tally.AddEntryStats(f.stats)
	if _, seen := rp.firstUse[f.stats.Bucket]; f.stats.HasUsage && !seen {
		rp.firstUse[f.stats.Bucket] = e.Seq
	}
	if f.stats.HasUsage {
		rp.days.Add(e.Timestamp, f.stats.Bucket, f.stats.Usage)
	}
	if !rp.wantFirst.Valid {
		rp.wantFirst.String, rp.wantFirst.Valid = sessiontree.UserText(dec)
	}
	if w.hasText {
		rp.texts = append(rp.texts, w.c.node.pk)
	}
	return nil
}

// place recomputes what insert computes of the entry's placement, from
// the replayed parents, and compares the row's.
func (rp *replayed) place(w *checkRow) error {
	e, n := &w.c.e, &w.c.node
	var parent *node
	p := rp.byID[e.ParentID]
	switch {
	case p != nil:
		parent = &p.node
		if w.parentPK.Int64 != p.node.pk {
			return corruptEntry(e.ID, "parent key %d, want %d", w.parentPK.Int64, p.node.pk)
		}
	case w.parentPK.Valid:
		return corruptEntry(e.ID, "parent key %d on a root", w.parentPK.Int64)
	}
	ancestor := func(keep string) (int64, error) {
		for cur := p; cur != nil; cur = rp.byID[cur.e.ParentID] {
			if cur.e.ID == keep {
				return cur.node.depth, nil
			}
		}
		return 0, nil
	}
	want, err := place(w.dec, &w.f, n.pk, parent, ancestor)
	if err != nil {
		return err
	}
	if want != *n {
		return corruptEntry(e.ID, "stored placement %+v, want %+v", *n, want)
	}
	return nil
}

// compareCounters compares the session row's stats, its usage buckets
// and its usage by day with the replay's. Costs are compared exactly: the
// engine adds them in log order, as the replay does.
func (rp *replayed) compareCounters(r q, _ *storedSession) error {
	stored, storedBuckets, err := (&Storage{db: r.db, pk: rp.pk}).stats(r)
	if err != nil {
		return err
	}
	want := rp.tally.Stats()
	want.Breakdown = nil
	if !reflect.DeepEqual(stored, want) {
		return corruptEntry("", "stored stats %+v, log gives %+v", stored, want)
	}
	var wantBuckets []bucket
	for _, b := range rp.tally.Buckets() {
		wantBuckets = append(wantBuckets, bucket{key: b.Key, firstSeq: rp.firstUse[b.Key], tokens: b.Tokens, cost: b.Cost})
	}
	if !slices.Equal(storedBuckets, wantBuckets) {
		return corruptEntry("", "stored usage buckets %+v, log gives %+v", storedBuckets, wantBuckets)
	}
	storedDays, err := storedDays(r, rp.pk)
	if err != nil {
		return err
	}
	if diff := storedDays.Diff(rp.days); diff != "" {
		return corruptEntry("", "stored usage by day: %s", diff)
	}
	return nil
}

// compareList compares what the session row gives the session list,
// its first user text, name and last change (sessiontree.LastChange of
// its creation and its last entry's timestamp), with the replay's. A row
// that holds the last entry's timestamp where its creation is later
// passes too: that is what the engine wrote before LastChange, for a
// fork, and it is not damage.
func (rp *replayed) compareList(ss *storedSession) error {
	if ss.first != rp.wantFirst {
		return corruptEntry("", "stored first user text %q, log gives %q", ss.first.String, rp.wantFirst.String)
	}
	if ss.name.String != rp.replay.Name {
		return corruptEntry("", "stored name %q, log gives %q", ss.name.String, rp.replay.Name)
	}
	if want := sessiontree.LastChange(ss.header.CreatedAt, rp.last); rp.seq > 0 && ss.updated != want && ss.updated != rp.last {
		return corruptEntry("", "stored last change %q, log gives %q", ss.updated, want)
	}
	return nil
}

// compareState compares the session row's list fields (compareList),
// leaf and tree counters and the labels with the replay's.
func (rp *replayed) compareState(r q, ss *storedSession) error {
	if err := rp.compareList(ss); err != nil {
		return err
	}
	leaf := rp.replay.Leaf
	if ss.leafID.String != leaf {
		return corruptEntry("", "stored leaf %q, log gives %q", ss.leafID.String, leaf)
	}
	if leaf != "" {
		n := &rp.byID[leaf].node
		if ss.leafPK.Int64 != n.pk || ss.leafDepth != n.depth || ss.boundary != n.start {
			return corruptEntry(leaf, "session row places the leaf at key %d depth %d boundary %d, want %d %d %d",
				ss.leafPK.Int64, ss.leafDepth, ss.boundary, n.pk, n.depth, n.start)
		}
	} else if ss.leafPK.Valid || ss.leafDepth != 0 || ss.boundary != 0 {
		return corruptEntry("", "null leaf with a stored position")
	}
	storedLabels, err := (&Storage{db: r.db, pk: rp.pk}).labelsIn(r)
	if err != nil {
		return err
	}
	if !maps.Equal(storedLabels, rp.replay.Labels) {
		return corruptEntry("", "stored labels %v, log gives %v", storedLabels, rp.replay.Labels)
	}
	return checkShape(r, rp.pk, rp.shape())
}

// shape is the tree's counts the replayed log gives
// (sessiontree.ShapeOf over its entries, with its current labels).
func (rp *replayed) shape() sessiontree.Shape {
	heads := make([]sessiontree.Entry, 0, len(rp.byID))
	for _, c := range rp.byID {
		heads = append(heads, c.e)
	}
	return sessiontree.ShapeOf(heads, rp.replay.Labels)
}

// compareBranch compares the materialized branch with the leaf's full
// path, recomputed from parent ids by the root package's walker, and the
// boundary with where its compaction rule cuts.
func (rp *replayed) compareBranch(r q, ss *storedSession) error {
	leaf := rp.replay.Leaf
	full, cut, err := rp.paths(r.ctx)
	if err != nil {
		return err
	}
	if leaf != "" && ss.boundary != int64(len(full)-len(cut)+1) {
		return corruptEntry(leaf, "stored boundary depth %d, path gives %d", ss.boundary, len(full)-len(cut)+1)
	}
	brows, err := r.rows(qCheckBranch, rp.pk)
	if err != nil {
		return err
	}
	defer brows.Close()
	var depth int64
	for brows.Next() {
		var d, entry int64
		if err := brows.Scan(&d, &entry); err != nil {
			return err
		}
		depth++
		if d != depth || depth > int64(len(full)) || entryPK(rp.pk, full[depth-1].Seq) != entry {
			return corruptEntry("", "materialized branch row at depth %d (entry key %d) is not on the leaf's path", d, entry)
		}
	}
	if err := brows.Err(); err != nil {
		return err
	}
	if depth != int64(len(full)) {
		return corruptEntry("", "materialized branch has %d rows, the leaf's path %d", depth, len(full))
	}
	return nil
}

// paths are the leaf's full path and its path from the compaction
// boundary, recomputed from the replayed parent ids by the root
// package's walker.
func (rp *replayed) paths(ctx context.Context) (full, cut []sessiontree.Entry, err error) {
	lookup := func(id string) (sessiontree.Entry, bool) {
		c, ok := rp.byID[id]
		if !ok {
			return sessiontree.Entry{}, false
		}
		return c.e, true
	}
	if full, err = sessiontree.WalkPath(ctx, rp.replay.Leaf, true, len(rp.byID), lookup); err != nil {
		return nil, nil, err
	}
	cut, err = sessiontree.WalkPath(ctx, rp.replay.Leaf, false, len(rp.byID), lookup)
	return full, cut, err
}

func (s *Storage) labelsIn(r q) (map[string]string, error) {
	out := map[string]string{}
	rows, err := r.rows(qLabels, s.pk)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, label string
		if err := rows.Scan(&id, &label); err != nil {
			return nil, err
		}
		out[id] = label
	}
	return out, rows.Err()
}
