package engine

import (
	"database/sql/driver"
	"fmt"

	"modernc.org/sqlite"

	"github.com/sessiontree/sessiontree"
)

// Checksums of the stored JSON (migration 11): every entries row
// carries in its checksum column the [sessiontree.EntryChecksum] of its
// raw bytes, computed by the write that stores it; [DB.Check] finds a
// row whose JSON does not match, and every read that hands out entries
// refuses it with a sessiontree.CorruptError naming the entry.

// checksumError is a checksum problem found by a read that knows the
// entry's key but not (yet) its id, which the JSON it cannot trust would
// give; q.entryError turns it into a sessiontree.CorruptError naming the
// entry.
type checksumError struct {
	pk     int64
	reason string
}

func (e *checksumError) Error() string {
	return fmt.Sprintf("corrupt session: entry %d: %s", e.pk&0xffffffff, e.reason)
}

// Is makes errors.Is(err, sessiontree.ErrCorrupt) true.
func (e *checksumError) Is(target error) bool { return target == sessiontree.ErrCorrupt }

// qEntryID reads an entry's id by key (its column, not its JSON).
const qEntryID = `SELECT id FROM entries WHERE pk = ?1`

// entryError names the entry of a checksumError: err becomes a
// sessiontree.CorruptError with the entry's id, read from its column.
// Other errors pass unchanged.
func (x q) entryError(err error) error {
	ce, ok := err.(*checksumError)
	if !ok {
		return err
	}
	var id string
	if qerr := x.row(qEntryID, args(ce.pk), &id); qerr != nil {
		return &sessiontree.CorruptError{Reason: fmt.Sprintf("entry %d: %s", ce.pk&0xffffffff, ce.reason)}
	}
	return &sessiontree.CorruptError{EntryID: id, Reason: ce.reason}
}

// sqlChecksumFunc is the SQL function the engine's connections have, so
// that SQL can compute what sessiontree.EntryChecksum does:
// entry_checksum(X) of a blob X (migration 11 fills the column of older
// rows with it; pass CAST(raw AS BLOB), whose bytes are exactly the
// stored text's). It is NULL for NULL.
const sqlChecksumFunc = "entry_checksum"

// sqlHeaderChecksumFunc is sessiontree.HeaderChecksum as an SQL function
// of a sessions row's header columns: header_checksum(id, version,
// created_at, cwd, parent_session), parent_session NULL for none
// (migration 25 fills the column of the sessions stored before it).
const sqlHeaderChecksumFunc = "header_checksum"

// sqlDerivedTextFunc is sessiontree.DerivedText as an SQL function of one
// text, passed as CAST(text AS BLOB) so that it arrives whole past a NUL
// (NULL for NULL): migration 18 applies it to the texts stored before the
// rule existed. SQLite's replace() cannot, as it takes a pattern
// beginning with a NUL for an empty one.
const sqlDerivedTextFunc = "derived_text"

// newDriver returns a driver of the engine's own, whose connections have
// the engine's SQL functions. A driver per DB, rather than functions
// registered on modernc's package-level driver, keeps them off every other
// connection of the process.
func newDriver() (*sqlite.Driver, error) {
	d := &sqlite.Driver{}
	if err := RegisterFunctions(d); err != nil {
		return nil, err
	}
	return d, nil
}

// RegisterFunctions gives the connections d opens the SQL functions the
// engine's migrations call: entry_checksum (migration 11), those of
// migration 12 (see usage.go) and entry_search_text (migration 13, see
// searchtext.go), derived_text (migration 18), entry_name and entry_label
// (migration 22, see derivedfuncs.go), entry_indexed_text (migration 23),
// header_checksum (migration 25) and sessiontree_upgrade_needed, which the
// schema fence's triggers call on every write (migration 28, see
// fence.go): without it no sessions row can be written. The engine's own connections have
// them; this is for a tool that applies package migrate's files on a
// driver of its own.
func RegisterFunctions(d *sqlite.Driver) error {
	err := d.RegisterDeterministicScalarFunction(sqlChecksumFunc, 1, func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
		switch v := a[0].(type) {
		case nil:
			return nil, nil
		case []byte:
			return sessiontree.EntryChecksum(v), nil
		}
		return nil, fmt.Errorf("%s: want a blob, got %T", sqlChecksumFunc, a[0])
	})
	if err != nil {
		return fmt.Errorf("register %s: %w", sqlChecksumFunc, err)
	}
	if err := d.RegisterDeterministicScalarFunction(sqlHeaderChecksumFunc, 5, sqlHeaderChecksum); err != nil {
		return fmt.Errorf("register %s: %w", sqlHeaderChecksumFunc, err)
	}
	err = d.RegisterDeterministicScalarFunction(sqlDerivedTextFunc, 1, func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
		switch v := a[0].(type) {
		case nil:
			return nil, nil
		case string:
			return sessiontree.DerivedText(v), nil
		case []byte:
			return sessiontree.DerivedText(string(v)), nil
		}
		return nil, fmt.Errorf("%s: want a text, got %T", sqlDerivedTextFunc, a[0])
	})
	if err != nil {
		return fmt.Errorf("register %s: %w", sqlDerivedTextFunc, err)
	}
	if err := registerSearchText(d); err != nil {
		return err
	}
	if err := registerDerivedFuncs(d); err != nil {
		return err
	}
	if err := registerFenceFunc(d); err != nil {
		return err
	}
	return registerUsageFuncs(d)
}

// sqlHeaderChecksum is header_checksum's body: the texts may come as
// text or blob, the version as an integer.
func sqlHeaderChecksum(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
	var texts [4]string
	for i, v := range []driver.Value{a[0], a[2], a[3], a[4]} {
		switch v := v.(type) {
		case nil:
		case string:
			texts[i] = v
		case []byte:
			texts[i] = string(v)
		default:
			return nil, fmt.Errorf("%s: want a text, got %T", sqlHeaderChecksumFunc, v)
		}
	}
	version, ok := a[1].(int64)
	if !ok {
		return nil, fmt.Errorf("%s: want an integer version, got %T", sqlHeaderChecksumFunc, a[1])
	}
	return sessiontree.HeaderChecksum(sessiontree.SessionMeta{
		ID: texts[0], Version: int(version), CreatedAt: texts[1], Cwd: texts[2], ParentSession: texts[3],
	}), nil
}
