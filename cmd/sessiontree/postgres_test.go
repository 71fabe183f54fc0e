package main

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/storetest"
)

// newPGDB returns the URL of a fresh PostgreSQL database for --db; the
// test is skipped without a server (a failure under CI=true).
func newPGDB(t testing.TB) string {
	t.Helper()
	url := pgtest.Migrated.Database(t)
	t.Cleanup(func() { sharedStores.close(t, url) })
	return url
}

// TestJSONOutputOnPostgres runs every command that prints JSON (and
// export, check, fork, rm) with --db a PostgreSQL URL and with a SQLite
// file, on the same imported pi files, and wants the same output from
// both: the engines answer alike through the CLI.
func TestJSONOutputOnPostgres(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("../../testdata/pi1/*.jsonl")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	pi, _ := filepath.Glob("../../testdata/pi/session-00*.jsonl")
	if testing.Short() { // one file of each kind of each folder
		paths, pi = storetest.FixturePathKinds(paths), storetest.FixturePathKinds(pi)
	}
	paths = append(paths, pi...)
	lite, pg := newDB(t), newPGDB(t)
	both := func(args ...string) string {
		t.Helper()
		a := ok(t, append([]string{"--db", lite}, args...)...)
		b := ok(t, append([]string{"--db", pg}, args...)...)
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("sessiontree %q differs on PostgreSQL (-sqlite +postgres):\n%s", args, diff)
		}
		return a
	}
	imported := make([]map[string]any, 2)
	for i, db := range []string{lite, pg} {
		decode(t, ok(t, append([]string{"--db", db, "import", "--json"}, paths...)...), &imported[i])
		// Times differ.
		for _, k := range []string{"seconds", "indexSeconds"} {
			delete(imported[i], k)
		}
	}
	if diff := cmp.Diff(imported[0], imported[1]); diff != "" {
		t.Errorf("import --json differs on PostgreSQL (-sqlite +postgres):\n%s", diff)
	}
	var sessions []struct {
		ID string `json:"id"`
	}
	decode(t, both("ls", "--json", "--limit", "1000"), &sessions)
	if len(sessions) < 2 {
		t.Fatalf("ls --json lists %d sessions; want the fixtures", len(sessions))
	}
	both("ls", "--json", "--limit", "2")
	for _, s := range sessions {
		for _, cmd := range [][]string{
			{"info", s.ID, "--json"}, {"tree", s.ID, "--json"}, {"branch", s.ID, "--json"},
			{"branch", s.ID, "--full", "--json"}, {"context", s.ID, "--json"}, {"log", s.ID, "--json"},
			{"export", s.ID},
		} {
			both(cmd...)
		}
	}
	for _, by := range sessiontree.UsageGroupings {
		var a, b sessiontree.UsageReport
		args := []string{"usage", "--by", string(by), "--json"}
		decode(t, ok(t, append([]string{"--db", lite}, args...)...), &a)
		decode(t, ok(t, append([]string{"--db", pg}, args...)...), &b)
		// Costs are float sums, added in another order by each engine.
		near := cmp.Comparer(func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*max(1, math.Abs(x)) })
		if diff := cmp.Diff(a, b, near); diff != "" {
			t.Errorf("usage --by %s --json differs on PostgreSQL (-sqlite +postgres):\n%s", by, diff)
		}
	}
	both("check")
	first := sessions[0].ID
	for _, db := range []string{lite, pg} {
		ok(t, "--db", db, "fork", first)
		ok(t, "--db", db, "rm", "--yes", sessions[1].ID)
	}
	var after []struct {
		ID      string `json:"id"`
		Entries int64  `json:"entryCount"`
	}
	for _, db := range []string{lite, pg} {
		decode(t, ok(t, "--db", db, "ls", "--json", "--limit", "1000"), &after)
		if len(after) != len(sessions) {
			t.Errorf("--db %s: ls after a fork and a delete lists %d sessions; want %d", db, len(after), len(sessions))
		}
		for _, s := range after {
			if s.ID == sessions[1].ID {
				t.Errorf("--db %s: session %s listed after rm", db, s.ID)
			}
		}
	}
	both("check")
}
