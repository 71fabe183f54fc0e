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

// TestBreakdownKeysArePis holds StatsOf's bucket key to pi 1.6.0's
// getUsageCostBreakdown (usage-totals.js, run by node 20 on the same
// values): `${provider}/${responseModel ?? model}` for an assistant
// message, `${provider}/${model}` for a usage entry, whatever the values'
// types. Before, "", null and any value that is not a string all read
// "undefined", and a responseModel "" or 5 gave way to the model.
func TestBreakdownKeysArePis(t *testing.T) {
	const usage = `"usage":{"input":1,"output":1,"cost":{"total":1}}`
	values := map[string]string{"absent": "", "null": "null", "empty": `""`, "five": "5", "big": "1.5e300",
		"true": "true", "false": "false", "zero": "0", "object": `{"a":1}`, "array": `[1,null,"a"]`, "string": `"x"`}
	shown := map[string]string{"absent": "undefined", "null": "null", "empty": "", "five": "5", "big": "1.5e+300",
		"true": "true", "false": "false", "zero": "0", "object": "[object Object]", "array": "1,,a", "string": "x"}
	member := func(name, v string) string {
		if v == "" {
			return ""
		}
		return `,"` + name + `":` + v
	}
	for pn, p := range values {
		for mn, m := range values {
			want := shown[pn] + "/" + shown[mn]
			for _, raw := range []string{
				`{"type":"message","id":"a","parentId":null,"timestamp":"2026-12-01T10:00:00Z","message":{"role":"assistant",` +
					usage + member("provider", p) + member("model", m) + `}}`,
				`{"type":"usage","id":"a","parentId":null,"timestamp":"2026-12-01T10:00:00Z",` + usage +
					member("provider", p) + member("model", m) + `}`,
			} {
				if got := sessiontree.StatsOf(mustEntry(t, raw)).Bucket; got != want {
					t.Errorf("bucket of %s = %q; want %q", raw, got, want)
				}
			}
		}
		// responseModel ?? model: only an absent or null one gives way
		want := "p/" + shown[pn]
		if pn == "absent" || pn == "null" {
			want = "p/m"
		}
		raw := `{"type":"message","id":"a","parentId":null,"timestamp":"2026-12-01T10:00:00Z","message":{"role":"assistant",` +
			usage + `,"provider":"p","model":"m"` + member("responseModel", p) + `}}`
		if got := sessiontree.StatsOf(mustEntry(t, raw)).Bucket; got != want {
			t.Errorf("bucket of %s = %q; want %q", raw, got, want)
		}
	}
}

// mustEntry decodes raw or fails the test.
func mustEntry(t *testing.T, raw string) sessiontree.Entry {
	t.Helper()
	e, err := sessiontree.DecodeEntry([]byte(raw))
	if err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return e
}
