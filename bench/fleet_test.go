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
