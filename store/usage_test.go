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
