package store_test

import (
	"context"
	"encoding/json"
	"maps"
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

// TestSearchHitWithLoneSurrogate: a hit on an entry whose JSON holds a
// lone surrogate's escape (\ud800: what JSON.stringify writes of a
// string cut inside a surrogate pair, as a tool's output cut to length
// may be) is shown with its role, on every engine. Before the fix the
// PostgreSQL engine read the role with its json type, which refuses
// such an escape, so every search hitting the entry failed, a storage
// failure (TestSearchDifferential).
func TestSearchHitWithLoneSurrogate(t *testing.T) { onEngines(t, testSearchHitWithLoneSurrogate) }

func testSearchHitWithLoneSurrogate(t *testing.T, open opener) {
	s := open(t)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s"}))
	b.add(sessiontree.TypeMessage, "cut", `"message":{"role":"toolResult","content":[{"type":"text","text":"output cut \ud83d"}],"timestamp":1}`)
	b.add(sessiontree.TypeMessage, "low", `"message":{"role":"user","content":"output \udc00 low, \\ud800 not one","timestamp":1}`)
	hits := search(t, s, "output", store.SearchOptions{})
	got := map[string]string{}
	for _, h := range hits {
		got[h.EntryID] = h.Role
	}
	if want := map[string]string{"cut": "toolResult", "low": "user"}; !maps.Equal(got, want) {
		t.Errorf("Search(output) = roles by entry %v; want %v", got, want)
	}
}
