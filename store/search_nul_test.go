package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// TestLiteralSearchWithNUL: a NUL byte in a literal query is a word
// break, not the end of the query: SQLite reads FTS5 queries as C
// strings, and a quoted word cut at the NUL was "unterminated string"
// (issue 8, found by the reliability package's hostile strings).
//
// A NUL in the first user message, the name and a label is stored: the
// entries keep it, escaped in their JSON, and the texts derived from them
// have a space for it (sessiontree.DerivedText), the same on both engines
// (PostgreSQL's text refuses a NUL byte); the cleanup's Check agrees.
func TestLiteralSearchWithNUL(t *testing.T) { onEngines(t, testLiteralSearchWithNUL) }

func testLiteralSearchWithNUL(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	st, err := s.Create(ctx, store.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sess := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	msg, _ := json.Marshal(map[string]any{"role": "user", "content": "alpha\x00bravo charlie"})
	e, err := sess.AppendMessage(ctx, msg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.SetName(ctx, "\x00name\x00"); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.SetLabel(ctx, e.ID, "la\x00bel"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"alpha\x00bravo", "charlie\x00", "\x00alpha"} {
		res, err := s.Search(ctx, q, store.SearchOptions{Literal: true})
		if err != nil || len(res.Hits) != 1 || res.Hits[0].Role != "user" {
			t.Errorf("Search(%q, literal) = %+v, %v; want the entry, role user", q, res.Hits, err)
		}
	}
	list, err := s.ListN(ctx, store.ListOptions{}, 0)
	if err != nil || len(list) != 1 || list[0].FirstUserMessage != "alpha bravo charlie" || list[0].Name != " name " {
		t.Errorf("ListN = %+v, %v; want the session, first message %q, name %q", list, err, "alpha bravo charlie", " name ")
	}
	if found, err := s.ListN(ctx, store.ListOptions{Name: "\x00name"}, 0); err != nil || len(found) != 1 {
		t.Errorf("ListN(name filter with a NUL) = %d sessions, %v; want the session", len(found), err)
	}
	if label, err := sess.Label(ctx, e.ID); err != nil || label != "la bel" {
		t.Errorf("Label = %q, %v; want %q", label, err, "la bel")
	}
	got, err := st.Entry(ctx, e.ID)
	if err != nil || string(got.Raw) != string(e.Raw) {
		t.Errorf("Entry = %s, %v; want the JSON as appended, %s", got.Raw, err, e.Raw)
	}
}
