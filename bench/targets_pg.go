package main

import "fmt"

// pgTargets checks issue 15's speed targets for the PostgreSQL engine (the
// postgres rows, over loopback), with the SQLite engine's figures beside
// them where the issue asks for them.
func (rep *Report) pgTargets(add func(string, string, string), notRun func(string, string)) {
	const why = "postgres not measured (-pg URL or -pg auto)"
	resume := "postgres: resume of a compacted 100k session < 10 ms"
	n, at := rep.atSize("resume", "compacted", targetSize)
	if r := rep.find("resume", "compacted", n, backendPostgres); r != nil {
		add(resume, fmtDuration(r.MedianNs)+at+rep.beside("resume", "compacted", n), verdict(r.MedianNs < 10e6))
	} else {
		notRun(resume, why)
	}

	imp := "postgres: batch import ≥ 20 MB/s"
	n, at = rep.atSize("import", "linear", targetSize)
	if r := rep.find("import", "linear", n, backendPostgres); r != nil && r.Bytes > 0 {
		mbs := float64(r.Bytes) / 1e6 / (r.MedianNs / 1e9)
		eng := ""
		if e := rep.find("import", "linear", n, backendEngine); e != nil {
			eng = fmt.Sprintf("; engine %.1f MB/s", float64(e.Bytes)/1e6/(e.MedianNs/1e9))
		}
		add(imp, fmt.Sprintf("%.1f MB/s%s%s", mbs, at, eng), verdict(mbs >= 20))
	} else {
		notRun(imp, why)
	}

	rep.pushTarget(add, notRun)

	rate := func(workload string, shape Shape, g int, backend string) float64 {
		if r := rep.find(workload, string(shape), g, backend); r != nil {
			return float64(r.Rows) / (r.MedianNs / 1e9)
		}
		return 0
	}
	for _, b := range []string{backendPostgres, backendEngine} {
		target := "postgres: 16 writers on 16 sessions from 4 processes ≥ 4× one writer's entries/s"
		if b == backendEngine {
			target = "engine (SQLite, for reference: its writes serialize): 16 writers from 4 processes ≥ 4× one writer"
		}
		r16, r1 := rate("writers", ShapeWriters, 16, b), rate("writers", ShapeWriters, 1, b)
		if r16 == 0 || r1 == 0 {
			notRun(target, b+" not measured in the writers workload")
			continue
		}
		on := ""
		if b == backendPostgres && rep.PGCommits != "" {
			on = " (" + rep.PGCommits + ")"
		}
		add(target, fmt.Sprintf("%.0f vs %.0f entries/s: %.2f×%s", r16, r1, r16/r1, on), verdict(r16 >= 4*r1))
	}

	fleet := "postgres fleet (issue 17's targets, for reference): 64 writers ≥ 5× one writer's entries/s"
	if rm, r1 := rate("fleet", ShapeFleet, 64, backendPostgres), rate("fleet", ShapeFleet, 1, backendPostgres); rm > 0 && r1 > 0 {
		add(fleet, fmt.Sprintf("%.0f vs %.0f entries/s: %.2f× (engine: %.0f vs %.0f)", rm, r1, rm/r1,
			rate("fleet", ShapeFleet, 64, backendEngine), rate("fleet", ShapeFleet, 1, backendEngine)), verdict(rm >= 5*r1))
	} else {
		notRun(fleet, "postgres fleet not run at 1 and 64 writers")
	}
}

// beside is the engine's median of the same case, for a target's line.
func (rep *Report) beside(workload, shape string, n int) string {
	if e := rep.find(workload, shape, n, backendEngine); e != nil {
		return "; engine " + fmtDuration(e.MedianNs)
	}
	return ""
}
