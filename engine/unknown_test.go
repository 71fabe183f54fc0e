package engine_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// TestUnknownEntryTypes appends and imports entries of a type the engine
// does not know (DESIGN.md section 7): each is stored byte for byte,
// becomes the leaf, the next entry hangs under it, it contributes nothing
// to the context or the stats, and after a reopen every read returns the
// same bytes and Check passes (at cleanup).
func TestUnknownEntryTypes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	db, err := engine.Open(ctx, path, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := newSession(t, db)
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	u, err := s.AppendMessage(ctx, userMsg("hello"))
	if err != nil {
		t.Fatal(err)
	}
	fields := json.RawMessage(`{"payload":{"nested":[1,2.50,"x",null]},"note":"ünïcödé \u00e9","usage":{"input":1,"output":1,"cost":{"total":1}}}`)
	appended, err := st.Append(ctx, sessiontree.Draft{Type: "future_thing", Fields: fields}, sessiontree.AppendOptions{})
	if err != nil {
		t.Fatalf("Append(future_thing) = %v", err)
	}
	if appended.ParentID != u.ID {
		t.Errorf("future_thing parent = %q; want %q", appended.ParentID, u.ID)
	}
	if leaf, _ := st.Leaf(ctx); leaf != appended.ID {
		t.Errorf("Leaf() after future_thing = %q; want it, %q", leaf, appended.ID)
	}
	next, err := s.AppendMessage(ctx, userMsg("after"))
	if err != nil {
		t.Fatal(err)
	}
	if next.ParentID != appended.ID {
		t.Errorf("next entry's parent = %q; want the future_thing %q", next.ParentID, appended.ID)
	}

	// Imported: not in the usual key order, with spaces, under the last
	// entry, and one under it.
	imported := []string{
		`{ "id": "f0000001", "type": "another_kind", "timestamp": "2026-03-01T10:00:00.000Z", "parentId": "` + next.ID + `", "x": {"y": [true, false]} }`,
		`{"type":"future_thing","id":"f0000002","parentId":"f0000001","timestamp":"2026-03-01T10:00:01.000Z","z":1e400}`,
	}
	appendLines(t, st, imported...)
	last, err := s.AppendMessage(ctx, userMsg("last"))
	if err != nil {
		t.Fatal(err)
	}
	if last.ParentID != "f0000002" {
		t.Errorf("entry after the batch has parent %q; want f0000002", last.ParentID)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = openDB(t, path, engine.Options{})
	st, err = db.OpenSession(ctx, st.ID())
	if err != nil {
		t.Fatal(err)
	}
	s = sessiontree.NewSession(st, sessiontree.SessionOptions{})
	want := map[string]string{appended.ID: string(appended.Raw), "f0000001": imported[0], "f0000002": imported[1]}
	for id, raw := range want {
		e, err := st.Entry(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if string(e.Raw) != raw {
			t.Errorf("Entry(%s).Raw = %s; want %s", id, e.Raw, raw)
		}
	}
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 6 {
		t.Fatalf("Log() = %d entries; want 6", len(log))
	}
	for _, e := range log {
		if raw, ok := want[e.ID]; ok && string(e.Raw) != raw {
			t.Errorf("Log() entry %s = %s; want %s", e.ID, e.Raw, raw)
		}
	}
	if log[1].Type != "future_thing" || log[3].Type != "another_kind" {
		t.Errorf("Log() types = %s, %s; want future_thing, another_kind", log[1].Type, log[3].Type)
	}
	path2, err := st.Path(ctx, last.ID)
	if err != nil || len(path2) != 6 {
		t.Fatalf("Path(last) = %d entries, %v; want all 6", len(path2), err)
	}
	c, err := s.Context(ctx, sessiontree.ContextOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) != 3 {
		t.Errorf("Context() = %d messages; want the 3 user messages only", len(c.Messages))
	}
	stats, err := st.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Entries != 6 || stats.TotalMessages != 3 || stats.Cost != 0 || len(stats.Breakdown) != 0 {
		t.Errorf("Stats() = %+v; want 6 entries, 3 messages, no usage", stats)
	}
}
