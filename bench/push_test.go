package main

import (
	"strings"
	"testing"
)

// TestPushTarget: issue 15's "push of 100,000 entries in < 10 s" has a
// line of its own: "not measured" without a postgres push row, its
// verdict on the postgres row at 100k (SQLite to SQLite beside it), and
// the size it was checked at when 100k did not run.
func TestPushTarget(t *testing.T) {
	res := func(size int, backend string, ns float64) *Result {
		return &Result{Workload: "push", Shape: string(ShapeCompacted), Size: size, Backend: backend, Rows: size, MedianNs: ns, RunsNs: []float64{ns}}
	}
	for _, c := range []struct {
		name    string
		results []*Result
		verdict string
		measure string
	}{
		{"not run", nil, verdictNotRun, "-pg"},
		{"sqlite only", []*Result{res(100_000, backendStore, 3e9)}, verdictNotRun, "-pg"},
		{"met", []*Result{res(100_000, backendPostgres, 8e9), res(100_000, backendStore, 4e9)}, verdictMet, "8.00s (12500 entries/s); SQLite to SQLite 4.00s"},
		{"missed", []*Result{res(100_000, backendPostgres, 12.5e9)}, verdictMissed, "12.5s (8000 entries/s), 1.25× the bound"},
		{"smaller", []*Result{res(10_000, backendPostgres, 2e9)}, verdictMet, "(at 10k; the target is for 100k)"},
	} {
		rep := &Report{Results: c.results}
		rep.checkTargets()
		var got []Target
		for _, tg := range rep.Targets {
			if strings.Contains(tg.Target, "push") {
				got = append(got, tg)
			}
		}
		if len(got) != 1 || got[0].Verdict != c.verdict || !strings.Contains(got[0].Measured, c.measure) {
			t.Errorf("%s: push targets %+v; want one, %s, measured containing %q", c.name, got, c.verdict, c.measure)
		}
	}
}
