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

	"github.com/sessiontree/sessiontree"
)

const qCheckEntries = `SELECT pk, seq, id, parent_id, parent_pk, type, timestamp, depth, start_depth,
       thinking_pk, model_pk, tools_pk, target_id, custom_type, role, CAST(raw AS BLOB), coalesce(canonical, 0), checksum
FROM entries WHERE pk BETWEEN ?1 AND ?2 ORDER BY pk`

const qCheckSession = `SELECT pk, leaf_pk, leaf_id, leaf_depth, boundary_depth, name, first_user_text
FROM sessions WHERE id = ?1`

const qCheckBranch = `SELECT depth, entry FROM branch WHERE session = ?1 ORDER BY depth`

const qSessionIDs = `SELECT id FROM sessions ORDER BY pk`

// Check verifies the database and a session (every session when
// sessionID is ""): SQLite's integrity_check and foreign_key_check, then
// the session replayed from its entries in append order against what the
// engine keeps: each stored row's JSON matches its checksum (see
// [sessiontree.EntryChecksum]) and the row agrees with the JSON, parents exist
// earlier, depths, compaction boundaries and state pointers are what an
// append computes, the stats (exactly, through sessiontree.Tally) and the
// usage by day and bucket (usage_days, exactly), the
// session list's first user text, name, labels and leaf follow the log, and
// the materialized branch equals the path recomputed from parent ids. It
// reads the whole session; it is a tool for tests and repair, not for the
// hot path. Problems are reported as a sessiontree.CorruptError.
//
// Check runs on a connection of its own, opened for it: SQLite's integrity
// check of an FTS5 table (the session store's search index) reads the
// index through the structure the connection cached when it last used the
// table, without noticing what other connections have written since, and
// then reports corruption that is not there.
func (db *DB) Check(ctx context.Context, sessionID string) error {
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
		return inView(ctx, c, func(c *conn) error { return db.check(newQ(ctx, db, c, false), sessionID) })
	})
	if err != nil {
		return fmt.Errorf("check %s: %w", db.path, translate(err))
	}
	return nil
}

