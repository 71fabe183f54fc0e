package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// TestUsageDaysAsDateReads writes usage at times JavaScript's Date carries
// into the next day or month (pi reads every entry time with new Date(s)):
// a day past the month's end, 24:00. On both engines they count on the
// day Date gives, never on a date that does not exist, and every grouping
// answers.
func TestUsageDaysAsDateReads(t *testing.T) { onEngines(t, testUsageDaysAsDateReads) }

func testUsageDaysAsDateReads(t *testing.T, openStore opener) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	st := mustCreate(t, s, store.CreateOptions{Cwd: "/w"})
	var entries []sessiontree.Entry
	parent := ""
	for i, ts := range []string{"2026-02-31T10:00:00.000Z", "2026-12-03T24:00:00.000Z"} {
		fields := `{"message":{"role":"assistant","content":[],"provider":"p","model":"m",` +
			`"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"cost":{"total":0.25}}}}`
		id := fmt.Sprintf("a%d", i)
		e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: []byte(fields)}, id, parent, ts)
		if err != nil {
			t.Fatal(err)
		}
		entries, parent = append(entries, e), id
	}
	if err := st.AppendBatch(ctx, entries); err != nil {
		t.Fatal(err)
	}
	want := map[sessiontree.UsageBy][]string{
		sessiontree.UsageByDay:  {"2026-03-03", "2026-12-04"},
		sessiontree.UsageByWeek: {"2026-W10", "2026-W49"},
	}
	for by, keys := range want {
		rep, err := s.Usage(ctx, sessiontree.UsageQuery{By: by})
		if err != nil {
			t.Errorf("Usage(by %s) = %v", by, err)
			continue
		}
		var got []string
		for _, r := range rep.Rows {
			got = append(got, r.Key)
		}
		if fmt.Sprint(got) != fmt.Sprint(keys) {
			t.Errorf("Usage(by %s) keys = %q; want %q", by, got, keys)
		}
	}
}

// TestUsageHugeNumbers appends usage records a hostile or broken file
// holds: token counts and costs past what 64-bit totals and a float's sum
// can hold (5e18 tokens twice, 1e19, a cost of 1e308 twice). On both
// engines every append is taken, the session's stats and the report agree
// and count only the sane record: such a count is malformed usage,
// skipped as a non-numeric one is, instead of a total wrapped to another
// number (SQLite) or an append refused for "bigint out of range"
// (PostgreSQL).
func TestUsageHugeNumbers(t *testing.T) { onEngines(t, testUsageHugeNumbers) }

func testUsageHugeNumbers(t *testing.T, openStore opener) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	st := mustCreate(t, s, store.CreateOptions{Cwd: "/w"})
	parent := ""
	for i, u := range []string{
		`"input":5e18,"output":1`, `"input":5000000000000000000,"output":1`, `"input":1e19,"output":1`,
		`"input":1,"output":1,"cacheRead":9e18,"cost":{"total":1e308}`, `"input":1,"output":1,"cost":{"total":1e308}`,
		`"input":2,"output":3,"cacheRead":4,"cacheWrite":5,"cost":{"total":0.5}`,
	} {
		fields := `{"message":{"role":"assistant","content":[],"provider":"p","model":"m","usage":{` + u + `}}}`
		id := fmt.Sprintf("a%d", i)
		e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: []byte(fields)}, id, parent,
			"2026-12-03T10:00:00.000Z")
		if err != nil {
			t.Fatal(err)
		}
		if err := st.AppendBatch(ctx, []sessiontree.Entry{e}); err != nil {
			t.Fatalf("append usage {%s}: %v", u, err)
		}
		parent = id
	}
	want := sessiontree.TokenStats{Input: 4, Output: 5, CacheRead: 4, CacheWrite: 5, Total: 18}
	stats, err := st.Stats(ctx)
	if err != nil || stats.Tokens != want || stats.Cost != 0.5 {
		t.Errorf("Stats() = %+v, %v; want tokens %+v, cost 0.5", stats, err, want)
	}
	rep, err := s.Usage(ctx, sessiontree.UsageQuery{})
	if err != nil || rep.Total.Tokens != want || rep.Total.Cost != 0.5 {
		t.Errorf("Usage() = %+v, %v; want tokens %+v, cost 0.5", rep, err, want)
	}
}
