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
func TestUsageDaysAsDateReads(t *testing.T) {
	t.Parallel()
	onEngines(t, testUsageDaysAsDateReads)
}

func testUsageDaysAsDateReads(t *testing.T, openStore opener) {
	s := openStore(t)
	appendUsageAt(t, s, "2026-02-31T10:00:00.000Z", "2026-12-03T24:00:00.000Z")
	checkUsageKeys(t, s, map[sessiontree.UsageQuery][]string{
		{By: sessiontree.UsageByDay}:  {"2026-03-03", "2026-12-04"},
		{By: sessiontree.UsageByWeek}: {"2026-W10", "2026-W49"},
	})
}

// TestUsageDaysOutsideFourDigitYears writes usage at times of years
// before 0001 or after 9999, which Date reads (up to ±275760) but a
// report's day, a date as text, cannot order ("10000-01-01" sorts before
// "2026-12-03") and whose weeks each engine gives differently (year 0000,
// which PostgreSQL has not). They count on the unknown day, as a time that
// is not one does: listed first, only when no bound is given, the same on
// both engines.
func TestUsageDaysOutsideFourDigitYears(t *testing.T) {
	t.Parallel()
	onEngines(t, testUsageDaysOutsideFourDigitYears)
}

func testUsageDaysOutsideFourDigitYears(t *testing.T, openStore opener) {
	s := openStore(t)
	appendUsageAt(t, s, "+275760-09-13T00:00:00.000Z", "-000001-12-31T00:00:00.000Z", "+010000-01-01T00:00:00.000Z",
		"2026-12-03T10:00:00.000Z", "0000-01-01T00:00:00.000Z", "0001-01-01T00:00:00.000Z")
	checkUsageKeys(t, s, map[sessiontree.UsageQuery][]string{
		{By: sessiontree.UsageByDay}:                       {"", "0001-01-01", "2026-12-03"},
		{By: sessiontree.UsageByWeek}:                      {"", "0001-W01", "2026-W49"},
		{By: sessiontree.UsageByDay, Since: "2026-01-01"}:  {"2026-12-03"},
		{By: sessiontree.UsageByDay, Until: "2026-12-31"}:  {"0001-01-01", "2026-12-03"},
		{By: sessiontree.UsageByWeek, Until: "2026-12-31"}: {"0001-W01", "2026-W49"},
	})
}

// appendUsageAt appends to a new session of s an assistant message with
// usage (1 input, 1 output, cost 0.25) at each time.
func appendUsageAt(t *testing.T, s *store.Store, times ...string) {
	t.Helper()
	st := mustCreate(t, s, store.CreateOptions{Cwd: "/w"})
	var entries []sessiontree.Entry
	parent := ""
	for i, ts := range times {
		fields := `{"message":{"role":"assistant","content":[],"provider":"p","model":"m",` +
			`"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"cost":{"total":0.25}}}}`
		id := fmt.Sprintf("a%d", i)
		e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: []byte(fields)}, id, parent, ts)
		if err != nil {
			t.Fatal(err)
		}
		entries, parent = append(entries, e), id
	}
	if err := st.AppendBatch(context.Background(), entries); err != nil {
		t.Fatal(err)
	}
}

// checkUsageKeys checks the keys of the rows each query reports.
func checkUsageKeys(t *testing.T, s *store.Store, want map[sessiontree.UsageQuery][]string) {
	t.Helper()
	for q, keys := range want {
		rep, err := s.Usage(context.Background(), q)
		if err != nil {
			t.Errorf("Usage(%+v) = %v", q, err)
			continue
		}
		got := []string{}
		for _, r := range rep.Rows {
			got = append(got, r.Key)
		}
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", keys) {
			t.Errorf("Usage(%+v) keys = %q; want %q", q, got, keys)
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
func TestUsageHugeNumbers(t *testing.T) {
	t.Parallel()
	onEngines(t, testUsageHugeNumbers)
}

func testUsageHugeNumbers(t *testing.T, openStore opener) {
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
