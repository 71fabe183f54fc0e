package pgengine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
)

// Check verifies session id (every session when id is ""): its header
// columns against their checksum (sessiontree.HeaderChecksum), then what
// the engine keeps against a replay of its log by the root package's
// rules: the leaf (the leaf rule),
// the materialized branch and the active path (sessiontree.WalkPath from
// the leaf), the stats (sessiontree.Tally), the labels and the name; each
// entry against its checksum and its search_text row against its text
// (sessiontree.SearchText; an entry not yet indexed has none); and each
// entry's placement columns, the session row's copy of the leaf's and
// its first user text against what the writes compute (placeEntry). A
// mismatch is a [sessiontree.CorruptError]. The whole database's check
// also reports a session row marked deleting (which only damage leaves)
// and rows of a session that has no sessions row (checkOrphans), and
// reports every damaged session, each problem an error of its own,
// joined (errors.Join), as the SQLite engine's does. It reads each
// session whole, one at a time: it is for tests and repair tools, not a
// request path.
func (db *DB) Check(ctx context.Context, id string) error {
	if err := db.check(ctx); err != nil {
		return err
	}
	if id != "" {
		if err := db.checkSession(ctx, id); err != nil {
			return fmt.Errorf("check session %s: %w", id, err)
		}
		return nil
	}
	return db.checkAll(ctx)
}

// checkAll is the whole database's check: every session's, each
// damaged one a problem of its own (joined, as the SQLite engine's),
// and the orphans'.
func (db *DB) checkAll(ctx context.Context) error {
	// Sessions marked deleting too: a delete removes the row it marks,
	// so a marked row is damage (checkSession).
	var ids []string
	if err := db.db.SelectContext(ctx, &ids, `SELECT id FROM sessions ORDER BY pk`); err != nil {
		return fmt.Errorf("check: %w", storageErr(err))
	}
	var problems []error
	if err := db.checkOrphans(ctx); err != nil {
		if !errors.Is(err, sessiontree.ErrCorrupt) {
			return fmt.Errorf("check: %w", err)
		}
		problems = append(problems, fmt.Errorf("check: %w", err))
	}
	for _, one := range ids {
		err := db.checkSession(ctx, one)
		if deleted(err, one) {
			continue // deleted since the listing: not damage
		}
		if err != nil {
			err = fmt.Errorf("check session %s: %w", one, err)
			if !errors.Is(err, sessiontree.ErrCorrupt) {
				return err
			}
			problems = append(problems, err)
		}
	}
	return errors.Join(problems...)
}

// checkSession checks session id in one snapshot (check1). A session
// row marked deleting is damage: a delete removes the row in the
// transaction that marks it, and a marked row hides the session from
// every read and from DeleteSession.
func (db *DB) checkSession(ctx context.Context, id string) error {
	st, err := db.OpenStorage(ctx, id)
	if deleted(err, id) {
		var marked bool
		if err := db.db.GetContext(ctx, &marked, `SELECT EXISTS (SELECT 1 FROM sessions WHERE id = $1 AND deleting)`, id); err != nil {
			return storageErr(err)
		}
		if marked {
			return &sessiontree.CorruptError{Reason: "the session row is marked as being deleted, and is still there with its entries"}
		}
	}
	if err != nil {
		return err
	}
	return st.db.view(ctx, "check", func(tx *sqlx.Tx) error { return st.check1(withSnapshot(ctx, tx)) })
}

// qOrphans finds a row of a table holding sessions' rows whose session
// has no sessions row (entries' and branch's foreign keys were dropped by
// migration 5; the others' are triggers a restore can bypass).
const qOrphans = `SELECT r.t, r.session FROM (
	SELECT 'entries' AS t, session FROM entries UNION ALL SELECT 'branch', session FROM branch
	UNION ALL SELECT 'labels', session FROM labels UNION ALL SELECT 'usage_days', session FROM usage_days
	UNION ALL SELECT 'search_text', session FROM search_text) r
WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.pk = r.session) LIMIT 1`

