package pgengine

import (
	"context"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
)

var _ sessiontree.Repairer = (*DB)(nil)

// Repair computes again (sessiontree.Repairer), from its entries, what
// the writes derive from the log of session id, or of each session when
// id is "", when Check reports that it disagrees with the log, and
// returns the sessions it repaired: what redoDerived computes again for
// the sessions a migration lists (the name, the labels, the stats and
// the usage by day), and the leaf, the materialized branch, the first
// user text and the last change (saveLeaf), for a session no migration
// listed. It never changes an entry.
//
// Each session is checked first, and only one reported corrupt is
// repaired, in a write transaction of its own (under the session row's
// lock every write takes) in which the session's check runs again on
// what it wrote: the repair commits only when that check passes. So a
// session whose data is damaged (its header, an entry against its
// checksum, an entry's columns against its JSON, a placement) is left as
// it is: its problem is in the returned error, which joins one error per
// such session, each matching sessiontree.ErrCorrupt, as Check's does.
// An error of another kind stops the repair.
func (db *DB) Repair(ctx context.Context, id string) ([]sessiontree.RepairedSession, error) {
	if err := db.check(ctx); err != nil {
		return nil, err
	}
	ids := []string{id}
	if id == "" {
		if err := db.db.SelectContext(ctx, &ids, `SELECT id FROM sessions WHERE NOT deleting ORDER BY pk`); err != nil {
			return nil, fmt.Errorf("repair: %w", storageErr(err))
		}
	}
	return sessiontree.RepairEach(ids, id == "", func(id string) (error, error) {
		return db.repairIfCorrupt(ctx, id)
	})
}

// repairIfCorrupt checks session id and, when the check reports it
// corrupt, computes its derived values again (see [DB.Repair]). It
// returns what the repair mended, nil when the session was sound.
func (db *DB) repairIfCorrupt(ctx context.Context, id string) (was, err error) {
	was = db.checkSession(ctx, id)
	if was == nil || !errors.Is(was, sessiontree.ErrCorrupt) {
		return nil, was
	}
	st, err := db.OpenStorage(ctx, id)
	if err != nil {
		return nil, err
	}
	err = db.update(ctx, "repair", func(tx *sqlx.Tx) error {
		d, err := lockDerive(ctx, tx, st.pk)
		if err != nil || d == nil {
			return err
		}
		if err := d.save(ctx, tx, st.pk); err != nil {
			return err
		}
		if err := d.saveLeaf(ctx, tx, st); err != nil {
			return err
		}
		if err := st.check1(withSnapshot(ctx, tx)); err != nil {
			return fmt.Errorf("not repaired: its check after computing again: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("repair session %s: %w", id, err)
	}
	return was, nil
}

// saveLeaf writes the leaf the log gives to session s's row, with its
// placement, and the materialized branch to it as a leaf move writes it
// (session.moveBranch, from an emptied branch), and the first user text
// and the last change as the appends set them (noteFirstUser, lastChange).
// A leaf that does not exist (the target of a damaged leaf entry) is a
// CorruptError. The repair's alone: the Open's recomputation of the
// sessions a migration lists (redoDerived) has no check after it to keep
// a branch written from damage out.
func (d *derived) saveLeaf(ctx context.Context, tx *sqlx.Tx, s *Storage) error {
	w := &session{pk: s.pk}
	if _, err := tx.ExecContext(ctx, clearBranch, s.pk); err != nil {
		return err
	}
	if err := w.moveBranch(ctx, tx, d.leaf); errors.Is(err, sessiontree.ErrNotFound) {
		return &sessiontree.CorruptError{EntryID: d.leaf, Reason: "the leaf the log gives does not exist"}
	} else if err != nil {
		return err
	}
	var stored string
	if err := tx.GetContext(ctx, &stored, `SELECT updated_at FROM sessions WHERE pk = $1`, s.pk); err != nil {
		return err
	}
	last := ""
	if n := len(d.log); n > 0 {
		last = d.log[n-1].Timestamp
	}
	seq, depth, boundary := w.leafColumns()
	_, err := tx.ExecContext(ctx, `UPDATE sessions SET leaf_seq = $2, leaf_id = $3, leaf_depth = $4, boundary_depth = $5,
		first_user_text = $6, updated_at = $7 WHERE pk = $1`, s.pk, seq, w.leafID, depth, boundary, d.firstUser,
		lastChange(s.meta.CreatedAt, stored, last, int64(len(d.log))))
	return err
}
