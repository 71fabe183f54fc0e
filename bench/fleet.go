package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// The fleet workload is issue 17's "many agents, one database": G writers,
// each appending to a session of its own in one engine database, every
// append returning only once its entry is committed. Its results have the
// shape "fleet" and the number of writers as their size.

// ShapeFleet names the results of the fleet workload; their size is the
// number of writers.
const ShapeFleet Shape = "fleet"

// fleetOpEntries is how many entries one operation of the fleet workload
// appends in all, split evenly between the writers (at least one each),
// so that every G appends about as much per operation.
const fleetOpEntries = 512

// fleetPerWriter is how many entries each of g writers appends in one
// operation.
func fleetPerWriter(g int) int { return max(1, fleetOpEntries/g) }

// runFleet runs the fleet workload once per number of writers in
// Options.FleetWriters.
func (r *runner) runFleet(ctx context.Context) error {
	w := findWorkload("fleet")
	if len(r.opts.FleetWriters) == 0 || !r.opts.wantsWorkload(w.name) {
		return nil
	}
	drafts, err := generate(r.opts.Seed, ShapeLinear, 1000, filepath.Join(r.dir, "fleet-drafts"))
	if err != nil {
		return err
	}
	defer func() {
		r.ds = nil
		if !r.opts.Keep {
			os.RemoveAll(filepath.Join(r.dir, "fleet-drafts"))
			os.RemoveAll(filepath.Join(r.dir, "fleet"))
		}
	}()
	for _, g := range r.opts.FleetWriters {
		r.ds = &dataset{Shape: ShapeFleet, Size: g, Appends: drafts.Appends}
		if err := r.runWorkload(ctx, w, w.cases(r, r.ds)); err != nil {
			return err
		}
	}
	return nil
}

// fleetCases are the PostgreSQL and engine fleets of ds.Size writers and
// their floor (fleetFloorCase).
func fleetCases(r *runner, ds *dataset) []benchCase {
	g, each := ds.Size, fleetPerWriter(ds.Size)
	dir := filepath.Join(r.dir, "fleet")
	return []benchCase{pgFleetCase(r, ds), {backend: backendEngine, setup: func(ctx context.Context) (*prepared, error) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		path := filepath.Join(dir, fmt.Sprintf("engine-%d.db", g))
		db, err := engine.Open(ctx, path, engine.Options{})
		if err != nil {
			return nil, err
		}
		done := func() error { return errors.Join(db.Close(), removeDB(path)) }
		writers := make([]*sessiontree.Session, g)
		for i := range writers {
			st, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: benchCwd})
			if err != nil {
				done()
				return nil, err
			}
			writers[i] = sessiontree.NewSession(st, sessiontree.SessionOptions{})
		}
		return &prepared{rows: g * each, close: done, note: fmt.Sprintf("%d appends by each writer", each),
			op: func(ctx context.Context) error { return runWriters(ctx, writers, each, ds.Appends) }}, nil
	}}, fleetFloorCase(r, ds)}
}

// fleetFloorSchema is the least a store of many sessions needs: each
// session's entries one range of the key (session << 32 | seq), as a
// session's log is read, and an index of their ids.
const fleetFloorSchema = `CREATE TABLE entries(pk INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, parent_id TEXT, json BLOB NOT NULL)`

// fleetFloorCase is the fleet's floor: bare modernc SQLite committing the
// fleet's appends as a group commit at its best would, and doing nothing
// else. Each transaction holds one append of every writer (an append is
// acknowledged only once committed, so a writer has one in each) and
// inserts the rows into fleetFloorSchema: no session row, branch, counter
// or index beyond the id's. The engine's fleet cannot be faster than
// this.
func fleetFloorCase(r *runner, ds *dataset) benchCase {
	g, each := ds.Size, fleetPerWriter(ds.Size)
	dir := filepath.Join(r.dir, "fleet")
	return benchCase{backend: backendFloor, setup: func(ctx context.Context) (*prepared, error) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		path := filepath.Join(dir, fmt.Sprintf("floor-%d.db", g))
		db, err := openFloor(ctx, path, "NORMAL")
		if err != nil {
			return nil, err
		}
		done := func() error { return errors.Join(db.Close(), removeDB(path)) }
		if _, err := db.ExecContext(ctx, fleetFloorSchema); err != nil {
			done()
			return nil, err
		}
		raw := make([][]byte, len(ds.Appends))
		for i, d := range ds.Appends {
			e, err := sessiontree.BuildEntry(d, "x", "", d.Timestamp)
			if err != nil {
				done()
				return nil, err
			}
			raw[i] = []byte(e.Raw)
		}
		seq := 0 // each writer's entries so far: all writers append alike
		return &prepared{rows: g * each, close: done, note: fmt.Sprintf("%d transactions of one append per writer", each),
			op: func(ctx context.Context) error {
				for range each {
					seq++
					if err := fleetFloorRound(ctx, db, g, seq, raw); err != nil {
						return err
					}
				}
				return nil
			}}, nil
	}}
}