// checkOrphans reports rows of a session that does not exist: entries
// committed that no read finds, or usage every report adds up.
func (db *DB) checkOrphans(ctx context.Context) error {
	var orphan struct {
		Table   string `db:"t"`
		Session int64  `db:"session"`
	}
	err := db.db.GetContext(ctx, &orphan, qOrphans)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return storageErr(err)
	}
	return &sessiontree.CorruptError{Reason: fmt.Sprintf("%s holds rows of session key %d, which has no sessions row", orphan.Table, orphan.Session)}
}

// deleted reports whether err says session id is not there (or is being
// deleted): its row is gone, or marked, in the snapshot that read it.
func deleted(err error, id string) bool {
	var nf *SessionNotFoundError
	return errors.As(err, &nf) && nf.ID == id
}

// check1 replays one session through the root package's tree rules
// (sessiontree.Replayer: unique ids, parents and targets earlier in the
// log, the leaf rule, labels, name) and compares what the engine keeps.
// ctx carries the snapshot all its reads run in (withSnapshot).
func (s *Storage) check1(ctx context.Context) error {
	if err := s.checkHeader(ctx); err != nil {
		return err
	}
	log, err := s.Log(ctx, 0, 0)
	if err != nil {
		return err
	}
	byID := make(replayed, len(log))
	var tally sessiontree.Tally
	var replay sessiontree.Replayer
	for _, e := range log {
		f := sessiontree.EffectsOf(e, "") // only the leaf, labels and name are compared
		if err := replay.Next(e, &f, byID); err != nil {
			var nf *sessiontree.EntryNotFoundError
			if errors.As(err, &nf) {
				return &sessiontree.CorruptError{EntryID: e.ID, Reason: "target " + nf.ID + " does not exist earlier in the log"}
			}
			return err
		}
		byID[e.ID] = e
		tally.Add(e)
	}
	leaf, name, labels := replay.Leaf, replay.Name, replay.Labels
	get := func(id string) (sessiontree.Entry, bool) { e, ok := byID[id]; return e, ok }
	mismatch := func(what string, got, want any) error {
		return &sessiontree.CorruptError{Reason: fmt.Sprintf("%s is %v; a replay of the log gives %v", what, got, want)}
	}
	if got, err := s.Leaf(ctx); err != nil || got != leaf {
		return cmpErr(err, mismatch("the leaf", got, leaf))
	}
	if got, err := s.Name(ctx); err != nil || got != name {
		return cmpErr(err, mismatch("the name", got, name))
	}
	if got, err := s.Labels(ctx); err != nil || !maps.Equal(got, labels) {
		return cmpErr(err, mismatch("the labels", got, labels))
	}
	if got, err := s.Stats(ctx); err != nil || fmt.Sprint(got) != fmt.Sprint(tally.Stats()) {
		return cmpErr(err, mismatch("the stats", got, tally.Stats()))
	}
	if err := s.checkShape(ctx, log, labels); err != nil {
		return err
	}
	if err := s.checkUsageDays(ctx, log); err != nil {
		return err
	}
	if err := s.checkEntries(ctx); err != nil {
		return err
	}
	// The stored columns before the walks that read them: a damaged id
	// is a corrupt entry, not a walk's entry not found.
	if err := s.checkPlacements(ctx, log, leaf); err != nil {
		return err
	}
	for _, full := range []bool{true, false} {
		want, err := sessiontree.WalkPath(ctx, leaf, full, len(log), get)
		if err != nil {
			return err
		}
		got, err := s.walk(ctx, leaf, full)
		if err != nil {
			return err
		}
		if !slices.Equal(idsOf(got), idsOf(want)) {
			return mismatch(fmt.Sprintf("the path from the leaf (full %v)", full), idsOf(got), idsOf(want))
		}
	}
	var branch []string
	if err := sqlx.SelectContext(ctx, s.db.reader(ctx), &branch, `SELECT e.id FROM branch b JOIN entries e ON e.session = b.session
		AND e.seq = b.seq WHERE b.session = $1 ORDER BY b.depth`, s.pk); err != nil {
		return storageErr(err)
	}
	full, _ := sessiontree.WalkPath(ctx, leaf, true, len(log), get)
	if !slices.Equal(branch, idsOf(full)) {
		return mismatch("the branch table", branch, idsOf(full))
	}
	return nil
}

