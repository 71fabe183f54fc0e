package main

import (
	"context"
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

// fleetCases are the engine's fleet of ds.Size writers and the floor: the
// same number of rows inserted by one writer in one transaction, a bare
// batch insert.
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
	}}, {backend: backendFloor, setup: func(ctx context.Context) (*prepared, error) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		path := filepath.Join(dir, fmt.Sprintf("floor-%d.db", g))
		db, err := openFloor(ctx, path, "NORMAL")
		if err != nil {
			return nil, err
		}
		done := func() error { return errors.Join(db.Close(), removeDB(path)) }
		if _, err := db.ExecContext(ctx, floorSchema); err != nil {
			done()
			return nil, err
		}
		// The rows of one operation, given fresh ids each time.
		rows := make([]sessiontree.Entry, g*each)
		for i := range rows {
			d := ds.Appends[i%len(ds.Appends)]
			e, err := sessiontree.BuildEntry(d, "x", "", d.Timestamp)
			if err != nil {
				done()
				return nil, err
			}
			rows[i] = e
		}
		n := 0
		return &prepared{rows: g * each, close: done, note: "one transaction",
			op: func(ctx context.Context) error {
				for i := range rows {
					n++
					rows[i].ID = fmt.Sprintf("f%08x", n)
				}
				return floorInsertAll(ctx, db, rows)
			}}, nil
	}}}
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

// fleetTargets checks issue 17's fleet targets: ≥ 50,000 acknowledged
// entries/s at 64 writers, and ≥ 5× one writer.
func (rep *Report) fleetTargets(add func(string, string, string), notRun func(string, string)) {
	rate := func(g int) float64 {
		if r := rep.find("fleet", string(ShapeFleet), g, backendEngine); r != nil && r.MedianNs > 0 {
			return float64(r.Rows) / (r.MedianNs / 1e9)
		}
		return 0
	}
	const many = 64
	t1 := fmt.Sprintf("fleet: %d writers, one database, ≥ 50,000 acknowledged entries/s (WAL, synchronous=NORMAL)", many)
	t2 := fmt.Sprintf("fleet: %d writers ≥ 5× one writer's entries/s", many)
	rm, r1 := rate(many), rate(1)
	if rm == 0 {
		notRun(t1, "fleet not run with 64 writers (-fleet)")
		notRun(t2, "fleet not run with 64 writers (-fleet)")
		return
	}
	add(t1, fmt.Sprintf("%.0f entries/s (%.2f× the target)", rm, rm/50_000), verdict(rm >= 50_000))
	if r1 == 0 {
		notRun(t2, "fleet not run with 1 writer (-fleet)")
		return
	}
	add(t2, fmt.Sprintf("%.0f vs %.0f entries/s: %.2f×", rm, r1, rm/r1), verdict(rm >= 5*r1))
}
