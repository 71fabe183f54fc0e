package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/view"
)

// graphFixture adds to the fixture's session 40 more messages, a label on
// the 20th of them, and a side branch of two messages from the 10th; the
// leaf is back on the 40th. It returns the 40 ids.
func graphFixture(t *testing.T) (*fixture, []string) {
	t.Helper()
	f := newFixture(t, Options{})
	ctx := context.Background()
	st, err := f.store.OpenSession(ctx, f.session)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	user := func(text string) string {
		e, err := s.AppendMessage(ctx, json.RawMessage(fmt.Sprintf(`{"role":"user","content":%q}`, text)))
		if err != nil {
			t.Fatal(err)
		}
		return e.ID
	}
	var ids []string
	for i := range 40 {
		ids = append(ids, user(fmt.Sprintf("step %d", i)))
	}
	steps := []func() error{
		func() error { _, err := s.SetLabel(ctx, ids[20], "halfway"); return err },
		func() error { _, err := s.MoveTo(ctx, ids[10], nil); return err },
		func() error { user("side 1"); user("side 2"); return nil },
		func() error { _, err := s.MoveTo(ctx, ids[39], nil); return err },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	return f, ids
}

func (f *fixture) graph(query string, want int) graphAnswer {
	f.t.Helper()
	r := f.call("GET", "/api/sessions/"+f.session+"/graph"+query, "", want)
	var ans graphAnswer
	if want == http.StatusOK {
		if err := json.Unmarshal([]byte(r.body), &ans); err != nil {
			f.t.Fatalf("graph%s: %v", query, err)
		}
	}
	return ans
}

func TestGraphWindow(t *testing.T) {
	t.Parallel()
	f, ids := graphFixture(t)
	all := f.graph("", http.StatusOK)
	// The three first messages and steps 0..10, then the fork at step 10:
	// its older child (step 11 on) in lane 1, the side branch in lane 0.
	if all.Total != len(all.Rows) || all.Offset != 0 || all.Lanes != 2 || all.FocusRow != -1 {
		t.Fatalf("graph = total %d, %d rows, offset %d, %d lanes, focus %d; want the whole graph in 2 lanes",
			all.Total, len(all.Rows), all.Offset, all.Lanes, all.FocusRow)
	}
	var folds []view.GraphRow
	for _, r := range all.Rows {
		if r.Type == view.FoldType {
			folds = append(folds, r)
		} else if r.Summary == "" {
			t.Errorf("row %s has no summary", r.ID)
		}
	}
	if len(folds) < 2 {
		t.Fatalf("graph has %d folds; want the runs before and after the label folded", len(folds))
	}

	// A window: its rows are the whole graph's, and it has every edge
	// that crosses it.
	win := f.graph("?offset=5&limit=4", http.StatusOK)
	if diff := cmp.Diff(stripText(all.Rows[5:9]), stripText(win.Rows)); win.Offset != 5 || win.Total != all.Total || diff != "" {
		t.Errorf("window 5..9: offset %d, total %d, rows differ (-whole +window):\n%s", win.Offset, win.Total, diff)
	}
	var want [][4]int
	for i, r := range all.Rows {
		if r.Parent >= 0 && r.Parent < 9 && i >= 5 {
			want = append(want, [4]int{r.Parent, all.Rows[r.Parent].Lane, i, r.Lane})
		}
	}
	if diff := cmp.Diff(want, win.Edges); diff != "" {
		t.Errorf("window 5..9 edges (-want +got):\n%s", diff)
	}

	// Focus on a folded entry: its fold is expanded, the window centred.
	hidden := ids[30]
	foc := f.graph("?limit=6&focus="+hidden[:6], http.StatusOK)
	if foc.FocusRow < 0 || foc.Rows[foc.FocusRow-foc.Offset].ID != hidden {
		t.Fatalf("focus %s: row %d in window at %d; want its row", hidden, foc.FocusRow, foc.Offset)
	}
	if foc.Offset != foc.FocusRow-3 || len(foc.Expand) != 1 {
		t.Errorf("focus: offset %d, expand %q; want offset %d and the one fold expanded", foc.Offset, foc.Expand, foc.FocusRow-3)
	}
	exp := f.graph("?expand="+foc.Expand[0], http.StatusOK)
	if exp.Total != foc.Total || exp.Total <= all.Total {
		t.Errorf("expand=%s: %d rows; want %d, more than folded (%d)", foc.Expand[0], exp.Total, foc.Total, all.Total)
	}

	// The graph follows the session as it grows.
	f.call("POST", "/api/sessions/"+f.session+"/labels", fmt.Sprintf(`{"entryId":%q,"label":"late"}`, ids[35]), http.StatusCreated)
	after := f.graph("", http.StatusOK)
	if after.Total <= all.Total {
		t.Errorf("after a label: %d rows; want more than %d (the label entry, the labelled entry out of its fold)", after.Total, all.Total)
	}
	// The kept graph, extended, is the one a new server builds.
	f.call("POST", "/api/sessions/"+f.session+"/leaf", fmt.Sprintf(`{"entryId":%q}`, ids[12]), http.StatusOK)
	f.call("POST", "/api/sessions/"+f.session+"/entries", `{"entries":[{"type":"message","message":{"role":"user","content":"new branch"}}]}`, http.StatusCreated)
	kept := f.graph("?limit=2000", http.StatusOK)
	fresh := newFixtureServer(t, f).graph("?limit=2000", http.StatusOK)
	if diff := cmp.Diff(fresh, kept); diff != "" {
		t.Errorf("the kept graph after writes differs from a new server's (-new +kept):\n%s", diff)
	}
}

// newFixtureServer is a second server over the fixture's store, with no
// graph kept.
func newFixtureServer(t *testing.T, f *fixture) *fixture {
	t.Helper()
	h, err := New(f.store, Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	g := *f
	g.url = ts.URL
	return &g
}

// stripText leaves out what only a described window holds.
func stripText(rows []view.GraphRow) []view.GraphRow {
	out := make([]view.GraphRow, len(rows))
	for i, r := range rows {
		r.Summary, r.Role = "", ""
		out[i] = r
	}
	return out
}

func TestGraphRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	for _, c := range []struct {
		path string
		want int
	}{
		{"/api/sessions/s1/graph?limit=0", http.StatusBadRequest},
		{"/api/sessions/s1/graph?limit=2001", http.StatusBadRequest},
		{"/api/sessions/s1/graph?offset=-1", http.StatusBadRequest},
		{"/api/sessions/s1/graph?focus=ffffffff", http.StatusNotFound},
		{"/api/sessions/nope/graph", http.StatusNotFound},
		{"/api/sessions/s1/entries/ffffffff", http.StatusNotFound},
	} {
		r := f.call("GET", c.path, "", c.want)
		errorCode(t, r)
	}
	if r := f.do(request{method: "GET", path: "/api/sessions/s1/graph"}); r.status != http.StatusUnauthorized {
		t.Errorf("graph without the token = %d; want 401", r.status)
	}
	// Past the end: an empty window, not an error.
	if ans := f.graph("?offset=100", http.StatusOK); len(ans.Rows) != 0 || ans.Total != 3 || ans.Offset != 3 {
		t.Errorf("offset past the end = %+v; want no rows, total 3, offset 3", ans)
	}
}

func TestEntry(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	f.call("POST", "/api/sessions/s1/labels", fmt.Sprintf(`{"entryId":%q,"label":"<b>x</b>"}`, f.entries[0]), http.StatusCreated)
	for _, c := range []struct {
		arg         string
		id, label   string
		leaf        bool
		wantContent string
	}{
		{f.entries[0][:5], f.entries[0], "<b>x</b>", false, `"hello"`},
		{f.entries[2], f.entries[2], "", false, `<script>`},
	} {
		r := f.call("GET", "/api/sessions/s1/entries/"+c.arg, "", http.StatusOK)
		var ans struct {
			Entry struct {
				ID      string          `json:"id"`
				Message json.RawMessage `json:"message"`
			} `json:"entry"`
			Label string `json:"label"`
			Leaf  bool   `json:"leaf"`
		}
		if err := json.Unmarshal([]byte(r.body), &ans); err != nil {
			t.Fatal(err)
		}
		if ans.Entry.ID != c.id || ans.Label != c.label || ans.Leaf != c.leaf {
			t.Errorf("entry %s = id %s, label %q, leaf %v; want %s, %q, %v", c.arg, ans.Entry.ID, ans.Label, ans.Leaf, c.id, c.label, c.leaf)
		}
	}
	// The label entry is now the leaf.
	log := f.logIDs()
	r := f.call("GET", "/api/sessions/s1/entries/"+log[len(log)-1], "", http.StatusOK)
	if !strings.Contains(r.body, `"leaf":true`) {
		t.Errorf("the leaf's entry = %s; want leaf true", r.body)
	}
}

// TestGraphOfASessionMadeAgain checks that the graph of a session deleted
// and made again under the same id is the new session's, not the one the
// server kept of the old: whether the new log is shorter than the old
// one, or longer with entries that could hang under the old graph.
func TestGraphOfASessionMadeAgain(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	msg := func(text string) string {
		return fmt.Sprintf(`{"type":"message","message":{"role":"user","content":%q}}`, text)
	}
	for _, c := range []struct {
		name     string
		old, new []string // bodies appended in turn
	}{
		{"shorter", []string{msg("old 1"), msg("old 2"), msg("old 3")}, []string{msg("new 1")}},
		{"a new root after the old length", []string{msg("old 1")}, []string{msg("new 1"), `{"entryId":null}`, msg("new 2")}},
	} {
		for _, bodies := range [][]string{c.old, c.new} {
			f.do(request{method: "DELETE", path: "/api/sessions/g", bearer: token})
			f.call("POST", "/api/sessions", `{"id":"g"}`, http.StatusCreated)
			for _, b := range bodies {
				if strings.HasPrefix(b, `{"entryId"`) {
					f.call("POST", "/api/sessions/g/leaf", b, http.StatusOK)
				} else {
					f.call("POST", "/api/sessions/g/entries", `{"entries":[`+b+`]}`, http.StatusCreated)
				}
			}
			f.do(request{method: "GET", path: "/api/sessions/g/graph", bearer: token}) // the server keeps it
		}
		r := f.do(request{method: "GET", path: "/api/sessions/g/graph?limit=50", bearer: token})
		var ans graphAnswer
		json.Unmarshal([]byte(r.body), &ans)
		var got []string
		for _, r := range ans.Rows {
			got = append(got, r.Summary)
		}
		var want []string
		for _, b := range c.new {
			if !strings.HasPrefix(b, `{"entryId"`) {
				var d struct{ Message struct{ Content string } }
				json.Unmarshal([]byte(b), &d)
				want = append(want, "user: "+d.Message.Content)
			}
		}
		if diff := cmp.Diff(want, got); r.status != http.StatusOK || diff != "" {
			t.Errorf("%s: graph = %d %.200s; rows of the new session (-want +got):\n%s", c.name, r.status, r.body, diff)
		}
	}
}