// qCheckPlacements reads the placement columns of each entry of a
// session ($1) in append order.
const qCheckPlacements = `SELECT seq, id, parent_id, parent_seq, depth, start_depth, thinking_seq, model_seq, tools_seq,
	type, timestamp, coalesce(target_id, '') AS target_id
	FROM entries WHERE session = $1 ORDER BY seq`

// storedPlacement is a row of qCheckPlacements.
type storedPlacement struct {
	placement
	ID        string         `db:"id"`
	ParentID  sql.NullString `db:"parent_id"`
	ParentSeq sql.NullInt64  `db:"parent_seq"`
	// The columns reads take instead of the JSON.
	Type      string `db:"type"`
	Timestamp string `db:"timestamp"`
	Target    string `db:"target_id"`
}

// checkPlacements recomputes each entry's placement from its parent's in
// log order, as the writes compute it (placeEntry), and compares the
// stored columns, which the walks and the next writes read; then the
// session row's copy of the leaf's placement and its first user text
// (checkSessionRow).
func (s *Storage) checkPlacements(ctx context.Context, log []sessiontree.Entry, leaf string) error {
	var stored []storedPlacement
	if err := sqlx.SelectContext(ctx, s.db.reader(ctx), &stored, qCheckPlacements, s.pk); err != nil {
		return storageErr(err)
	}
	if len(stored) != len(log) {
		return &sessiontree.CorruptError{Reason: fmt.Sprintf("%d entries stored, the log reads %d", len(stored), len(log))}
	}
	placed := make(placedEntries, len(log))
	var first sql.NullString
	for i, e := range log {
		if err := placed.check(e, int64(i+1), stored[i]); err != nil {
			return err
		}
		noteFirstUser(&first, e)
	}
	last := ""
	if len(log) > 0 {
		last = log[len(log)-1].Timestamp
	}
	return s.checkSessionRow(ctx, placed, leaf, first, last, int64(len(log)))
}

// placedEntries are the placements Check recomputed so far, by entry id,
// with the entries' parent ids.
type placedEntries map[string]struct {
	p      placement
	parent string
}

// check recomputes the placement of e, entry seq, and compares got, its
// stored columns.
func (pe placedEntries) check(e sessiontree.Entry, seq int64, got storedPlacement) error {
	var parent *placement
	wantParent := sql.NullString{String: e.ParentID, Valid: e.ParentID != ""}
	var wantParentSeq sql.NullInt64
	if pp, ok := pe[e.ParentID]; ok && wantParent.Valid {
		parent, wantParentSeq = &pp.p, sql.NullInt64{Int64: pp.p.Seq, Valid: true}
	}
	fx := sessiontree.EffectsOf(e, sessiontree.MessageInfoOf(e).Role)
	want, err := placeEntry(seq, e, &fx, parent, pe.ancestor(e.ParentID))
	if err != nil {
		return err
	}
	switch {
	case got.ID != e.ID || got.ParentID != wantParent || got.ParentSeq != wantParentSeq:
		return &sessiontree.CorruptError{EntryID: e.ID, Reason: fmt.Sprintf("stored as %s under %q (key %v); the log has %s under %q (key %v)",
			got.ID, got.ParentID.String, got.ParentSeq.Int64, e.ID, e.ParentID, wantParentSeq.Int64)}
	case got.Type != string(e.Type) || got.Timestamp != e.Timestamp || got.Target != e.TargetID():
		return &sessiontree.CorruptError{EntryID: e.ID, Reason: fmt.Sprintf("stored columns type %q, timestamp %q, target %q; its JSON has %q, %q, %q",
			got.Type, got.Timestamp, got.Target, e.Type, e.Timestamp, e.TargetID())}
	case got.placement != want:
		return &sessiontree.CorruptError{EntryID: e.ID, Reason: fmt.Sprintf("stored placement %+v; its parent's gives %+v", got.placement, want)}
	}
	pe[e.ID] = struct {
		p      placement
		parent string
	}{want, e.ParentID}
	return nil
}

