package pgengine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/migrate"
)

// redoDerived computes again, from their entries, what the writes derive
// from the entries of the sessions listed in derived_redo (migrations 14
// and 16: those an older engine derived by rules since fixed): one session
// per transaction, which takes it off the list, so that an interrupted run
// goes on at the next Open. Open calls it after the migrations when any
// is listed (afterMigrations).
func (db *DB) redoDerived(ctx context.Context) error {
	for {
		var pending bool
		if err := db.db.GetContext(ctx, &pending, `SELECT EXISTS (SELECT 1 FROM derived_redo)`); err != nil {
			return fmt.Errorf("recompute derived values: %w", storageErr(err))
		}
		if !pending {
			return nil
		}
		if err := db.upkeep(ctx, "recompute derived values", func(tx *sqlx.Tx) error { return redoNext(ctx, tx) }); err != nil {
			return err
		}
	}
}

// redoNext takes the first session off derived_redo and computes its
// values again. It takes the migrations' advisory lock first: processes
// opening the database at once do the sessions one after another, and one
// that finds the list empty has waited for the transaction that took the
// last one off, so that none returns from Open before every value is
// right.
func redoNext(ctx context.Context, tx *sqlx.Tx) error {
	if err := migrate.LockPostgres(ctx, tx); err != nil {
		return err
	}
	var session int64
	err := tx.GetContext(ctx, &session, `DELETE FROM derived_redo
		WHERE session = (SELECT min(session) FROM derived_redo) RETURNING session`)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // another process took the last one
	}
	if err != nil {
		return err
	}
	return redoSession(ctx, tx, session)
}

// derived is what the writes derive from a session's log, as they derive
// it: the name, the labels with the sequence number of the label entry
// that set each, the stats and the usage by day and bucket; and what the
// repair writes besides (saveLeaf): the leaf by the leaf rule, the first
// user text (noteFirstUser) and the log's entries.
type derived struct {
	name      sql.NullString
	labels    map[string]string
	labelSeq  map[string]int64
	tally     sessiontree.Tally
	shape     sessiontree.Shape
	usage     usageAdds
	leaf      string
	firstUser sql.NullString
	log       []sessiontree.Entry
}

// deriveLog replays log through the root package's rules. A label
// labels only an entry written before it (sessiontree.CheckTarget); a
// leaf entry's missing target, which only damage gives, is left to
// Check.
func deriveLog(log []sessiontree.Entry) *derived {
	d := &derived{labelSeq: map[string]int64{}, log: log}
	earlier := make(replayed, len(log))
	var r sessiontree.Replayer
	for _, e := range log {
		f := sessiontree.EffectsOf(e, "")
		_ = sessiontree.CheckTarget(&f, earlier) // a label's is never an error
		r.Apply(e, &f)
		if f.Label {
			d.labelSeq[f.Target] = e.Seq
		}
		earlier[e.ID] = e
		es := sessiontree.StatsOf(e)
		d.tally.AddEntryStats(es)
		d.usage.add(e, es)
		noteFirstUser(&d.firstUser, e)
	}
	d.name = sql.NullString{String: r.Name, Valid: r.Name != ""}
	d.labels, d.leaf = r.Labels, r.Leaf
	d.shape = sessiontree.ShapeOf(log, d.labels)
	return d
}

// redoSession replaces what session's row, labels and usage_days rows
// hold of its log's derived values with what its log gives, under the
// session row's lock that every write takes. A session deleted since it
// was listed has nothing to do.
func redoSession(ctx context.Context, tx *sqlx.Tx, session int64) error {
	d, err := lockDerive(ctx, tx, session)
	if err != nil || d == nil {
		return err
	}
	return d.save(ctx, tx, session)
}

// lockDerive locks session's row, as every write does, and replays its
// log (deriveLog); nil when the session has been deleted.
func lockDerive(ctx context.Context, tx *sqlx.Tx, session int64) (*derived, error) {
	var locked []int64
	if err := tx.SelectContext(ctx, &locked, `SELECT pk FROM sessions WHERE pk = $1 FOR UPDATE`, session); err != nil || len(locked) == 0 {
		return nil, err
	}
	var rows []row
	if err := tx.SelectContext(ctx, &rows, `SELECT `+rowCols+` FROM entries AS e WHERE e.session = $1 ORDER BY e.seq`, session); err != nil {
		return nil, err
	}
	log, err := entriesOf(rows)
	if err != nil {
		return nil, err
	}
	return deriveLog(log), nil
}

// save replaces session's labels, writes the name, the stats and the
// tree's counts to its row, and replaces its usage_days rows. The labels
// go first: their trigger counts each row it deletes and inserts
// (migration 21), and the row's count is written after, as the log
// gives it.
func (d *derived) save(ctx context.Context, tx *sqlx.Tx, session int64) error {
	if err := d.saveLabels(ctx, tx, session); err != nil {
		return err
	}
	if err := d.saveRow(ctx, tx, session); err != nil {
		return err
	}
	return d.saveUsage(ctx, tx, session)
}

// saveRow writes the name, the stats and the tree's counts to session's
// row.
func (d *derived) saveRow(ctx context.Context, tx *sqlx.Tx, session int64) error {
	c, err := countersOf(&d.tally)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE sessions SET name = $2, (`+countersColumns+`) =
		($3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14), (`+shapeColumns+`) = ($15, $16, $17, $18)
		WHERE pk = $1`, session, d.name,
		c.Entries, c.Messages, c.UserMessages, c.AssistantMessages, c.ToolResults, c.ToolCalls,
		c.Input, c.Output, c.CacheRead, c.CacheWrite, c.Cost, c.Buckets,
		d.shape.Branches, d.shape.Roots, d.shape.Compactions, d.shape.Labels)
	return err
}

// saveLabels replaces session's labels.
func (d *derived) saveLabels(ctx context.Context, tx *sqlx.Tx, session int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM labels WHERE session = $1`, session); err != nil {
		return err
	}
	var targets, labels []string
	var seqs []int64
	for target, label := range d.labels {
		targets, labels, seqs = append(targets, target), append(labels, label), append(seqs, d.labelSeq[target])
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO labels (session, target_id, label, entry_seq)
		SELECT $1, t, l, s FROM unnest($2::text[], $3::text[], $4::bigint[]) AS x (t, l, s)`, session, targets, labels, seqs)
	return err
}

// saveUsage replaces session's usage_days rows, as the writes add them
// (usageAdds, in log order).
func (d *derived) saveUsage(ctx context.Context, tx *sqlx.Tx, session int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM usage_days WHERE session = $1`, session); err != nil {
		return err
	}
	if rest, err := d.usage.flush(ctx, tx, session); err != nil || !rest {
		return err
	}
	_, err := tx.ExecContext(ctx, usageUpsert(2, false), append([]any{session}, d.usage.arrays()...)...)
	return err
}
