package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/sessiontree/sessiontree"
	_ "modernc.org/sqlite" // the bare SQLite of the floor, the same driver the engine uses
)

// The floor is the physical limit of a workload: bare modernc SQLite doing
// the minimum the workload needs, with no library in between. Its schema
// is the least a tree store needs:
//
//   - entries: the log, one row per entry (rowid = append order), the JSON
//     kept whole, a unique index on id so parents can be looked up;
//   - active: the active path as (depth → JSON), with the JSON inline, so
//     reading the path is one range scan with no join: stricter than any
//     design that does not store every entry twice;
//   - session: one row with the leaf.
const floorSchema = `
CREATE TABLE entries(seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, parent_id TEXT, json BLOB NOT NULL);
CREATE TABLE active(depth INTEGER PRIMARY KEY, json BLOB NOT NULL);
CREATE TABLE session(id TEXT PRIMARY KEY, leaf TEXT);
`

const (
	floorInsert = `INSERT INTO entries(id, parent_id, json) VALUES(?, ?, ?)`
	floorActive = `SELECT json FROM active WHERE depth >= ? ORDER BY depth`
	floorLeaf   = `SELECT leaf FROM session WHERE id = ?`
	// floorWalk walks up through parent ids from an entry, returning at
	// most ?2 rows: the same rows the backends' path returns.
	floorWalk = `WITH RECURSIVE p(n, parent_id, json) AS (
	SELECT 1, parent_id, json FROM entries WHERE id = ?1
	UNION ALL
	SELECT p.n + 1, e.parent_id, e.json FROM entries e JOIN p ON e.id = p.parent_id WHERE p.n < ?2)
SELECT json FROM p`
	// floorMeet walks up from an entry to the entry ?2 where two branches
	// meet: the rows a move must rewrite in a materialized branch.
	floorMeet = `WITH RECURSIVE p(id, parent_id) AS (
	SELECT id, parent_id FROM entries WHERE id = ?1
	UNION ALL
	SELECT e.id, e.parent_id FROM entries e JOIN p ON e.id = p.parent_id WHERE p.id != ?2)
SELECT id FROM p`
)

// floorDSN opens path in WAL mode with the given synchronous level, the
// settings the engine uses.
func floorDSN(path, synchronous string) string {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+synchronous+")")
	q.Add("_pragma", "busy_timeout(5000)")
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

// openFloor opens a bare database with a single connection, so prepared
// statements stay on it.
func openFloor(ctx context.Context, path, synchronous string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", floorDSN(path, synchronous))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("floor: open %s: %w", path, err)
	}
	return db, nil
}

// floorStore is a dataset in the floor's schema.
type floorStore struct {
	path string
	ds   *dataset
	// activeFrom is the depth where the cut active path starts.
	activeFrom int
	// appendRaw are the JSON of the append drafts, as the backends would
	// write them, for the floor's insert loops.
	appendRaw [][]byte
	nextID    int
}

// buildFloor writes ds into a fresh floor database under dir.
func buildFloor(ctx context.Context, dir string, ds *dataset) (*floorStore, error) {
	path := filepath.Join(dir, "floor", ds.name()+".db")
	if err := removeDB(path); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	db, err := openFloor(ctx, path, "NORMAL")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, floorSchema); err != nil {
		return nil, fmt.Errorf("floor schema: %w", err)
	}
	if err := floorInsertAll(ctx, db, ds.Entries); err != nil {
		return nil, err
	}
	byID := make(map[string]sessiontree.Entry, len(ds.Entries))
	for _, e := range ds.Entries {
		byID[e.ID] = e
	}
	var full []sessiontree.Entry
	for id := ds.Leaf; id != ""; id = byID[id].ParentID {
		full = append(full, byID[id])
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	for i, e := range full {
		if _, err := tx.ExecContext(ctx, `INSERT INTO active(depth, json) VALUES(?, ?)`, len(full)-i, []byte(e.Raw)); err != nil {
			return nil, err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO session(id, leaf) VALUES(?, ?)`, ds.Meta.ID, ds.Leaf); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	fs := &floorStore{path: path, ds: ds, activeFrom: len(full) - len(ds.ActivePath) + 1}
	for i, d := range ds.Appends {
		e, err := sessiontree.BuildEntry(d, fmt.Sprintf("%08x", i), ds.Leaf, d.Timestamp)
		if err != nil {
			return nil, err
		}
		fs.appendRaw = append(fs.appendRaw, e.Raw)
	}
	return fs, nil
}

// floorInsertAll inserts entries in one transaction with a prepared
// statement: the floor of the batch import.
func floorInsertAll(ctx context.Context, db *sql.DB, entries []sessiontree.Entry) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, floorInsert)
	if err != nil {
		return err
	}
	for _, e := range entries {
		var parent any
		if e.ParentID != "" {
			parent = e.ParentID
		}
		if _, err := stmt.ExecContext(ctx, e.ID, parent, []byte(e.Raw)); err != nil {
			return fmt.Errorf("floor insert: %w", err)
		}
	}
	return tx.Commit()
}

// newAppendID returns an id the floor has not used: not hex, so it never
// meets a generated one.
func (f *floorStore) newAppendID() string {
	f.nextID++
	return fmt.Sprintf("z%07d", f.nextID)
}

// queryRows runs a prepared query and copies every returned JSON value out,
// as a caller that keeps the rows must.
func queryRows(ctx context.Context, stmt *sql.Stmt, args ...any) ([][]byte, error) {
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// removeDB removes a SQLite file and its WAL and shared-memory files.
func removeDB(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

// freshFloor removes any database at path and opens a new floor database
// there with schema, as the import floors start from nothing each run.
func freshFloor(ctx context.Context, path, schema string) (*sql.DB, error) {
	if err := removeDB(path); err != nil {
		return nil, err
	}
	db, err := openFloor(ctx, path, "NORMAL")
	if err != nil {
		return nil, err
	}
	if _, err := db.ExecContext(ctx, schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("floor schema: %w", err)
	}
	return db, nil
}
