package sessiontree_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/memory"
)

func TestDecodeEntry(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string // substring; "" means success
	}{
		{`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{}}`, ""},
		{`{"type":"message","id":"a1","parentId":"p","timestamp":"t","x":[1,2]}`, ""},
		{`{"id":"a1","timestamp":"t"}`, `missing "type"`},
		{`{"type":"message","timestamp":"t"}`, `without "id"`},
		{`{"type":"message","id":"","timestamp":"t"}`, `without "id"`},
		{`{"type":"message","id":"a1"}`, `missing "timestamp"`},
		{`{"type":"message","id":"a1","timestamp":"t","parentId":""}`, `"parentId" must be null or a non-empty id`},
		{`{"type":"message","id":"a1","timestamp":"t","parentId":7}`, `"parentId" must be a string`},
		{`{"type":5,"id":"a1","timestamp":"t"}`, `"type" must be a string`},
		{`{"type":"message","id":"a1","timestamp":"t"`, `invalid JSON`},
		{`["type"]`, `want an object`},
	}
	for _, tt := range tests {
		e, err := sessiontree.DecodeEntry([]byte(tt.in))
		if tt.wantErr == "" {
			if err != nil || string(e.Raw) != tt.in {
				t.Errorf("DecodeEntry(%s) = %s, %v; want the entry unchanged", tt.in, e.Raw, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, sessiontree.ErrInvalidEntry) {
			t.Errorf("DecodeEntry(%s) error = %v; want ErrInvalidEntry containing %q", tt.in, err, tt.wantErr)
		}
	}
}

// TestDecodeEntryOwned checks that DecodeEntryOwned keeps the bytes it is
// given as the entry's JSON, where DecodeEntry copies them, and that both
// read the same entry.
func TestDecodeEntryOwned(t *testing.T) {
	line := []byte(" {\"type\":\"message\",\"id\":\"a1\",\"parentId\":null,\"timestamp\":\"t\",\"message\":{}}\n")
	owned, err := sessiontree.DecodeEntryOwned(line)
	if err != nil {
		t.Fatal(err)
	}
	copied, err := sessiontree.DecodeEntry(line)
	if err != nil {
		t.Fatal(err)
	}
	if string(owned.Raw) != string(copied.Raw) || owned.ID != copied.ID || owned.Type != copied.Type {
		t.Errorf("DecodeEntryOwned() = %s %q; want %s %q as DecodeEntry reads it", owned.ID, owned.Raw, copied.ID, copied.Raw)
	}
	if &owned.Raw[0] != &line[1] {
		t.Errorf("DecodeEntryOwned() copied the line; want its Raw to be the line itself, trimmed")
	}
	if &copied.Raw[0] == &line[1] {
		t.Errorf("DecodeEntry() kept the caller's line; want a copy")
	}
	if _, err := sessiontree.DecodeEntryOwned([]byte(`{"type":"message"`)); !errors.Is(err, sessiontree.ErrInvalidEntry) {
		t.Errorf("DecodeEntryOwned(broken JSON) = %v; want ErrInvalidEntry", err)
	}
}

func TestBuildEntry(t *testing.T) {
	d := sessiontree.Draft{Type: sessiontree.TypeLabel, Fields: json.RawMessage(`{"targetId":"abc","label":"x","z":1.50}`)}
	e, err := sessiontree.BuildEntry(d, "id1", "", "2026-01-01T00:00:00.000Z")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"label","id":"id1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","targetId":"abc","label":"x","z":1.50}`
	if string(e.Raw) != want {
		t.Errorf("BuildEntry = %s; want %s", e.Raw, want)
	}
	if e.TargetID() != "abc" {
		t.Errorf("TargetID() = %q; want abc", e.TargetID())
	}
	if _, err := sessiontree.BuildEntry(sessiontree.Draft{Type: sessiontree.TypeLabel, Fields: json.RawMessage(`{"targetId":null}`)}, "i", "", "t"); !errors.Is(err, sessiontree.ErrInvalidEntry) {
		t.Errorf("label with null target: error = %v; want ErrInvalidEntry", err)
	}
}

func TestFields(t *testing.T) {
	got, err := sessiontree.Fields("a", "x", "skip", nil, "raw", json.RawMessage(`{"k":1.0}`), "list", []string{}, "b", false)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":"x","raw":{"k":1.0},"list":[],"b":false}`; string(got) != want {
		t.Errorf("Fields = %s; want %s", got, want)
	}
	if _, err := sessiontree.Fields("odd"); err == nil {
		t.Errorf("Fields(odd) succeeded")
	}
}

func TestBuildTreeOrder(t *testing.T) {
	mk := func(id, parent, ts string) sessiontree.Entry {
		e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: sessiontree.TypeCustom, Fields: json.RawMessage(`{"customType":"c"}`)}, id, parent, ts)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	leaf, _ := sessiontree.BuildEntry(sessiontree.Draft{Type: sessiontree.TypeLeaf, Fields: json.RawMessage(`{"targetId":null}`)}, "l", "r", "2026-01-01T00:00:09.000Z")
	log := []sessiontree.Entry{
		mk("r", "", "2026-01-01T00:00:00.000Z"),
		mk("late", "r", "2026-01-01T00:00:05.000Z"),
		mk("early", "r", "2026-01-01T00:00:01.000Z"),
		mk("tie", "r", "2026-01-01T00:00:01.000Z"),
		leaf,
		mk("orphan", "gone", "2026-01-01T00:00:02.000Z"),
	}
	roots := sessiontree.BuildTree(log, map[string]string{"r": "start"})
	if len(roots) != 2 || roots[0].Entry.ID != "r" || roots[1].Entry.ID != "orphan" || roots[0].Label != "start" {
		t.Fatalf("roots = %v; want r (labelled) then orphan", roots)
	}
	var kids []string
	for _, c := range roots[0].Children {
		kids = append(kids, c.Entry.ID)
	}
	if strings.Join(kids, ",") != "early,tie,late" {
		t.Errorf("children of r = %v; want early,tie,late", kids)
	}
}

