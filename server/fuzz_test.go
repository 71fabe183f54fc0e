package server

import (
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// fuzzRoutes are the routes FuzzRequest calls, {id} and {entry} taken
// from the input: every one but the event stream, which waits for
// entries.
var fuzzRoutes = []struct{ method, path string }{
	{"GET", "/api/sessions"}, {"POST", "/api/sessions"}, {"GET", "/api/sessions/{id}"},
	{"DELETE", "/api/sessions/{id}"}, {"GET", "/api/sessions/{id}/tree"}, {"GET", "/api/sessions/{id}/branch"},
	{"GET", "/api/sessions/{id}/context"}, {"GET", "/api/sessions/{id}/entries"}, {"POST", "/api/sessions/{id}/entries"},
	{"POST", "/api/sessions/{id}/leaf"}, {"POST", "/api/sessions/{id}/labels"}, {"POST", "/api/sessions/{id}/name"},
	{"POST", "/api/sessions/{id}/edits"}, {"POST", "/api/sessions/{id}/fork"}, {"GET", "/api/search"},
	{"GET", "/api/sessions/{id}/graph"}, {"GET", "/api/sessions/{id}/entries/{entry}"},
}

// FuzzRequest sends arbitrary requests to the handler of a server over
// a store of one session (newFixture): a route (by number), the id in its path, a query string and
// a body. No request panics or is a server failure (500: whatever is
// wrong with it is the request's, a 4xx), and every error is the API's
// error body, with a code and a message; a success declared JSON is
// JSON. The store is checked after
// (newFixture's cleanup).
func FuzzRequest(f *testing.F) {
	fx := newFixture(f, Options{})
	h, e := fx.handler, fx.entries[0]
	msg := `{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"hi"}]}}`
	for _, c := range []struct {
		route           uint8
		id, query, body string
	}{
		{0, "", "limit=2&cwd=/work", ""}, {1, "", "", `{"cwd":"/w","id":"s2"}`}, {2, "s1", "", ""},
		{6, "s1", "from=" + e + "&projection=true", ""}, {7, "s1", "after=0&limit=1", ""},
		{8, "s1", "", `{"entries":[` + msg + `],"ifLeaf":"` + e + `"}`}, {8, "s1", "", `{"entries":[` + msg + `],"ifLeaf":null}`},
		{9, "s1", "", `{"entryId":"` + e + `","summary":"s"}`}, {10, "s1", "", `{"entryId":"` + e + `","label":"x"}`},
		{11, "s1", "", `{"name":"n"}`}, {12, "s1", "", `{"entryId":"` + e + `","omit":true}`}, {13, "s1", "", `{"at":"` + e + `","tree":true}`},
		{14, "", "q=hello&limit=5", ""}, {14, "", "q=%22unterminated", ""}, {15, "s1", "offset=0&limit=3&expand=all", ""},
		{16, "s1", "", ""}, {3, "s2", "force=true", ""}, {4, "s\u202e1", "", ""}, {8, "s1", "", `{"entries":[{"type":"session"}]}`},
	} {
		f.Add(c.route, c.id, c.query, c.body)
	}
	f.Fuzz(func(t *testing.T, route uint8, id, query, body string) {
		rt := fuzzRoutes[int(route)%len(fuzzRoutes)]
		path := strings.NewReplacer("{id}", url.PathEscape(id), "{entry}", url.PathEscape(e)).Replace(rt.path)
		req := httptest.NewRequest(rt.method, "http://127.0.0.1"+path, strings.NewReader(body))
		req.URL.RawQuery = query
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("%s %s?%s %q = %d %s; want no server failure", rt.method, path, query, body, w.Code, w.Body)
		}
		if ct := w.Header().Get("Content-Type"); w.Code < 300 && ct == "application/json" && !json.Valid(w.Body.Bytes()) {
			t.Fatalf("%s %s?%s %q = %d, body %q: not JSON", rt.method, path, query, body, w.Code, w.Body)
		}
		if w.Code >= 400 {
			var eb struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal(w.Body.Bytes(), &eb); err != nil || eb.Error.Code == "" || eb.Error.Message == "" {
				t.Fatalf("%s %s?%s = %d %q: not an error body", rt.method, path, query, w.Code, w.Body)
			}
		}
	})
}