// fleetFloorRound commits the seq-th append of each of g writers in one
// transaction, writer w's row keyed in session w+1's range.
func fleetFloorRound(ctx context.Context, db *sql.DB, g, seq int, raw [][]byte) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO entries(pk, id, parent_id, json) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	for w := range g {
		pk := int64(w+1)<<32 | int64(seq)
		var parent any
		if seq > 1 {
			parent = fmt.Sprintf("f%x", pk-1)
		}
		if _, err := stmt.ExecContext(ctx, pk, fmt.Sprintf("f%x", pk), parent, raw[(w+seq)%len(raw)]); err != nil {
			return fmt.Errorf("fleet floor insert: %w", err)
		}
	}
	return tx.Commit()
}

// runWriters has each writer append each drafts, at once, and returns
// the first error.
func runWriters(ctx context.Context, writers []*sessiontree.Session, each int, drafts []sessiontree.Draft) error {
	var wg sync.WaitGroup
	errs := make([]error, len(writers))
	for w, s := range writers {
		wg.Go(func() {
			for i := range each {
				d := drafts[(w*each+i)%len(drafts)]
				if _, err := s.Append(ctx, d.Type, d.Fields, sessiontree.AppendOptions{}); err != nil {
					errs[w] = fmt.Errorf("writer %d: %w", w, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// fleetSingleToday is issue 17's "today" for one writer: 8.3k entries/s
// (in-process, engine + Session, measured 2026-12-03 on the development
// machine), which the single writer's rate must not fall below.
const fleetSingleToday = 8300

// fleetTargets checks issue 17's fleet targets: ≥ 50,000 acknowledged
// entries/s at 64 writers, ≥ 5× one writer, and one writer no slower than
// the today.
func (rep *Report) fleetTargets(add func(string, string, string), notRun func(string, string)) {
	rateOf := func(g int, backend string) float64 {
		if r := rep.find("fleet", string(ShapeFleet), g, backend); r != nil && r.MedianNs > 0 {
			return float64(r.Rows) / (r.MedianNs / 1e9)
		}
		return 0
	}
	rate := func(g int) float64 { return rateOf(g, backendEngine) }
	const many = 64
	t1 := fmt.Sprintf("fleet: %d writers, one database, ≥ 50,000 acknowledged entries/s (WAL, synchronous=NORMAL)", many)
	t2 := fmt.Sprintf("fleet: %d writers ≥ 5× one writer's entries/s", many)
	rm, r1 := rate(many), rate(1)
	t3 := fmt.Sprintf("fleet: single writer no worse than the issue's today (%d entries/s)", fleetSingleToday)
	if r1 == 0 {
		notRun(t3, "fleet not run with 1 writer (-fleet)")
	} else {
		add(t3, fmt.Sprintf("%.0f entries/s (%.2f× today's)", r1, r1/fleetSingleToday), verdict(r1 >= fleetSingleToday))
	}
	if rm == 0 {
		notRun(t1, "fleet not run with 64 writers (-fleet)")
		notRun(t2, "fleet not run with 64 writers (-fleet)")
		return
	}
	measured := fmt.Sprintf("%.0f entries/s (%.2f× the target)", rm, rm/50_000)
	if floor := rateOf(many, backendFloor); floor > 0 {
		measured += fmt.Sprintf("; the floor, bare SQLite committing only the rows: %.0f entries/s", floor)
	}
	add(t1, measured, verdict(rm >= 50_000))
	if r1 == 0 {
		notRun(t2, "fleet not run with 1 writer (-fleet)")
		return
	}
	add(t2, fmt.Sprintf("%.0f vs %.0f entries/s: %.2f×", rm, r1, rm/r1), verdict(rm >= 5*r1))
}
