package sessiontree_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
)

// TestResumeTally: a tally resumed from the totals and first-use buckets
// of a prefix of the log, then fed the rest, equals one fed the whole log
// (the PostgreSQL engine keeps the totals in a row between appends).
func TestResumeTally(t *testing.T) {
	var log []sessiontree.Entry
	for i, model := range []string{"m1", "m2", "m1", "m3", "m2", "m2"} {
		msg := fmt.Sprintf(`{"message":{"role":"assistant","provider":"p","model":%q,"content":[{"type":"toolCall"}],`+
			`"usage":{"input":%d,"output":3,"cacheRead":1,"cacheWrite":2,"cost":{"total":0.%d1}}}}`, model, i+1, i+1)
		e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: json.RawMessage(msg)},
			fmt.Sprintf("%08x", i), "", "2026-01-01T00:00:00.000Z")
		if err != nil {
			t.Fatal(err)
		}
		log = append(log, e)
	}
	var whole sessiontree.Tally
	for _, e := range log {
		whole.Add(e)
	}
	for cut := range len(log) + 1 {
		var head sessiontree.Tally
		for _, e := range log[:cut] {
			head.Add(e)
		}
		resumed := sessiontree.ResumeTally(head.Stats(), head.Buckets())
		for _, e := range log[cut:] {
			resumed.Add(e)
		}
		if diff := cmp.Diff(whole.Stats(), resumed.Stats()); diff != "" {
			t.Errorf("resumed after %d entries: Stats differ (-whole +resumed):\n%s", cut, diff)
		}
	}
}
