package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestUsageCommand imports pi 1.x's fixtures and checks the usage command
// as a user runs it: its JSON total is `info`'s stats summed over the
// sessions (tokens exactly, cost up to the order of the additions), every
// grouping prints a table ending in that total, --chart writes an SVG
// file, and bad flags are usage errors naming the flag.
func TestUsageCommand(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	paths, err := filepath.Glob("../../testdata/pi1/*.jsonl")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	ok(t, append([]string{"--db", db, "import"}, paths...)...)

	var sessions []struct {
		ID string `json:"id"`
	}
	decode(t, ok(t, "--db", db, "ls", "--limit", "0", "--json"), &sessions)
	var want sessiontree.TokenStats
	var wantCost float64
	for _, s := range sessions {
		var info struct {
			Stats sessiontree.Stats `json:"stats"`
		}
		decode(t, ok(t, "--db", db, "info", s.ID, "--json"), &info)
		tk := info.Stats.Tokens
		want.Input, want.Output, want.CacheRead, want.CacheWrite = want.Input+tk.Input, want.Output+tk.Output,
			want.CacheRead+tk.CacheRead, want.CacheWrite+tk.CacheWrite
		want.Total += tk.Total
		wantCost += info.Stats.Cost
	}
	if want.Total == 0 {
		t.Fatal("the fixtures have no usage")
	}

	for _, by := range sessiontree.UsageGroupings {
		var rep sessiontree.UsageReport
		decode(t, ok(t, "--db", db, "usage", "--by", string(by), "--json"), &rep)
		if rep.By != by || rep.Total.Tokens != want || math.Abs(rep.Total.Cost-wantCost) > 1e-9 {
			t.Errorf("usage --by %s --json: by %q, total %+v; want tokens %+v, cost %v (info summed)",
				by, rep.By, rep.Total, want, wantCost)
		}
		table := ok(t, "--db", db, "usage", "--by", string(by))
		lines := strings.Split(strings.TrimSpace(table), "\n")
		if len(lines) != len(rep.Rows)+2 || !strings.HasPrefix(lines[0], strings.ToUpper(string(by))) ||
			!strings.HasPrefix(lines[len(lines)-1], "total") {
			t.Errorf("usage --by %s printed:\n%s\nwant a header, %d rows and a total", by, table, len(rep.Rows))
		}
	}

	chart := filepath.Join(t.TempDir(), "charts", "usage.svg")
	ok(t, "--db", db, "usage", "--by", "week", "--since", "2026-11-01", "--until", "2026-12-31T10:00:00Z", "--chart", chart)
	svg, err := os.ReadFile(chart)
	if err != nil || !strings.Contains(string(svg), "<svg") || !strings.Contains(string(svg), "Cost by week, 2026-11-01 to 2026-12-31") {
		t.Errorf("usage --chart wrote %.200q, %v; want an SVG chart of the weeks", svg, err)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--by", "month"}, `grouping "month"`},
		{[]string{"--since", "12/03/2026"}, "--since"},
		{[]string{"--until", "2026-02-30"}, "--until"},
		{[]string{"--since", "2026-12-04", "--until", "2026-12-03"}, "after until"},
		{[]string{"extra"}, "no arguments"},
	} {
		r := runCmd(t, "", append([]string{"--db", db, "usage"}, tt.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("usage %v: exit %d, stderr %q; want exit %d naming %q", tt.args, r.code, r.stderr, exitUsage, tt.want)
		}
	}
}