func TestFieldsWriteStringsAsJavaScript(t *testing.T) {
	got, err := sessiontree.Fields("s", "<tag> & \"q\" \\ \n\t\x01 日本語 🙂 \xff")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"s":"<tag> & \"q\" \\ \n\t\u0001 日本語 🙂 �"}`
	if string(got) != want {
		t.Errorf("Fields(string) = %s; want %s", got, want)
	}
	if _, err := sessiontree.Fields("bad", json.RawMessage(`{"a":`)); err == nil {
		t.Errorf("Fields(invalid raw JSON) succeeded")
	}
}

func TestUsageKeysAreCaseSensitive(t *testing.T) {
	e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: sessiontree.TypeMessage,
		Fields: json.RawMessage(`{"message":{"role":"assistant","usage":{"Input":5,"input":1,"output":2,"COST":{"total":9},"cost":{"total":0.5}}}}`)},
		"a", "", "2026-01-01T00:00:00.000Z")
	if err != nil {
		t.Fatal(err)
	}
	es := sessiontree.StatsOf(e)
	if u := es.Usage; !es.HasUsage || u.Input != 1 || u.Output != 2 || u.Cost != 0.5 {
		t.Errorf("StatsOf(e).Usage = %+v, %v; want input 1, output 2, cost 0.5", u, es.HasUsage)
	}
}

// TestTypedAppendsRefuseMalformedJSONAsInvalidEntry: every typed append of
// Session takes some of its fields as raw JSON; a value that is not JSON
// is a malformed entry, refused as Append refuses one, with an error
// matching ErrInvalidEntry and naming the field, and nothing is written.
// They returned a plain error ("fields: message: invalid JSON ..."), which
// no errors.Is could tell from a storage failure.
func TestTypedAppendsRefuseMalformedJSONAsInvalidEntry(t *testing.T) {
	ctx := context.Background()
	st, err := memory.New(sessiontree.SessionMeta{Cwd: "/w"}, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	defer s.Close()
	bad := json.RawMessage(`{"role":`)
	calls := map[string]func() error{
		"message": func() error { _, err := s.AppendMessage(ctx, bad); return err },
		"data":    func() error { _, err := s.AppendCustom(ctx, "c", bad); return err },
		"usage":   func() error { _, err := s.AppendUsage(ctx, sessiontree.UsageRecord{Usage: bad}); return err },
		"details": func() error {
			_, err := s.AppendCompaction(ctx, sessiontree.Compaction{Summary: "s", Details: bad})
			return err
		},
		"content": func() error {
			_, err := s.AppendCustomMessage(ctx, sessiontree.CustomMessage{CustomType: "c", Content: bad})
			return err
		},
	}
	for field, call := range calls {
		err := call()
		if !errors.Is(err, sessiontree.ErrInvalidEntry) || !strings.Contains(err.Error(), `"`+field+`"`) {
			t.Errorf("append with malformed %s: error = %v; want ErrInvalidEntry naming %q", field, err, field)
		}
	}
	if _, err := s.MoveTo(ctx, "", &sessiontree.BranchSummary{Summary: "s", Details: bad}); !errors.Is(err, sessiontree.ErrInvalidEntry) {
		t.Errorf("MoveTo with malformed details: error = %v; want ErrInvalidEntry", err)
	}
	if log, err := st.Log(ctx, 0, 0); err != nil || len(log) != 0 {
		t.Errorf("log = %d entries, %v; want none written", len(log), err)
	}
}

// TestCheckDraftFieldsAgreesWithBuildEntry: what CheckDraftFields refuses
// of a draft is what a backend refuses when it appends it: CheckDraft,
// then BuildEntry.
func TestCheckDraftFieldsAgreesWithBuildEntry(t *testing.T) {
	for _, d := range []sessiontree.Draft{
		{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":{"role":"user"}}`)},
		{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":"hi"}`)},
		{Type: sessiontree.TypeMessage},
		{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":{"role":"user"},"message":"x"}`)},
		{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":"x","message":{"role":"user"}}`)},
		{Type: sessiontree.TypeModelChange, Fields: json.RawMessage(`{"provider":"p","modelId":"m"}`)},
		{Type: sessiontree.TypeModelChange, Fields: json.RawMessage(`{"provider":"p","modelId":7}`)},
		{Type: sessiontree.TypeLabel, Fields: json.RawMessage(`{"targetId":null}`)},
		{Type: sessiontree.TypeLabel, Fields: json.RawMessage(`{"targetId":"a"}`)},
		{Type: sessiontree.TypeBranchSummary, Fields: json.RawMessage(`{"summary":"s"}`)},
		{Type: sessiontree.TypeActiveToolsChange, Fields: json.RawMessage(`{"activeToolNames":{}}`)},
		{Type: sessiontree.TypeUsage, Fields: json.RawMessage(`{}`)},
		{Type: "future_thing"},
		{Type: "session"},
	} {
		built := sessiontree.CheckDraft(d)
		if built == nil {
			_, built = sessiontree.BuildEntry(d, "i", "", "2026-01-01T00:00:00.000Z")
		}
		checked := sessiontree.CheckDraftFields(d)
		if (built == nil) != (checked == nil) || (checked != nil && !errors.Is(checked, sessiontree.ErrInvalidEntry)) {
			t.Errorf("%s %s: CheckDraftFields = %v; BuildEntry = %v", d.Type, d.Fields, checked, built)
		}
	}
}
