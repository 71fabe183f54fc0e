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
// the usage by day), for a session no migration listed. It never changes
// an entry.
//
// Each session is checked first, and only one reported corrupt is
// repaired, in a write transaction of its own (redoSession, under the
// session row's lock every write takes) in which the session's check
// runs again on what it wrote: the repair commits only when that check
// passes. So a session whose data is damaged (its header, an entry's
// columns against its JSON, a placement) or whose other derived values
// (the leaf, the branch, the first user text) disagree is left as it is:
// its problem is in the returned error, which joins one error per such
// session, each matching sessiontree.ErrCorrupt, as Check's does. An
// error of another kind stops the repair.
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
		if err := redoSession(ctx, tx, st.pk); err != nil {
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