// ancestor is the ancestorDepth of an entry whose parent is from: the
// path up from there, through the entries placed.
func (pe placedEntries) ancestor(from string) ancestorDepth {
	return func(id string) (int64, error) {
		for cur := from; cur != ""; cur = pe[cur].parent {
			if cur == id {
				return int64(pe[cur].p.Depth), nil
			}
		}
		return 0, nil
	}
}

// checkSessionRow compares the session row's copy of the leaf's
// placement (the next append's parent) with the leaf's, its first user
// text with the log's, first (noteFirstUser), and its last change, which
// every write sets and the session list sorts by, with the timestamp of
// the log's last entry, last (when the log has entries); and checks that the
// search index's mark is not past the log's n entries (the next entries
// would count as indexed, with no text, and the catch-up would never
// reach them).
func (s *Storage) checkSessionRow(ctx context.Context, placed placedEntries, leaf string, first sql.NullString, last string, n int64) error {
	var got struct {
		Seq      sql.NullInt64  `db:"leaf_seq"`
		Depth    int            `db:"leaf_depth"`
		Boundary int            `db:"boundary_depth"`
		First    sql.NullString `db:"first_user_text"`
		Indexed  int64          `db:"indexed_count"`
		Updated  string         `db:"updated_at"`
	}
	if err := sqlx.GetContext(ctx, s.db.reader(ctx), &got, `SELECT leaf_seq, leaf_depth, boundary_depth, first_user_text,
		indexed_count, updated_at FROM sessions WHERE pk = $1`, s.pk); err != nil {
		return storageErr(err)
	}
	if got.Indexed > n {
		return &sessiontree.CorruptError{Reason: fmt.Sprintf("the search index's mark is %d, past the log's %d entries", got.Indexed, n)}
	}
	want := got
	want.Seq, want.Depth, want.Boundary, want.First = sql.NullInt64{}, 0, 0, first
	if p, ok := placed[leaf]; ok && leaf != "" {
		want.Seq, want.Depth, want.Boundary = sql.NullInt64{Int64: p.p.Seq, Valid: true}, p.p.Depth, p.p.StartDepth
	}
	want.Updated = lastChange(s.meta.CreatedAt, got.Updated, last, n)
	if got != want {
		return &sessiontree.CorruptError{EntryID: leaf, Reason: fmt.Sprintf("the session row holds leaf key %v depth %d boundary %d, first user text %q, last change %q; the log gives %v %d %d, %q, %q",
			got.Seq.Int64, got.Depth, got.Boundary, got.First.String, got.Updated, want.Seq.Int64, want.Depth, want.Boundary, want.First.String, want.Updated)}
	}
	return nil
}

// lastChange is the last change a session row should hold, stored now,
// for a log of n entries, the last of time last, created at created: the
// appends' (sessiontree.LastChange). A row holding the last entry's time
// where the creation is later was written so before LastChange (a fork),
// and is kept, as is an empty session's, which no write has changed.
func lastChange(created, stored, last string, n int64) string {
	if n == 0 || stored == last {
		return stored
	}
	return sessiontree.LastChange(created, last)
}

// qCheckEntries reads each entry of a session ($1) in append order with
// what search_text holds of it, and whether the index has reached it.
const qCheckEntries = `SELECT e.id, e.type, e.raw, e.checksum, e.seq <= s.indexed_count,
       t.body, t.folded
FROM entries e JOIN sessions s ON s.pk = e.session
LEFT JOIN search_text t ON t.session = e.session AND t.seq = e.seq
WHERE e.session = $1 ORDER BY e.seq`

