package engine

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The schema fence (migration 28): triggers on the sessions table refuse
// a write, and with it its transaction, on the connection of a program
// older than the database's schema. Open refuses a newer schema; the
// fence stops a program that opened the database before a newer one
// migrated it, which would otherwise go on deriving values (counters,
// usage by day, names, labels) by its older rules, values every newer
// Check then calls corrupt. Every such write writes the session's row,
// so the fence sits there: one row per transaction on an append.
//
// The triggers ask sessiontree_upgrade_needed(N), which this engine
// defines on its connections (RegisterFunctions): 1 when it knows no
// schema N. An engine from before migration 28 does not define it, and
// its writes fail ("no such function: sessiontree_upgrade_needed")
// before anything is stored. A later migration that changes a rule of
// derived values creates the triggers again with its own version: this
// engine's writes then fail with the RAISE, which [fenced] turns into
// [ErrNewer].
const sqlUpgradeNeededFunc = "sessiontree_upgrade_needed"

// registerFenceFunc gives d's connections sessiontree_upgrade_needed.
// Deterministic, of a constant argument: SQLite computes it once per
// statement, not once per row.
func registerFenceFunc(d *sqlite.Driver) error {
	known := latestVersion()
	err := d.RegisterDeterministicScalarFunction(sqlUpgradeNeededFunc, 1, func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
		v, ok := a[0].(int64)
		if !ok {
			return nil, fmt.Errorf("%s: want an integer schema version, got %T", sqlUpgradeNeededFunc, a[0])
		}
		return v > known, nil
	})
	if err != nil {
		return fmt.Errorf("register %s: %w", sqlUpgradeNeededFunc, err)
	}
	return nil
}

// qUserVersion reads the database's schema version, which each
// migration's commit sets.
const qUserVersion = `PRAGMA user_version`

// fenced is the error of a write that failed with err inside its
// transaction, whose connection is still in it: when a trigger refused
// the write (the fence's RAISE is one) and the database's schema, read
// by version under the transaction's lock, is newer than this program
// knows, the fence refused it, and the error matches [ErrNewer]; other
// errors pass unchanged.
func fenced(ctx context.Context, err error, version func(ctx context.Context) (int64, error)) error {
	var se *sqlite.Error
	if !errors.As(err, &se) || se.Code() != sqlite3.SQLITE_CONSTRAINT_TRIGGER {
		return err
	}
	v, verr := version(ctx)
	if verr != nil || v <= latestVersion() {
		return err
	}
	return fmt.Errorf("the database's schema is %d, this program knows up to %d (a newer program migrated it since this one opened it): %w: %w",
		v, latestVersion(), ErrNewer, err)
}
