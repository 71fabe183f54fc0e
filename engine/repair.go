package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/sessiontree/sessiontree"
)

// Repairing what the writes derive from a session's log.
//
// Every write keeps, beside the entries, values derived from them: the
// session row's counters, stats, cost breakdown, name, first user text,
// leaf and tree counts, the labels, the usage by day and the materialized
// branch. An engine older than a rule (one that opened the database
// before a newer one migrated it, and wrote before the schema fence of
// migration 28 stopped it) kept them by its older rule, and every Check
// after calls the session corrupt. A repair computes them again from the
// entries, which are the data and stay as they are, by the rules a write
// uses: the log goes through Check's replay (replaySession), which
// refuses a session whose header or entries are damaged (checksums,
// columns against the JSON, missing parents, placements); each entry is
// counted as an append counts it (delta.count, the append's owner of
// counters, stats, cost, usage by day, name and first user text), its
// label written as an append writes it (q.label), the tree's counts are
// what Check computes of the log (replayed.shape), the branch is written
// as a leaf move writes it (q.moveBranch, to the replay's leaf), the
// session row is written with the append's
// parameters (delta.rowArgs) and the usage by day by the append's
// q.applyDays. Before the transaction commits, the rest of the session's
// check (compareDerived, then its rows through each index, checkIndexes)
// runs on what it wrote; a repair it does not pass is rolled back.

// qSetDerived writes a session row's derived values: qUpdateSession's
// parameters (delta.rowArgs), each value the whole log's rather than
// what a write adds. label_count is the labels' count, which their
// triggers keep as the labels go in again (qResetLabelCount).
const qSetDerived = `UPDATE sessions SET
    leaf_pk = ?, leaf_id = ?, leaf_depth = ?, boundary_depth = ?,
    entry_count = ?, message_count = ?, user_messages = ?, assistant_messages = ?,
    tool_results = ?, tool_calls = ?, input_tokens = ?, output_tokens = ?,
    cache_read_tokens = ?, cache_write_tokens = ?,
    cost = ?, usage_buckets = coalesce(?, usage_buckets), updated_at = ?,
    name = CASE WHEN ? THEN ? ELSE name END,
    first_user_text = ?,
    branch_count = ?, root_count = ?, compaction_count = ?
WHERE pk = ?`

const qResetLabelCount = `UPDATE sessions SET label_count = 0 WHERE pk = ?1`

// Repair computes again (sessiontree.Repairer), from its entries, what
// the writes derive from the log of session id, or of each session when
// id is "", when Check reports that it disagrees with the log, and
// returns the sessions it repaired. It mends a session an older engine
// wrote by rules since changed (see the package doc's version skew); it
// never changes an entry.
//
// Each session is checked in a read transaction first, and only one
// reported corrupt is repaired, in a write transaction of its own that
// replays its log again under the write lock: the session row's
// counters, stats, breakdown, name, first user text, leaf and tree
// counts, its labels, its usage by day and its materialized branch are
// written as appending its log would write them, and the rest of the
// check runs on them before the commit. A session whose data is damaged
// (its header against its checksum, an entry against its checksum or its
// columns, a missing parent, a placement, its rows through an index) is
// left as it is: its problem is in the returned error, which joins one
// error per such session, each matching sessiontree.ErrCorrupt, as
// Check's does. An error of another kind stops the repair. A session's
// repair holds the write lock for about the time of its check (its
// replay), so other writers wait that long.
func (db *DB) Repair(ctx context.Context, id string) ([]sessiontree.RepairedSession, error) {
	ids := []string{id}
	if id == "" {
		err := db.view(ctx, func(r q) (err error) {
			ids, err = sessionIDs(r)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("repair %s: %w", db.path, translate(err))
		}
	}
	return sessiontree.RepairEach(ids, id == "", func(id string) (error, error) {
		return db.repairIfCorrupt(ctx, id)
	})
}

// repairIfCorrupt checks session id and repairs it when the check
// reports it corrupt (repairSession). It returns what the repair mended,
// nil when the session was sound.
func (db *DB) repairIfCorrupt(ctx context.Context, id string) (was error, err error) {
	err = db.checkSession(ctx, id, false)
	if err == nil || !errors.Is(err, sessiontree.ErrCorrupt) {
		return nil, err
	}
	err = db.update(ctx, false, func(w q) (err error) {
		was, err = repairSession(w, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("repair %s: session %s: %w", db.path, id, translate(err))
	}
	return was, nil
}

// labelWrite is a label entry of the log, as the repair writes it again.
type labelWrite struct {
	e  sessiontree.Entry
	f  facts
	pk int64
}

// repairSession computes session id's derived values again in the write
// transaction w (see [DB.Repair]) and returns what Check reported of
// them before, nil when they agreed with the log and nothing was
// written. Damage of the session's data is returned as Check reports it.
func repairSession(w q, id string) (was, err error) {
	ss, err := sessionToReplay(w, id)
	if err != nil {
		return nil, damaged(err)
	}
	d := newDelta(head{}, ss.header.CreatedAt)
	var h head
	var labels []labelWrite
	rp, err := replayLog(w, ss, false, func(row *checkRow) {
		d.count(row.c.e.Seq, row.dec, &row.f, &h)
		if row.f.Label {
			labels = append(labels, labelWrite{e: row.dec, f: row.f, pk: row.c.node.pk})
		}
	})
	if err != nil {
		return nil, damaged(err)
	}
	was = rp.compareDerived(w, ss)
	if was == nil || !errors.Is(was, sessiontree.ErrCorrupt) {
		return nil, was
	}
	if err := rp.save(w, ss, &d, labels); err != nil {
		return nil, err
	}
	var after storedSession
	if err := after.scan(w, id); err != nil {
		return nil, err
	}
	err = rp.compareDerived(w, &after)
	if err == nil {
		err = checkIndexes(w, rp)
	}
	if err != nil {
		return nil, fmt.Errorf("not repaired: its check after computing again: %w", err)
	}
	return was, nil
}

// damaged is the error of a repair refused for damage err of the
// session's data.
func damaged(err error) error {
	if !errors.Is(err, sessiontree.ErrCorrupt) {
		return err
	}
	return fmt.Errorf("not repaired, its data is damaged: %w", err)
}

// save writes the session's derived values: d, the log counted as an
// append counts it, and labels, its label entries in log order, with the
// leaf, tree counts and branch of the replay.
func (rp *replayed) save(w q, ss *storedSession, d *delta, labels []labelWrite) error {
	delete(w.c.heads, rp.pk) // the next append reads the head again
	for _, stmt := range []string{qDeleteLabels, qResetLabelCount, qDeleteUsageDays, qDeleteBranch} {
		if _, err := w.exec(stmt, rp.pk); err != nil {
			return err
		}
	}
	for i := range labels {
		l := &labels[i]
		if err := w.label(rp.pk, l.e, &l.f, l.pk); err != nil {
			return err
		}
	}
	if leaf := rp.replay.Leaf; leaf != "" {
		n := rp.byID[leaf].node
		d.leaf, d.leafID = &n, leaf
	}
	if err := w.moveBranch(rp.pk, 0, d.leaf); err != nil { // the branch was emptied above
		return err
	}
	if d.updatedAt == "" {
		d.updatedAt = ss.updated // no entries: its creation
	}
	d.shape = rp.shape()
	d.setsName = true
	d.ownBuckets = true // written even when empty
	if _, err := w.exec(qSetDerived, d.rowArgs(rp.pk)...); err != nil {
		return err
	}
	return w.applyDays(rp.pk, &d.days)
}
