package sessiontree_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
)

// entry builds an entry of type t with the given extra fields.
func entry(t testing.TB, typ sessiontree.EntryType, id, fields string) sessiontree.Entry {
	t.Helper()
	e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: typ, Fields: json.RawMessage(fields)},
		id, "", "2026-01-01T00:00:00.000Z")
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// projected returns the projection's messages per source id as JSON text.
func projected(t testing.TB, entries []sessiontree.Entry) map[string][]string {
	t.Helper()
	p, err := sessiontree.Projection(entries, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, pe := range p {
		list := []string{}
		for _, m := range pe.Messages {
			list = append(list, string(m))
		}
		out[pe.SourceID] = list
	}
	return out
}

func TestProjectionEdits(t *testing.T) {
	const ms = `"timestamp":1767225600000`
	tests := []struct {
		name   string
		target string // the target entry: type and fields
		typ    sessiontree.EntryType
		edit   string // the edit's fields beyond targetId
		want   []string
	}{
		{"omit", `{"message":{"role":"user","content":"secret"}}`, sessiontree.TypeMessage,
			`"replacement":null`, []string{}},
		{"string on user stays a string", `{"message":{"role":"user","content":"a","x":1}}`, sessiontree.TypeMessage,
			`"replacement":{"content":"b"}`, []string{`{"role":"user","content":"b","x":1}`}},
		{"string on assistant becomes a text block", `{"message":{"role":"assistant","content":[],"model":"m"}}`, sessiontree.TypeMessage,
			`"replacement":{"content":"b"}`, []string{`{"role":"assistant","content":[{"type":"text","text":"b"}],"model":"m"}`}},
		{"string on toolResult becomes a text block", `{"message":{"role":"toolResult","content":"x"}}`, sessiontree.TypeMessage,
			`"replacement":{"content":"b"}`, []string{`{"role":"toolResult","content":[{"type":"text","text":"b"}]}`}},
		{"replacement ignored on system", `{"message":{"role":"system","content":"p"}}`, sessiontree.TypeMessage,
			`"replacement":{"content":"b"}`, []string{`{"role":"system","content":"p"}`}},
		{"omit works on system", `{"message":{"role":"system","content":"p"}}`, sessiontree.TypeMessage,
			`"replacement":null`, []string{}},
		{"missing content added last", `{"message":{"role":"user","timestamp":1}}`, sessiontree.TypeMessage,
			`"replacement":{"content":[{"type":"text","text":"n"}]}`, []string{`{"role":"user","timestamp":1,"content":[{"type":"text","text":"n"}]}`}},
		{"custom message content", `{"customType":"c","content":"old","display":true}`, sessiontree.TypeCustomMessage,
			`"replacement":{"content":"new"}`, []string{`{"role":"custom","customType":"c","content":"new","display":true,` + ms + `}`}},
		{"replacement without content removes it", `{"message":{"role":"user","content":"a"}}`, sessiontree.TypeMessage,
			`"replacement":{}`, []string{`{"role":"user"}`}},
		// pi 1.6.0 reads replacement.content, undefined for anything but
		// an object: the content goes (testdata/piedge/context-edits-odd).
		{"string replacement removes the content", `{"message":{"role":"user","content":"a"}}`, sessiontree.TypeMessage,
			`"replacement":"x"`, []string{`{"role":"user"}`}},
		{"array replacement removes the content", `{"message":{"role":"assistant","content":[],"model":"m"}}`, sessiontree.TypeMessage,
			`"replacement":[{"content":"x"}]`, []string{`{"role":"assistant","model":"m"}`}},
		{"number replacement ignored on system", `{"message":{"role":"system","content":"p"}}`, sessiontree.TypeMessage,
			`"replacement":7`, []string{`{"role":"system","content":"p"}`}},
		{"no replacement does nothing", `{"message":{"role":"user","content":"a"}}`, sessiontree.TypeMessage,
			`"other":1`, []string{`{"role":"user","content":"a"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := entry(t, tt.typ, "t1", tt.target)
			edit := entry(t, sessiontree.TypeContextEdit, "e1", `{"targetId":"t1",`+tt.edit+`}`)
			got := projected(t, []sessiontree.Entry{target, edit})
			want := map[string][]string{"t1": tt.want, "e1": {}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Projection (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProjectionLastEditWins(t *testing.T) {
	target := entry(t, sessiontree.TypeMessage, "t1", `{"message":{"role":"user","content":"a"}}`)
	first := entry(t, sessiontree.TypeContextEdit, "e1", `{"targetId":"t1","replacement":null}`)
	second := entry(t, sessiontree.TypeContextEdit, "e2", `{"targetId":"t1","replacement":{"content":"b"}}`)
	got := projected(t, []sessiontree.Entry{target, first, second})["t1"]
	if want := []string{`{"role":"user","content":"b"}`}; !cmp.Equal(got, want) {
		t.Errorf("Projection with two edits = %v; want the last one's %v", got, want)
	}
	// Without the second edit in the list (a probe above it), the first wins.
	got = projected(t, []sessiontree.Entry{target, first})["t1"]
	if len(got) != 0 {
		t.Errorf("Projection above the second edit = %v; want the target omitted", got)
	}
}

func TestProjectionNullContent(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"message":{"role":"system","content":null,"sections":{}}}`, `{"role":"system","content":"","sections":{}}`},
		{`{"message":{"role":"assistant"}}`, `{"role":"assistant","content":[]}`},
		{`{"message":{"role":"user","content":null}}`, `{"role":"user","content":[]}`},
		{`{"message":{"role":"bashExecution","content":null}}`, `{"role":"bashExecution","content":null}`},
	}
	for _, tt := range tests {
		got := projected(t, []sessiontree.Entry{entry(t, sessiontree.TypeMessage, "m", tt.in)})["m"]
		if !cmp.Equal(got, []string{tt.want}) {
			t.Errorf("Projection(%s) = %v; want %s", tt.in, got, tt.want)
		}
	}
	custom := entry(t, sessiontree.TypeCustomMessage, "c", `{"customType":"x","content":null,"display":false}`)
	want := `{"role":"custom","customType":"x","content":[],"display":false,"timestamp":1767225600000}`
	if got := projected(t, []sessiontree.Entry{custom})["c"]; !cmp.Equal(got, []string{want}) {
		t.Errorf("Projection(custom_message with null content) = %v; want %s", got, want)
	}
}

func TestContextEntriesLeavesSystemMessagesToTheSnapshot(t *testing.T) {
	sys := entry(t, sessiontree.TypeMessage, "s0", `{"message":{"role":"system","content":"p"}}`)
	keep := entry(t, sessiontree.TypeMessage, "u1", `{"message":{"role":"user","content":"a"}}`)
	patch := entry(t, sessiontree.TypeMessage, "s1", `{"message":{"role":"system","content":"q"}}`)
	old := entry(t, sessiontree.TypeCompaction, "c0", `{"summary":"old","firstKeptEntryId":"u1"}`)
	comp := entry(t, sessiontree.TypeCompaction, "c1",
		`{"summary":"new","firstKeptEntryId":"u1","tokensBefore":1,"systemMessage":{"role":"system","content":"p\n\nq","timestamp":2}}`)
	after := entry(t, sessiontree.TypeMessage, "s2", `{"message":{"role":"system","content":"r"}}`)
	path := []sessiontree.Entry{sys, keep, patch, old, comp, after}
	got := []string{}
	for _, e := range sessiontree.ContextEntries(path) {
		got = append(got, e.ID)
	}
	if want := []string{"c1", "u1", "c0", "s2"}; !cmp.Equal(got, want) {
		t.Errorf("ContextEntries = %v; want %v (system messages before the compaction left out, the older compaction kept)", got, want)
	}
	p := projected(t, sessiontree.ContextEntries(path))
	want := map[string][]string{
		"c1": {`{"role":"system","content":"p\n\nq","timestamp":2}`,
			`{"role":"compactionSummary","summary":"new","tokensBefore":1,"timestamp":1767225600000}`},
		"u1": {`{"role":"user","content":"a"}`},
		"c0": {},
		"s2": {`{"role":"system","content":"r"}`},
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("Projection (-want +got):\n%s", diff)
	}
}

func TestCleanName(t *testing.T) {
	for in, want := range map[string]string{
		"two\r\nlines\r\n":   "two lines",
		"a\n\n\nb":           "a b",
		"  spaced \r out  ":  "spaced   out",
		"tab\tstays":         "tab\tstays",
		"\r\n":               "",
		"x\r\n \r\ny":        "x   y",
		"unicode\u2028stays": "unicode\u2028stays",
		// String.prototype.trim's white space, not Go's (node 20 wrote these)
		"\ufeffname\ufeff":          "name",
		"\u0085name\u0085":          "\u0085name\u0085",
		" \u3000\u2028name\u00a0\t": "name",
		"\u180ename\u200b":          "\u180ename\u200b",
		"x\ufeff\u0085":             "x\ufeff\u0085",
	} {
		if got := sessiontree.CleanName(in); got != want {
			t.Errorf("CleanName(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestLabelTimestamps(t *testing.T) {
	at := func(id, target, label, ts string) sessiontree.Entry {
		fields := `{"targetId":"` + target + `"`
		if label != "" {
			fields += `,"label":"` + label + `"`
		}
		e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: sessiontree.TypeLabel, Fields: json.RawMessage(fields + "}")}, id, "", ts)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	log := []sessiontree.Entry{
		at("l1", "a", "one", "2026-01-01T00:00:01.000Z"),
		at("l2", "b", " two ", "2026-01-01T00:00:02.000Z"),
		at("l3", "a", "", "2026-01-01T00:00:03.000Z"),
		at("l4", "b", "again", "2026-01-01T00:00:00.500Z"),
	}
	want := map[string]string{"b": "2026-01-01T00:00:00.500Z"}
	if got := sessiontree.LabelTimestamps(log); !cmp.Equal(got, want) {
		t.Errorf("LabelTimestamps = %v; want %v", got, want)
	}
	if got := sessiontree.LabelOf(log[1]); got != " two " {
		t.Errorf("LabelOf = %q; want the label as written", got)
	}
}

func TestSortBreakdown(t *testing.T) {
	in := []sessiontree.UsageBucket{{Key: "a", Cost: 1}, {Key: "zero"}, {Key: "b", Cost: 2}, {Key: "c", Cost: 1}, {Key: "t", Tokens: 5}}
	want := []sessiontree.UsageBucket{{Key: "b", Cost: 2}, {Key: "a", Cost: 1}, {Key: "c", Cost: 1}, {Key: "t", Tokens: 5}}
	if got := sessiontree.SortBreakdown(in); !cmp.Equal(got, want) {
		t.Errorf("SortBreakdown = %v; want %v", got, want)
	}
	if got := sessiontree.SortBreakdown(nil); got == nil || len(got) != 0 {
		t.Errorf("SortBreakdown(nil) = %#v; want an empty, non-nil list", got)
	}
}

func TestCurrentSystemMessage(t *testing.T) {
	msgs := []json.RawMessage{
		json.RawMessage(`{"role":"user","content":"ignored"}`),
		json.RawMessage(`{"role":"system","content":"","sections":{"a":"A"},"toolsAdded":[{"name":"x","v":1},{"name":"y"}],"timestamp":7}`),
		json.RawMessage(`{"role":"system","content":"more","toolsRemoved":[{"name":"x"}],"toolsAdded":[{"name":"y","v":2},{"name":"x","v":3}],"timestamp":8}`),
	}
	got, ok := sessiontree.CurrentSystemMessage(msgs, 99)
	want := `{"role":"system","content":"more","sections":{"a":"A"},"toolsAdded":[{"name":"y","v":2},{"name":"x","v":3}],"timestamp":99}`
	if !ok || string(got) != want {
		t.Errorf("CurrentSystemMessage = %s, %v; want %s", got, ok, want)
	}
	if got, ok := sessiontree.CurrentSystemMessage(msgs[:1], 1); ok {
		t.Errorf("CurrentSystemMessage without system messages = %s; want none", got)
	}
}
