package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree/internal/pgtest"
)

// TestPGNotesTheServer: a run with postgres rows says in its notes what
// server they ran on and its durability settings (fsync,
// synchronous_commit), since those decide what a commit costs: -pg auto's
// throwaway cluster runs with fsync off, which no SQLite row does.
func TestPGNotesTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster")
	}
	opts := QuickOptions()
	opts.PG, opts.Sizes, opts.Shapes, opts.Runs, opts.MinRunTime = pgAuto, []int{100}, []Shape{ShapeCompacted}, 1, 0
	opts.Workloads, opts.Backends, opts.CorpusSessions, opts.FleetWriters = []string{"open"}, []string{backendPostgres}, 0, nil
	rep, stdout := runPG(t, opts, 2*time.Minute)
	notes := strings.Join(rep.Notes, "\n")
	for _, want := range []string{"rows ran on PostgreSQL ", "fsync=off", "synchronous_commit=off"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if !strings.Contains(stdout, "fsync=off") {
		t.Errorf("the table does not state the server's fsync:\n%.800s", stdout)
	}
}

// TestPGDurableWritersTarget: -pg auto -pg-durable runs the postgres rows
// on a cluster that syncs its commits, -pg-commit-delay reaches the
// engine's connections, and the writers target's line says both, since
// they decide what the 16 writers' commits cost.
func TestPGDurableWritersTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster")
	}
	opts := QuickOptions()
	opts.PG, opts.PGDurable, opts.PGCommitDelay = pgAuto, true, "50"
	opts.Sizes, opts.Shapes, opts.Runs, opts.MinRunTime = []int{1000}, []Shape{ShapeLinear}, 1, 0
	opts.Workloads, opts.Backends, opts.CorpusSessions, opts.FleetWriters = []string{"writers"}, []string{backendPostgres}, 0, nil
	rep, _ := runPG(t, opts, 3*time.Minute)
	const want = "fsync=on, synchronous_commit=on, commit_delay=50 µs, commit_siblings=1"
	if rep.PGCommits != want {
		t.Errorf("PGCommits = %q; want %q", rep.PGCommits, want)
	}
	found := false
	for _, tg := range rep.Targets {
		if strings.HasPrefix(tg.Target, "postgres: 16 writers") {
			found = true
			if !strings.Contains(tg.Measured, "("+want+")") {
				t.Errorf("writers target = %q; want it to say (%s)", tg.Measured, want)
			}
		}
	}
	if !found {
		t.Errorf("no postgres writers target in %+v", rep.Targets)
	}
}

// runPG runs the bench with opts (its Dir and Out temporary folders of
// t) within limit and returns its report and its standard output; it
// skips t when there is no PostgreSQL server, except under CI.
func runPG(t *testing.T, opts Options, limit time.Duration) (Report, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	opts.Dir, opts.Out = t.TempDir(), t.TempDir()
	var stdout, stderr bytes.Buffer
	err := run(ctx, opts, &stdout, &stderr)
	if errors.Is(err, pgtest.ErrNoServer) && os.Getenv("CI") != "true" {
		t.Skipf("no PostgreSQL: %v", err)
	}
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(opts.Out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep, stdout.String()
}
