package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
)

// The other sides of the read path's A/B benchmarks (readpath_bench_test.go):
// ways of reading the active path other than the engine's, and a switch for
// the statement cache.

// PathRead names a way of reading the active path's rows.
type PathRead string

// The ways of reading the active path the benchmarks compare.
const (
	// PathEngine is the engine's own read (branchRange).
	PathEngine PathRead = "engine"
	// PathRows reads one row per entry through the engine's connection:
	// key, JSON, checksum and canonical mark, the fields from the JSON
	// (qBranchRange, the engine's fallback).
	PathRows PathRead = "rows"
	// PathPlain reads one row per entry through the engine's connection
	// with the four fields as four columns.
	PathPlain PathRead = "plain"
	// PathSQL is PathPlain's query through database/sql (sqlx), with
	// statements database/sql prepared once, in a read transaction.
	PathSQL PathRead = "sql"
)

// qBranchPlain reads the branch rows lo..hi as plain columns.
const qBranchPlain = `SELECT e.pk, e.type, e.id, coalesce(e.parent_id, ''), e.timestamp, CAST(e.raw AS BLOB), e.checksum
FROM branch b JOIN entries e ON e.pk = b.entry
WHERE b.session = ?1 AND b.depth BETWEEN ?2 AND ?3 ORDER BY b.depth`

// scanPlain reads an entry from a row of plain columns (qBranchPlain's),
// checking its checksum.
func scanPlain(r interface{ Scan(...any) error }) (sessiontree.Entry, error) {
	var pk int64
	var typ, id, parent, ts string
	var raw []byte
	var sum sql.NullInt64
	if err := r.Scan(&pk, &typ, &id, &parent, &ts, &raw, &sum); err != nil {
		return sessiontree.Entry{}, err
	}
	if reason := sessiontree.ChecksumProblem(raw, sum.Int64, sum.Valid); reason != "" {
		return sessiontree.Entry{}, &checksumError{pk: pk, reason: reason}
	}
	return sessiontree.Entry{Seq: pk & 0xffffffff, Type: sessiontree.EntryType(typ), ID: id, ParentID: parent, Timestamp: ts, Raw: raw}, nil
}

// plainRange reads the branch rows lo..hi as plain columns on the engine's
// connection.
func plainRange(r q, out []sessiontree.Entry, session, lo, hi int64) ([]sessiontree.Entry, error) {
	rows, err := r.rows(qBranchPlain, session, lo, hi)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanPlain(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// rowRange reads the branch rows lo..hi one row per entry (qBranchRange).
func rowRange(r q, out []sessiontree.Entry, session, lo, hi int64) ([]sessiontree.Entry, error) {
	return r.appendEntries(out, qBranchRange, session, lo, hi)
}

// viaStorage is a Storage whose Path and FullPath read the active path
// another way.
type viaStorage struct {
	*Storage
	how PathRead
	sql *sqlPath
}

// sqlPath holds the statements of PathSQL, prepared once on the read pool.
type sqlPath struct {
	place, branch *sqlx.Stmt
}

// WithPathRead returns st as a sessiontree.Storage whose Path and FullPath
// read the active path the way how says; close returns the statements it
// prepared.
func WithPathRead(ctx context.Context, st *Storage, how PathRead) (s sessiontree.Storage, close func(), err error) {
	v := &viaStorage{Storage: st, how: how}
	if how != PathSQL {
		return v, func() {}, nil
	}
	v.sql = &sqlPath{}
	if v.sql.place, err = st.db.r.PreparexContext(ctx, qEntryPlace); err != nil {
		return nil, nil, err
	}
	if v.sql.branch, err = st.db.r.PreparexContext(ctx, qBranchPlain); err != nil {
		v.sql.place.Close()
		return nil, nil, err
	}
	return v, func() { v.sql.place.Close(); v.sql.branch.Close() }, nil
}

// Path reads the path the chosen way.
func (v *viaStorage) Path(ctx context.Context, from string) ([]sessiontree.Entry, error) {
	return v.path(ctx, from, false)
}

// FullPath reads the full path the chosen way.
func (v *viaStorage) FullPath(ctx context.Context, from string) ([]sessiontree.Entry, error) {
	return v.path(ctx, from, true)
}

func (v *viaStorage) path(ctx context.Context, from string, full bool) ([]sessiontree.Entry, error) {
	if from == "" {
		return nil, nil
	}
	var rng rangeReader
	switch v.how {
	case PathEngine:
		return v.Storage.path(ctx, from, full)
	case PathSQL:
		return v.sql.read(ctx, v.Storage, from, full)
	case PathRows:
		rng = rowRange
	case PathPlain:
		rng = plainRange
	default:
		return nil, fmt.Errorf("unknown path read %q", v.how)
	}
	var out []sessiontree.Entry
	err := v.db.view(ctx, func(r q) (err error) {
		out, err = v.readPath(r, from, full, rng)
		return err
	})
	return out, err
}

// read reads a path on the active branch through database/sql, in a read
// transaction; a path off it is an error (the benchmarks read the leaf's).
func (p *sqlPath) read(ctx context.Context, s *Storage, from string, full bool) ([]sessiontree.Entry, error) {
	tx, err := s.db.r.BeginTxx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var pk, depth, start int64
	var onBranch bool
	if err := tx.StmtxContext(ctx, p.place).QueryRowxContext(ctx, s.pk, from).Scan(&pk, &depth, &start, &onBranch); err != nil {
		return nil, err
	}
	if !onBranch {
		return nil, errors.New("sql path: entry not on the active branch")
	}
	lo := start
	if full {
		lo = 1
	}
	rows, err := tx.StmtxContext(ctx, p.branch).QueryxContext(ctx, s.pk, lo, depth)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]sessiontree.Entry, 0, depth-lo+1)
	for rows.Next() {
		e, err := scanPlain(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if int64(len(out)) != depth-lo+1 || out[len(out)-1].ID != from {
		return nil, &sessiontree.CorruptError{EntryID: from, Reason: "materialized branch has gaps"}
	}
	return out, nil
}

// SetStmtCache turns the connections' statement cache on or off.
func SetStmtCache(db *DB, on bool) {
	db.wc.noCache.Store(!on)
	db.rc.noCache.Store(!on)
}

// EntrySQL reads an entry by id through database/sql (sqlx) with a
// statement database/sql prepared once; close returns it.
func EntrySQL(ctx context.Context, s *Storage) (read func(ctx context.Context, id string) (sessiontree.Entry, error), close func(), err error) {
	const qEntryPlain = `SELECT e.pk, e.type, e.id, coalesce(e.parent_id, ''), e.timestamp, CAST(e.raw AS BLOB), e.checksum
FROM entries e WHERE e.session = ?1 AND e.id = ?2`
	stmt, err := s.db.r.PreparexContext(ctx, qEntryPlain)
	if err != nil {
		return nil, nil, err
	}
	read = func(ctx context.Context, id string) (sessiontree.Entry, error) {
		return scanPlain(stmt.QueryRowxContext(ctx, s.pk, id))
	}
	return read, func() { stmt.Close() }, nil
}
