package engine

import (
	"database/sql/driver"
	"fmt"

	"modernc.org/sqlite"

	"github.com/sessiontree/sessiontree"
)

// The SQL functions with which a migration computes again what the
// engine derives from an entry when it stores it, by the root package's
// rules, when such a rule has changed since older engines stored it
// (migration 22): entry_name(raw) is the name a session_info entry sets
// (sessiontree.NameOf, "" for none), entry_label(raw) the label a label
// entry sets (sessiontree.LabelOf, "" clears). Each takes the entry's JSON
// as CAST(raw AS BLOB) and gives NULL for JSON that is no entry.
const (
	sqlEntryNameFunc  = "entry_name"
	sqlEntryLabelFunc = "entry_label"
)

// registerDerivedFuncs gives d's connections entry_name and entry_label.
func registerDerivedFuncs(d *sqlite.Driver) error {
	for name, rule := range map[string]func(sessiontree.Entry) string{
		sqlEntryNameFunc:  sessiontree.NameOf,
		sqlEntryLabelFunc: sessiontree.LabelOf,
	} {
		if err := d.RegisterDeterministicScalarFunction(name, 1, entryTextFunc(name, rule)); err != nil {
			return fmt.Errorf("register %s: %w", name, err)
		}
	}
	return nil
}

// entryTextFunc is the SQL function name giving rule's text of the entry
// whose JSON is its argument.
func entryTextFunc(name string, rule func(sessiontree.Entry) string) func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) {
	return func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
		raw, ok := a[0].([]byte)
		if !ok {
			return nil, fmt.Errorf("%s: want a blob, got %T", name, a[0])
		}
		e, err := sessiontree.DecodeEntry(raw)
		if err != nil {
			return nil, nil
		}
		return rule(e), nil
	}
}
