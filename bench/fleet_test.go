package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestFleetFloorRound: each round commits one row per writer, keyed in
// the writer's session range and chained to the writer's row before it.
func TestFleetFloorRound(t *testing.T) {
	ctx := context.Background()
	db, err := openFloor(ctx, filepath.Join(t.TempDir(), "floor.db"), "NORMAL")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, fleetFloorSchema); err != nil {
		t.Fatal(err)
	}
	raw := [][]byte{[]byte(`{"a":1}`), []byte(`{"b":2}`)}
	for seq := 1; seq <= 2; seq++ {
		if err := fleetFloorRound(ctx, db, 3, seq, raw); err != nil {
			t.Fatalf("round %d: %v", seq, err)
		}
	}
	rows, err := db.QueryContext(ctx, `SELECT pk >> 32, pk & 0xffffffff, id, coalesce(parent_id, '') FROM entries ORDER BY pk`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	byID := map[string]bool{}
	for rows.Next() {
		var session, seq int
		var id, parent string
		if err := rows.Scan(&session, &seq, &id, &parent); err != nil {
			t.Fatal(err)
		}
		if (seq == 1) != (parent == "") || (parent != "" && !byID[parent]) {
			t.Errorf("session %d seq %d: parent %q does not precede it", session, seq, parent)
		}
		byID[id] = true
		got = append(got, fmt.Sprintf("%d/%d", session, seq))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := "1/1 1/2 2/1 2/2 3/1 3/2"; strings.Join(got, " ") != want {
		t.Errorf("rows (session/seq) %q; want %q", strings.Join(got, " "), want)
	}
}

// TestFleetTargetsNameTheFloor: the 64-writer target's line gives the
// floor's rate beside the engine's when the floor ran.
func TestFleetTargetsNameTheFloor(t *testing.T) {
	res := func(g int, backend string, ns float64) *Result {
		return &Result{Workload: "fleet", Shape: string(ShapeFleet), Size: g, Backend: backend, Rows: 512, MedianNs: ns, RunsNs: []float64{ns}}
	}
	rep := &Report{Results: []*Result{res(1, backendEngine, 25.6e6), res(64, backendEngine, 20.48e6), res(64, backendFloor, 12.8e6)}}
	lines := map[string]string{}
	rep.fleetTargets(func(target, measured, _ string) { lines[target] = measured }, func(target, why string) { t.Errorf("%s not run: %s", target, why) })
	var sixtyFour string
	for target, measured := range lines {
		if strings.Contains(target, "50,000") {
			sixtyFour = measured
		}
	}
	if want := "25000 entries/s (0.50× the target); the floor, bare SQLite committing only the rows: 40000 entries/s"; sixtyFour != want {
		t.Errorf("64-writer target measured %q; want %q", sixtyFour, want)
	}
}

// TestFleetTargetsSingleWriter: issue 17 item 2's third clause, the
// single writer's rate no worse than the 8,300 entries/s, gets a
// line of its own with a verdict, and "not measured" when the fleet did
// not run with one writer.
func TestFleetTargetsSingleWriter(t *testing.T) {
	res := func(g int, ns float64) *Result {
		return &Result{Workload: "fleet", Shape: string(ShapeFleet), Size: g, Backend: backendEngine, Rows: 512, MedianNs: ns, RunsNs: []float64{ns}}
	}
	for _, c := range []struct {
		name    string
		results []*Result
		want    string
	}{
		{"faster", []*Result{res(1, 51.2e6), res(64, 20.48e6)}, verdictMet},     // 10,000/s
		{"slower", []*Result{res(1, 102.4e6), res(64, 20.48e6)}, verdictMissed}, // 5,000/s
		{"one writer not run", []*Result{res(64, 20.48e6)}, verdictNotRun},
		{"fleet not run", nil, verdictNotRun},
	} {
		rep := &Report{Results: c.results}
		rep.fleetTargets(func(target, measured, v string) {
			rep.Targets = append(rep.Targets, Target{target, measured, v})
		}, func(target, why string) { rep.Targets = append(rep.Targets, Target{target, why, verdictNotRun}) })
		var got []Target
		for _, tg := range rep.Targets {
			if strings.Contains(tg.Target, "single writer") {
				got = append(got, tg)
			}
		}
		if len(got) != 1 || got[0].Verdict != c.want {
			t.Errorf("%s: single-writer targets %+v; want one, %s", c.name, got, c.want)
		}
	}
}