// check is Check inside a read transaction.
// Corrupt data is collected, one problem per pragma and per session, so a
// damaged database is reported whole; any other failure stops the check.
func (db *DB) check(r q, sessionID string) error {
	var problems []error
	for _, pragma := range []string{"PRAGMA integrity_check", "PRAGMA foreign_key_check"} {
		if err := pragmaClean(r, pragma); err != nil {
			if !errors.Is(err, sessiontree.ErrCorrupt) {
				return err
			}
			problems = append(problems, err)
		}
	}
	ids := []string{sessionID}
	if sessionID == "" {
		ids = nil
		rows, err := r.rows(qSessionIDs)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	for _, id := range ids {
		if err := checkSession(r, id); err != nil {
			err = fmt.Errorf("session %s: %w", id, err)
			if !errors.Is(err, sessiontree.ErrCorrupt) {
				return err
			}
			problems = append(problems, err)
		}
	}
	return errors.Join(problems...)
}

// pragmaClean runs a checking pragma: "ok" or no rows is clean.
func pragmaClean(r q, pragma string) error {
	rows, err := r.rows(pragma)
	if err != nil {
		return err
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
			return err
		}
		var parts []string
		for _, v := range vals {
			parts = append(parts, v.String)
		}
		if line := strings.Join(parts, " "); line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(problems) > 0 {
		return &sessiontree.CorruptError{Reason: pragma + ": " + strings.Join(problems, "; ")}
	}
	return nil
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

func checkSession(r q, id string) error {
	var pk int64
	var leafPK sql.NullInt64
	var leafID, name, firstUser sql.NullString
	var leafDepth, boundary int64
	err := r.row(qCheckSession, args(id), &pk, &leafPK, &leafID, &leafDepth, &boundary, &name, &firstUser)
	if err == sql.ErrNoRows {
		return &SessionNotFoundError{ID: id}
	}
	if err != nil {
		return err
	}
	stored, storedBuckets, err := (&Storage{db: r.db, pk: pk, meta: sessiontree.SessionMeta{ID: id}}).stats(r)
	if err != nil {
		return err
	}

	corrupt := func(entry, format string, a ...any) error {
		return &sessiontree.CorruptError{EntryID: entry, Reason: fmt.Sprintf(format, a...)}
	}
	byID := checkedIDs{}
	var replay sessiontree.Replayer
	var tally sessiontree.Tally
	firstUse := map[string]int64{} // bucket -> seq of its first record
	days := sessiontree.UsageDays{}
	var wantFirst sql.NullString
	lo, hi := pkRange(pk)
	rows, err := r.rows(qCheckEntries, lo, hi)
	if err != nil {
		return err
	}
	defer rows.Close()
	var seq int64
	for rows.Next() {
		var c checked
		var parentID, target, custom, role sql.NullString
		var parentPK sql.NullInt64
		var typ string
		var raw []byte
		var canonical bool
		var sum sql.NullInt64
		n := &c.node
		if err := rows.Scan(&n.pk, &c.e.Seq, &c.e.ID, &parentID, &parentPK, &typ, &c.e.Timestamp, &n.depth, &n.start,
			&n.thinking, &n.model, &n.tools, &target, &custom, &role, &raw, &canonical, &sum); err != nil {
			return err
		}
		seq++
		e := &c.e
		e.Type, e.ParentID = sessiontree.EntryType(typ), parentID.String
		if e.Seq != seq {
			return corrupt(e.ID, "seq %d, want %d", e.Seq, seq)
		}
		if err := sessiontree.VerifyChecksum(e.ID, raw, sum); err != nil {
			return err
		}
		dec, err := sessiontree.DecodeEntry(raw)
		if err != nil {
			return corrupt(e.ID, "stored JSON: %v", err)
		}
		if dec.Type != e.Type || dec.ID != e.ID || dec.ParentID != e.ParentID || dec.Timestamp != e.Timestamp {
			return corrupt(e.ID, "columns disagree with the stored JSON")
		}
		if canonical {
			e.Raw = raw
			if !isCanonical(*e) {
				return corrupt(e.ID, "marked canonical, but the stored JSON does not start with the columns")
			}
			e.Raw = nil
		}
		dec.Seq = e.Seq
		f := factsOf(dec)
		if target.String != f.Target || custom.String != f.customType || role.String != f.role {
			return corrupt(e.ID, "indexed columns disagree with the stored JSON")
		}
		if err := replay.Next(dec, &f.Effects, byID); err != nil {
			var nf *sessiontree.EntryNotFoundError
			if errors.As(err, &nf) {
				return corrupt(e.ID, "target %s does not exist earlier in the log", nf.ID)
			}
			return err
		}
		// Recompute what insert computes, from the replayed parents.
		var parent *node
		p := byID[e.ParentID]
		if p != nil {
			parent = &p.node
			if parentPK.Int64 != p.node.pk {
				return corrupt(e.ID, "parent key %d, want %d", parentPK.Int64, p.node.pk)
			}
		}
		ancestor := func(keep string) (int64, error) {
			for cur := p; cur != nil; cur = byID[cur.e.ParentID] {
				if cur.e.ID == keep {
					return cur.node.depth, nil
				}
			}
			return 0, nil
		}
		wantNode, err := place(dec, &f, n.pk, parent, ancestor)
		if err != nil {
			return err
		}
		if wantNode != *n {
			return corrupt(e.ID, "stored placement %+v, want %+v", *n, wantNode)
		}
		if e.Type == sessiontree.TypeCompaction {
			e.Raw = dec.Raw
		}
		byID[e.ID] = &c
		tally.AddEntryStats(f.stats)
		if _, seen := firstUse[f.stats.Bucket]; f.stats.HasUsage && !seen {
			firstUse[f.stats.Bucket] = e.Seq
		}
		if f.stats.HasUsage {
			days.Add(e.Timestamp, f.stats.Bucket, f.stats.Usage)
		}
		if !wantFirst.Valid {
			wantFirst.String, wantFirst.Valid = sessiontree.UserText(dec)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()

	// Costs are compared exactly: the engine adds them in log order, as
	// the replay does.
	want := tally.Stats()
	want.Breakdown = nil
	if !reflect.DeepEqual(stored, want) {
		return corrupt("", "stored stats %+v, log gives %+v", stored, want)
	}
	var wantBuckets []bucket
	for _, b := range tally.Buckets() {
		wantBuckets = append(wantBuckets, bucket{key: b.Key, firstSeq: firstUse[b.Key], tokens: b.Tokens, cost: b.Cost})
	}
	if !slices.Equal(storedBuckets, wantBuckets) {
		return corrupt("", "stored usage buckets %+v, log gives %+v", storedBuckets, wantBuckets)
	}
	storedDays, err := storedDays(r, pk)
	if err != nil {
		return err
	}
	if diff := storedDays.Diff(days); diff != "" {
		return corrupt("", "stored usage by day: %s", diff)
	}
	if firstUser != wantFirst {
		return corrupt("", "stored first user text %q, log gives %q", firstUser.String, wantFirst.String)
	}
	if name.String != replay.Name {
		return corrupt("", "stored name %q, log gives %q", name.String, replay.Name)
	}
	leaf := replay.Leaf
	if leafID.String != leaf {
		return corrupt("", "stored leaf %q, log gives %q", leafID.String, leaf)
	}
	var leafNode *node
	if leaf != "" {
		leafNode = &byID[leaf].node
		if leafPK.Int64 != leafNode.pk || leafDepth != leafNode.depth || boundary != leafNode.start {
			return corrupt(leaf, "session row places the leaf at key %d depth %d boundary %d, want %d %d %d",
				leafPK.Int64, leafDepth, boundary, leafNode.pk, leafNode.depth, leafNode.start)
		}
	} else if leafPK.Valid || leafDepth != 0 || boundary != 0 {
		return corrupt("", "null leaf with a stored position")
	}
	storedLabels, err := (&Storage{db: r.db, pk: pk}).labelsIn(r)
	if err != nil {
		return err
	}
	if !maps.Equal(storedLabels, replay.Labels) {
		return corrupt("", "stored labels %v, log gives %v", storedLabels, replay.Labels)
	}
	if err := checkShape(r, pk, byID, replay.Labels); err != nil {
		return err
	}

	// The materialized branch must be the leaf's full path, recomputed
	// from parent ids by the root package's walker, and the boundary where
	// its compaction rule cuts.
	lookup := func(id string) (sessiontree.Entry, bool) {
		c, ok := byID[id]
		if !ok {
			return sessiontree.Entry{}, false
		}
		return c.e, true
	}
	full, err := sessiontree.WalkPath(r.ctx, leaf, true, len(byID), lookup)
	if err != nil {
		return err
	}
	cut, err := sessiontree.WalkPath(r.ctx, leaf, false, len(byID), lookup)
	if err != nil {
		return err
	}
	if leaf != "" && boundary != int64(len(full)-len(cut)+1) {
		return corrupt(leaf, "stored boundary depth %d, path gives %d", boundary, len(full)-len(cut)+1)
	}
	brows, err := r.rows(qCheckBranch, pk)
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
		if d != depth || depth > int64(len(full)) || byID[full[depth-1].ID].node.pk != entry {
			return corrupt("", "materialized branch row at depth %d (entry key %d) is not on the leaf's path", d, entry)
		}
	}
	if err := brows.Err(); err != nil {
		return err
	}
	if depth != int64(len(full)) {
		return corrupt("", "materialized branch has %d rows, the leaf's path %d", depth, len(full))
	}
	return nil
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