// checkEntries verifies every entry's JSON against its checksum and its
// search_text row against its text, in append order, streaming, and
// search_terms against the trigrams of the text.
func (s *Storage) checkEntries(ctx context.Context) error {
	rows, err := s.db.reader(ctx).QueryContext(ctx, qCheckEntries, s.pk)
	if err != nil {
		return storageErr(err)
	}
	defer rows.Close()
	var (
		id, typ      string
		raw          sql.RawBytes
		sum          sql.NullInt64
		indexed      bool
		body, folded sql.NullString
		owners       = termOwners{}
	)
	for rows.Next() {
		if err := rows.Scan(&id, &typ, &raw, &sum, &indexed, &body, &folded); err != nil {
			return storageErr(err)
		}
		if err := sessiontree.VerifyChecksum(id, raw, sum); err != nil {
			return err
		}
		if reason := searchTextProblem(typ, raw, indexed, body, folded); reason != "" {
			return &sessiontree.CorruptError{EntryID: id, Reason: reason}
		}
		if folded.Valid {
			owners.add(id, folded.String)
		}
	}
	if err := rows.Err(); err != nil {
		return storageErr(err)
	}
	return s.checkTerms(ctx, owners)
}

// searchTextProblem says what is wrong with an entry's search_text row
// (body and folded, NULL when it has none) against the text of its type
// and JSON raw, "" when nothing is: an entry the index has reached
// (indexed) has a row exactly when it has text, holding that text; one
// it has not reached (pending) has none.
func searchTextProblem(typ string, raw []byte, indexed bool, body, folded sql.NullString) string {
	want, ok := indexedText(typ, raw)
	switch {
	case !indexed && body.Valid:
		return "the search index holds its text, and it is not indexed yet"
	case !indexed:
		return ""
	case !ok && body.Valid:
		return "the search index holds text for it, and it has none"
	case ok && !body.Valid:
		return "the search index holds no text for it"
	case ok && (body.String != want || folded.String != fold(want)):
		return fmt.Sprintf("the search index holds other text than its own (%d bytes; its text has %d)", len(body.String), len(want))
	}
	return ""
}

// checkUsageDays compares the session's usage_days rows with the usage
// records of its log, added by day and bucket in log order as the writes
// add them (sessiontree.UsageDays).
func (s *Storage) checkUsageDays(ctx context.Context, log []sessiontree.Entry) error {
	want := sessiontree.UsageDays{}
	for _, e := range log {
		if es := sessiontree.StatsOf(e); es.HasUsage {
			want.Add(e.Timestamp, es.Bucket, es.Usage)
		}
	}
	var rows []struct {
		Day        string  `db:"day"`
		Bucket     string  `db:"bucket"`
		Input      int64   `db:"input"`
		Output     int64   `db:"output"`
		CacheRead  int64   `db:"cache_read"`
		CacheWrite int64   `db:"cache_write"`
		Cost       float64 `db:"cost"`
	}
	if err := sqlx.SelectContext(ctx, s.db.reader(ctx), &rows, `SELECT day, bucket, input, output, cache_read, cache_write, cost
		FROM usage_days WHERE session = $1`, s.pk); err != nil {
		return storageErr(err)
	}
	got := make(sessiontree.UsageDays, len(rows))
	for _, r := range rows {
		got[sessiontree.UsageDayKey{Day: r.Day, Bucket: r.Bucket}] = sessiontree.Usage{Input: r.Input, Output: r.Output,
			CacheRead: r.CacheRead, CacheWrite: r.CacheWrite, Cost: r.Cost}
	}
	if diff := got.Diff(want); diff != "" {
		return &sessiontree.CorruptError{Reason: "stored usage by day: " + diff}
	}
	return nil
}

// replayed are the entries replayed so far, by id: the
// sessiontree.Earlier of Check's replay.
type replayed = sessiontree.EarlierMap[sessiontree.Entry]

func idsOf(es []sessiontree.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}
