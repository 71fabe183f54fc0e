package server

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

const token = "t0ken"

// fixture is a server over a fresh store holding one session.
type fixture struct {
	t     testing.TB
	store *store.Store
	url   string
	// handler is the server's handler, for calls without HTTP.
	handler http.Handler
	// session is the session's id; entries its entries' ids in order.
	session string
	entries []string
}

// newFixture starts a server (with opts, Token set) over a new store with
// one session of three messages, the last one holding markup.
func newFixture(t testing.TB, opts Options) *fixture {
	t.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(t.TempDir(), "sessions.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Check(ctx, ""); err != nil {
			t.Errorf("check after the test: %v", err)
		}
		s.Close()
	})
	st, err := s.Create(ctx, store.CreateOptions{ID: "s1", Cwd: "/work"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f := &fixture{t: t, store: s, session: "s1"}
	sess := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	for _, m := range []string{
		`{"role":"user","content":"hello"}`,
		`{"role":"assistant","content":[{"type":"text","text":"hi"}]}`,
		`{"role":"user","content":"<script>alert(1)</script> javascript:alert(2) & more"}`,
	} {
		e, err := sess.AppendMessage(ctx, json.RawMessage(m))
		if err != nil {
			t.Fatal(err)
		}
		f.entries = append(f.entries, e.ID)
	}
	opts.Token = token
	opts.PollInterval = 10 * time.Millisecond
	h, err := New(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	f.url, f.handler = ts.URL, h
	return f
}

// request describes one call; do sends it.
type request struct {
	method, path, body string
	bearer             string            // "" for no Authorization header
	header             map[string]string // more headers (Host, Origin, Cookie)
}

type response struct {
	status int
	header http.Header
	body   string
}

func (f *fixture) do(r request) response {
	f.t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequest(r.method, f.url+r.path, body)
	if err != nil {
		f.t.Fatal(err)
	}
	if r.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+r.bearer)
	}
	for k, v := range r.header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, string(b)}
}

// call sends an authorized request and fails unless its status is want.
func (f *fixture) call(method, path, body string, want int) response {
	f.t.Helper()
	r := f.do(request{method: method, path: path, body: body, bearer: token})
	if r.status != want {
		f.t.Fatalf("%s %s = %d %s; want %d", method, path, r.status, r.body, want)
	}
	return r
}

// errorCode decodes an error body, failing when it is not one.
func errorCode(t testing.TB, r response) string {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal([]byte(r.body), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("body %q is not an error body (%v)", r.body, err)
	}
	return e.Error.Code
}

func TestAuth(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	cookie := map[string]string{"Cookie": staleCookie + "=" + staleCookieValue(token)}
	post := `{"name":"renamed"}`
	for _, c := range []authCase{
		{"no token", request{method: "GET", path: "/api/sessions"}, 401},
		{"wrong bearer", request{method: "GET", path: "/api/sessions", bearer: "nope"}, 401},
		{"bearer", request{method: "GET", path: "/api/sessions", bearer: token}, 200},
		{"not bearer", request{method: "GET", path: "/api/sessions", header: map[string]string{"Authorization": "Basic " + token}}, 401},
		{"stale cookie read", request{method: "GET", path: "/api/sessions", header: cookie}, 401},
		{"token as cookie", request{method: "GET", path: "/api/sessions", header: map[string]string{"Cookie": staleCookie + "=" + token}}, 401},
		{"query read", request{method: "GET", path: "/api/sessions?token=" + token}, 200},
		{"wrong query", request{method: "GET", path: "/api/sessions?token=x"}, 401},
		{"page without token", request{method: "GET", path: "/"}, 200},
		{"script without token", request{method: "GET", path: "/js/api.js"}, 200},
		{"cookie-only write", request{method: "POST", path: "/api/sessions/s1/name", body: post, header: cookie}, 401},
		{"query-only write", request{method: "POST", path: "/api/sessions/s1/name?token=" + token, body: post}, 403},
		{"cookie-only delete", request{method: "DELETE", path: "/api/sessions/s1", header: cookie}, 401},
		{"no-token write", request{method: "POST", path: "/api/sessions/s1/name", body: post}, 401},
		{"wrong-token write", request{method: "POST", path: "/api/sessions/s1/name", body: post, bearer: "nope"}, 401},
		{"cross-origin read", request{method: "GET", path: "/api/sessions", bearer: token, header: map[string]string{"Origin": "https://evil.example"}}, 403},
		{"cross-origin write", request{method: "POST", path: "/api/sessions/s1/name", body: post, bearer: token, header: map[string]string{"Origin": "https://evil.example"}}, 403},
		{"same-origin write", request{method: "POST", path: "/api/sessions/s1/name", body: post, bearer: token, header: map[string]string{"Origin": f.url}}, 201},
		{"rebound host", request{method: "GET", path: "/api/sessions", bearer: token, header: map[string]string{"Host": "evil.example:80"}}, 403},
		{"localhost host", request{method: "GET", path: "/api/sessions", bearer: token, header: map[string]string{"Host": "localhost:7878"}}, 200},
		{"ipv6 loopback host", request{method: "GET", path: "/api/sessions", bearer: token, header: map[string]string{"Host": "[::1]:7878"}}, 200},
	} {
		t.Run(c.name, func(t *testing.T) { c.check(t, f) })
	}
	// The name was written once, by the same-origin write with the header.
	var info struct{ Name string }
	json.Unmarshal([]byte(f.call("GET", "/api/sessions/s1", "", 200).body), &info)
	if info.Name != "renamed" {
		t.Errorf("name = %q; want renamed", info.Name)
	}
}

// TestNoCookie checks that no cookie lets anyone read: a browser sends
// a host's cookies to every port of it (cookies ignore ports), so any
// other server on this machine that the browser visits got the cookie
// the page's first load set, and read every session with it (an HMAC of
// the token, good for reads). Loading the page sets no cookie now (it
// deletes one an earlier version set), and a cookie authorizes nothing.
func TestNoCookie(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	stale := &http.Cookie{Name: staleCookie, Value: staleCookieValue(token)}
	r := f.do(request{method: "GET", path: "/?token=" + token, header: map[string]string{"Cookie": stale.String()}})
	if r.status != 200 || !strings.Contains(r.header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /?token= = %d %s", r.status, r.header.Get("Content-Type"))
	}
	if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("page's Content-Security-Policy = %q", csp)
	}
	// What the browser then sends to every port of the host: the
	// cookies set, and the stale one, deleted or not (as a browser that
	// ignores the deletion does).
	sent, deleted := []*http.Cookie{stale}, false
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == staleCookie && c.MaxAge < 0 {
			deleted = true
			continue
		}
		t.Errorf("the page's load set the cookie %s", c)
		sent = append(sent, c)
	}
	if !deleted {
		t.Errorf("the page's load left the stale cookie %s", stale)
	}
	for _, c := range sent {
		// The stream starting past the log is a 400 once authorized, not
		// a stream that never ends.
		for _, path := range []string{"/api/sessions", "/api/sessions/s1/context", "/api/sessions/s1/events?after=99"} {
			if r := f.do(request{method: "GET", path: path, header: map[string]string{"Cookie": c.Name + "=" + c.Value}}); r.status != 401 {
				t.Errorf("GET %s with the cookie %s = %d %.100s; want 401", path, c, r.status, r.body)
			}
		}
	}
}

// staleCookieValue is the value of the cookie the page's first load set
// before, an HMAC of the token.
func staleCookieValue(token string) string {
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte("sessiontree read cookie"))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func TestCORS(t *testing.T) {
	t.Parallel()
	const origin = "https://app.example"
	f := newFixture(t, Options{CORSOrigin: origin})
	pre := f.do(request{method: "OPTIONS", path: "/api/sessions/s1/entries", header: map[string]string{
		"Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type"}})
	if pre.status != 204 || pre.header.Get("Access-Control-Allow-Origin") != origin ||
		!strings.Contains(pre.header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("preflight = %d %v", pre.status, pre.header)
	}
	r := f.do(request{method: "GET", path: "/api/sessions", bearer: token, header: map[string]string{"Origin": origin}})
	if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != origin {
		t.Errorf("GET from %s = %d, Access-Control-Allow-Origin %q", origin, r.status, r.header.Get("Access-Control-Allow-Origin"))
	}
	// A page of that origin can read the next page's cursor, and resume
	// an event stream (a fetch-based reader sends Last-Event-ID).
	// and how much of a search was left out.
	for _, name := range []string{NextCursorHeader, UnsearchedHeader} {
		if exp := r.header.Get("Access-Control-Expose-Headers"); !strings.Contains(exp, name) {
			t.Errorf("Access-Control-Expose-Headers = %q; want it to hold %s", exp, name)
		}
	}
	if allow := pre.header.Get("Access-Control-Allow-Headers"); !strings.Contains(allow, "Last-Event-ID") {
		t.Errorf("Access-Control-Allow-Headers = %q; want it to hold Last-Event-ID", allow)
	}
	if r := f.do(request{method: "GET", path: "/api/sessions", bearer: token, header: map[string]string{"Origin": "https://other.example"}}); r.status != 403 {
		t.Errorf("GET from another origin = %d; want 403", r.status)
	}
}

// TestOtherOrigins sends what a browser sends for a page of another
// origin (another site, another port of this host, a name rebound to
// this machine) and checks that each is refused before it reaches a
// route: a preflight gets no CORS headers, a request naming its origin
// is refused, and so is a GET without an Origin (an <img>, a <script>, a
// no-cors fetch) that Sec-Fetch-Site says another site or port sent, even
// with the token. Following a link to the page is not refused.
func TestOtherOrigins(t *testing.T) {
	t.Parallel()
	const allowed = "https://app.example"
	f := newFixture(t, Options{CORSOrigin: allowed})
	u, _ := url.Parse(f.url)
	otherPort := "http://" + u.Hostname() + ":1"
	pre := func(origin string) map[string]string {
		return map[string]string{"Origin": origin, "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "authorization"}
	}
	noCors := func(site string) map[string]string {
		return map[string]string{"Sec-Fetch-Site": site, "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}
	}
	read := "/api/sessions/s1/context"
	for _, c := range []authCase{
		{"preflight of another site", request{method: "OPTIONS", path: read, header: pre("https://evil.example")}, 403},
		{"preflight of another port", request{method: "OPTIONS", path: read, header: pre(otherPort)}, 403},
		{"preflight of the allowed origin", request{method: "OPTIONS", path: read, header: pre(allowed)}, 204},
		{"read of another port", request{method: "GET", path: read, bearer: token, header: map[string]string{"Origin": otherPort, "Sec-Fetch-Site": "same-site"}}, 403},
		{"read of a null origin", request{method: "GET", path: read, bearer: token, header: map[string]string{"Origin": "null"}}, 403},
		{"no-cors read of another site", request{method: "GET", path: read + "?token=" + token, header: noCors("cross-site")}, 403},
		{"no-cors read of another port", request{method: "GET", path: read + "?token=" + token, header: noCors("same-site")}, 403},
		{"script of another port", request{method: "GET", path: "/js/api.js", header: noCors("same-site")}, 403},
		{"read of the page itself", request{method: "GET", path: read, bearer: token, header: map[string]string{"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors"}}, 200},
		{"read of the allowed origin", request{method: "GET", path: read, bearer: token, header: map[string]string{"Origin": allowed, "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors"}}, 200},
		{"a link from another site", request{method: "GET", path: "/", header: map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}}, 200},
		{"a rebound name", request{method: "GET", path: read, bearer: token, header: map[string]string{"Host": "evil.example:" + u.Port()}}, 403},
		{"the page on a rebound name", request{method: "GET", path: "/", header: map[string]string{"Host": "evil.example:" + u.Port()}}, 403},
	} {
		t.Run(c.name, func(t *testing.T) { c.check(t, f) })
	}
}

// authCase is a request and the status it must get.
type authCase struct {
	name string
	req  request
	want int
}

// check sends the request and fails unless it gets the status wanted; a
// refusal in the error shape and without CORS headers, and any answer
// to a request without an Origin without them too.
func (c authCase) check(t *testing.T, f *fixture) {
	t.Helper()
	r := f.do(c.req)
	if r.status != c.want {
		t.Fatalf("%s %s = %d %.100s; want %d", c.req.method, c.req.path, r.status, r.body, c.want)
	}
	if c.want >= 400 {
		errorCode(t, r)
	}
	if a := r.header.Get("Access-Control-Allow-Origin"); a != "" && (c.want >= 400 || c.req.header["Origin"] == "") {
		t.Errorf("answered %d with Access-Control-Allow-Origin %q", r.status, a)
	}
}

// TestJSONHeaders checks every GET route of the API, and an error, for
// Content-Type application/json and X-Content-Type-Options nosniff: a
// browser must never take session text for a page.
func TestJSONHeaders(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	for _, path := range []string{"/api/openapi.json", "/api/sessions", "/api/sessions/s1", "/api/sessions/s1/tree",
		"/api/sessions/s1/branch", "/api/sessions/s1/context", "/api/sessions/s1/entries", "/api/search?q=script",
		"/api/sessions/nope", "/api/sessions/s1/branch?full=maybe"} {
		r := f.do(request{method: "GET", path: path, bearer: token})
		if ct, ns := r.header.Get("Content-Type"), r.header.Get("X-Content-Type-Options"); ct != "application/json" || ns != "nosniff" {
			t.Errorf("GET %s: Content-Type %q, X-Content-Type-Options %q", path, ct, ns)
		}
		if !json.Valid([]byte(r.body)) {
			t.Errorf("GET %s: body is not JSON: %.200s", path, r.body)
		}
	}
	// Markup in session text comes back as the JSON string it was.
	body := f.call("GET", "/api/sessions/s1/entries", "", 200).body
	if !strings.Contains(body, `"<script>alert(1)</script> javascript:alert(2) & more"`) {
		t.Errorf("entries do not hold the message as written: %s", body)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	for _, c := range []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"GET", "/api/sessions/nope", "", 404, CodeNotFound},
		{"GET", "/api/sessions/nope/tree", "", 404, CodeNotFound},
		{"POST", "/api/sessions/nope/entries", `{"entries":[{"type":"custom","customType":"x"}]}`, 404, CodeNotFound},
		{"DELETE", "/api/sessions/nope", "", 404, CodeNotFound},
		{"GET", "/api/sessions/s1/branch?from=feedbeef", "", 404, CodeNotFound},
		{"GET", "/api/sessions/s1/entries?after=-1", "", 400, CodeBadRequest},
		{"GET", "/api/sessions?cursor=!!", "", 400, CodeBadRequest},
		{"GET", "/api/search", "", 400, CodeBadRequest},
		{"GET", "/api/search?q=%22unclosed", "", 400, CodeBadRequest},
		// Longer than store.MaxQueryBytes: a search's work grows as the
		// square of its words (a second for 100 KB, minutes for a URL's
		// 1 MB).
		{"GET", "/api/search?q=" + strings.Repeat("hello+", 1+store.MaxQueryBytes/6), "", 400, CodeBadRequest},
		{"GET", "/api/search?literal=1&q=" + strings.Repeat("hello+", 1+store.MaxQueryBytes/6), "", 400, CodeBadRequest},
		{"GET", "/api/search?q=hello&cwd=work", "", 400, CodeBadRequest},
		{"GET", "/api/sessions?cwd=./work", "", 400, CodeBadRequest},
		{"GET", "/api/sessions?cwd=%zz", "", 400, CodeBadRequest},
		{"GET", "/api/sessions?limit=1;cwd=/work", "", 400, CodeBadRequest},
		{"GET", "/api/search?q=hello&session=s1.jsonl", "", 400, CodeBadRequest},
		{"GET", "/api/search?q=hello&session=nope", "", 404, CodeNotFound},
		{"POST", "/api/sessions/s1/name", `{"name":`, 400, CodeBadRequest},
		{"POST", "/api/sessions/s1/name", `{"nom":"x"}`, 400, CodeBadRequest},
		{"POST", "/api/sessions/s1/name", `{"name":"x"} {}`, 400, CodeBadRequest},
		{"POST", "/api/sessions/s1/name", `{"name":"x"}}`, 400, CodeBadRequest},
		{"POST", "/api/sessions/s1/name", `{"name":"x"}]`, 400, CodeBadRequest},
		{"POST", "/api/sessions/s1/name", `{}`, 400, CodeBadRequest},
		{"POST", "/api/sessions/s1/name", ``, 400, CodeBadRequest},
		{"POST", "/api/sessions/s1/leaf", `{}`, 400, CodeBadRequest},
		{"POST", "/api/sessions/s1/leaf", `{"summary":"s"}`, 400, CodeBadRequest},
		{"POST", "/api/sessions/s1/entries", `{"entries":[]}`, 400, CodeBadRequest},
		{"POST", "/api/sessions/s1/edits", `{"entryId":"x","omit":true,"content":"y"}`, 400, CodeBadRequest},
		{"POST", "/api/sessions", `{"id":"s1"}`, 409, CodeConflict},
		{"GET", "/api/nothing", "", 404, CodeNotFound},
		{"PUT", "/api/sessions/s1/tree", "", 404, CodeNotFound},
	} {
		r := f.do(request{method: c.method, path: c.path, body: c.body, bearer: token})
		if r.status != c.status {
			t.Errorf("%s %s %s = %d %s; want %d", c.method, c.path, c.body, r.status, r.body, c.status)
			continue
		}
		if code := errorCode(t, r); code != c.code {
			t.Errorf("%s %s: code %q; want %q", c.method, c.path, code, c.code)
		}
	}
}

// logIDs returns the ids of the session's entries in append order.
func (f *fixture) logIDs() []string {
	f.t.Helper()
	var log []struct{ ID string }
	if err := json.Unmarshal([]byte(f.call("GET", "/api/sessions/s1/entries", "", 200).body), &log); err != nil {
		f.t.Fatal(err)
	}
	var ids []string
	for _, e := range log {
		ids = append(ids, e.ID)
	}
	return ids
}

func TestAppendEntries(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	leaf := f.entries[2]
	r := f.call("POST", "/api/sessions/s1/entries", `{"ifLeaf":"`+leaf+`","entries":[
		{"type": "message", "message": {"role": "user", "content": "one"}},
		{"type":"custom","customType":"step","data":{"n":1.50}},
		{"type":"label","targetId":"`+f.entries[0]+`","label":"start"}]}`, 201)
	var got []struct {
		ID, ParentID, Type string
		Message            json.RawMessage
		Data               json.RawMessage
	}
	if err := json.Unmarshal([]byte(r.body), &got); err != nil || len(got) != 3 {
		t.Fatalf("answer %s: %v", r.body, err)
	}
	if got[0].ParentID != leaf || got[1].ParentID != got[0].ID || got[2].ParentID != got[1].ID {
		t.Errorf("entries are not chained under %s: %+v", leaf, got)
	}
	if string(got[0].Message) != `{"role":"user","content":"one"}` || string(got[1].Data) != `{"n":1.50}` {
		t.Errorf("fields not kept as written: %s, %s", got[0].Message, got[1].Data)
	}
	if !strings.Contains(r.body, "\n") || strings.Count(r.body, "\n") != 1 {
		t.Errorf("answer spans lines: %q", r.body)
	}
	before := f.logIDs()

	// A stale guard writes nothing.
	r = f.call("POST", "/api/sessions/s1/entries", `{"ifLeaf":"`+leaf+`","entries":[{"type":"custom","customType":"late"}]}`, 409)
	if errorCode(t, r) != CodeConflict {
		t.Errorf("stale ifLeaf: %s", r.body)
	}
	// One bad draft, found by the store, writes none of them.
	f.call("POST", "/api/sessions/s1/entries", `{"entries":[{"type":"custom","customType":"a"},{"type":"label","targetId":"feedbeef","label":"x"}]}`, 404)
	// One bad draft, found when reading them, is named by its index.
	r = f.call("POST", "/api/sessions/s1/entries", `{"entries":[{"type":"custom","customType":"a"},{"type":"custom","parentId":"x"}]}`, 400)
	if !strings.Contains(r.body, "entries[1]") || !strings.Contains(r.body, "parentId") {
		t.Errorf("bad draft error = %s; want it to name entries[1] and parentId", r.body)
	}
	// So is one whose type's fields are wrong, which the store would
	// have refused naming an id it made up for it.
	r = f.call("POST", "/api/sessions/s1/entries", `{"entries":[{"type":"custom","customType":"a"},{"type":"custom","customType":"b"},{"type":"message","message":"hi"}]}`, 400)
	if !strings.Contains(r.body, "entries[2]") || !strings.Contains(r.body, `\"message\" must be an object`) {
		t.Errorf("bad draft error = %s; want it to name entries[2] and its message", r.body)
	}
	f.call("POST", "/api/sessions/s1/entries", `{"entries":[{"type":"leaf","targetId":null}]}`, 400)
	if after := f.logIDs(); !slices.Equal(after, before) {
		t.Errorf("refused appends changed the log: %d entries, had %d", len(after), len(before))
	}

	// An empty session takes the guard "".
	f.call("POST", "/api/sessions", `{"id":"empty"}`, 201)
	f.call("POST", "/api/sessions/empty/entries", `{"ifLeaf":"","entries":[{"type":"custom","customType":"first"}]}`, 201)
	f.call("POST", "/api/sessions/empty/entries", `{"ifLeaf":"","entries":[{"type":"custom","customType":"second"}]}`, 409)
}

func TestWrites(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	ctx := func() (c struct {
		Messages []json.RawMessage
	}) {
		json.Unmarshal([]byte(f.call("GET", "/api/sessions/s1/context", "", 200).body), &c)
		return c
	}
	// label, by a unique prefix
	lab := f.call("POST", "/api/sessions/s1/labels", `{"entryId":"`+f.entries[1][:6]+`","label":"<b>mark</b>"}`, 201)
	if !strings.Contains(lab.body, `"targetId":"`+f.entries[1]+`"`) {
		t.Errorf("label entry = %s", lab.body)
	}
	if tree := f.call("GET", "/api/sessions/s1/tree", "", 200).body; !strings.Contains(tree, `"label":"<b>mark</b>"`) {
		t.Errorf("tree lacks the label: %s", tree)
	}
	// edit: omit the markup message
	f.call("POST", "/api/sessions/s1/edits", `{"entryId":"`+f.entries[2]+`","omit":true}`, 201)
	if n := len(ctx().Messages); n != 2 {
		t.Errorf("context after omit has %d messages; want 2", n)
	}
	f.call("POST", "/api/sessions/s1/edits", `{"entryId":"`+f.entries[0]+`","content":"replaced"}`, 201)
	if m := ctx().Messages; len(m) == 0 || !strings.Contains(string(m[0]), `"replaced"`) {
		t.Errorf("context after replace = %s", m)
	}
	r := f.call("POST", "/api/sessions/s1/edits", `{"entryId":"feedbeef","content":7}`, 400)
	if !strings.Contains(r.body, "Context edit replacement must be null") {
		t.Errorf("bad replacement answered %s; want pi's message first", r.body)
	}
	// goto with a summary, then to the root
	r = f.call("POST", "/api/sessions/s1/leaf", `{"entryId":"`+f.entries[0]+`","summary":"left it"}`, 200)
	var leaf struct{ LeafID *string }
	json.Unmarshal([]byte(r.body), &leaf)
	if leaf.LeafID == nil || *leaf.LeafID == f.entries[0] {
		t.Errorf("leaf after goto with summary = %s; want the summary's id", r.body)
	}
	if c := ctx().Messages; len(c) != 2 || !strings.Contains(string(c[1]), `"left it"`) {
		t.Errorf("context after goto = %s", c)
	}
	if r := f.call("POST", "/api/sessions/s1/leaf", `{"entryId":null}`, 200); r.body != "{\"leafId\":null}\n" {
		t.Errorf("goto root = %q", r.body)
	}
	// fork the whole tree, then delete it
	r = f.call("POST", "/api/sessions/s1/fork", `{"tree":true,"id":"s2"}`, 201)
	var info struct {
		ID            string
		ParentSession string
		EntryCount    int
	}
	json.Unmarshal([]byte(r.body), &info)
	if info.ID != "s2" || info.ParentSession != "s1" || info.EntryCount < 3 {
		t.Errorf("fork answered %s", r.body)
	}
	f.call("DELETE", "/api/sessions/s2", "", 200)
	f.call("GET", "/api/sessions/s2", "", 404)
	// create with metadata
	r = f.call("POST", "/api/sessions", `{"id":"s3","cwd":"/tmp/x","metadata":{"k":1}}`, 201)
	if !strings.Contains(r.body, `"id":"s3"`) || !strings.Contains(r.body, `"cwd":"/tmp/x"`) || !strings.Contains(r.body, `"metadata":{"k":1}`) {
		t.Errorf("create answered %s", r.body)
	}
	if r := f.call("GET", "/api/sessions/s3", "", 200); !strings.Contains(r.body, `"metadata":{"k":1}`) {
		t.Errorf("GET /api/sessions/s3 = %s; want its metadata", r.body)
	}
	if r := f.call("GET", "/api/sessions/s1", "", 200); !strings.Contains(r.body, `"metadata":null`) {
		t.Errorf("GET /api/sessions/s1 = %s; want metadata null", r.body)
	}
	// create with a name: its one entry names it, and the answer says so
	r = f.call("POST", "/api/sessions", `{"id":"s4","name":" nightly\ntriage "}`, 201)
	if !strings.Contains(r.body, `"name":"nightly triage"`) || !strings.Contains(r.body, `"entryCount":1`) {
		t.Errorf("create with a name answered %s", r.body)
	}
	// a name of white space alone, which would name nothing, is a
	// mistake: 400, naming the member, and no session made
	r = f.call("POST", "/api/sessions", `{"id":"s5","name":" \r\n\t "}`, 400)
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal([]byte(r.body), &e); err != nil || e.Error.Code != CodeBadRequest || !strings.HasPrefix(e.Error.Message, `body: "name" `) {
		t.Errorf("create with a blank name answered %s; want a bad_request naming \"name\"", r.body)
	}
	f.call("GET", "/api/sessions/s5", "", 404)
}

func TestListCursor(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	for _, id := range []string{"a", "b", "c"} {
		f.call("POST", "/api/sessions", `{"id":"`+id+`"}`, 201)
	}
	var ids []string
	path := "/api/sessions?limit=2"
	for pages := 0; path != ""; pages++ {
		if pages > 3 {
			t.Fatal("more pages than sessions")
		}
		r := f.call("GET", path, "", 200)
		var rows []struct{ ID string }
		json.Unmarshal([]byte(r.body), &rows)
		for _, row := range rows {
			ids = append(ids, row.ID)
		}
		path = ""
		if c := r.header.Get(NextCursorHeader); c != "" {
			path = "/api/sessions?limit=2&cursor=" + c
		}
	}
	sort.Strings(ids)
	if diff := cmp.Diff([]string{"a", "b", "c", "s1"}, ids); diff != "" {
		t.Errorf("sessions over pages (-want +got):\n%s", diff)
	}
}

// TestEventsStart checks where a stream starts: after ?after=1, and a
// deleted session ends the stream with an error event.
func TestEventsStart(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	req, _ := http.NewRequest("GET", f.url+"/api/sessions/s1/events?after=1", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// Read up to the last entry, then delete the session.
	var text strings.Builder
	events := bufio.NewReader(resp.Body)
	for !strings.Contains(text.String(), "id: 3\n") {
		line, err := events.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended early: %v\n%s", err, text.String())
		}
		text.WriteString(line)
	}
	f.call("DELETE", "/api/sessions/s1", "", 200)
	rest, err := io.ReadAll(events) // the stream ends with the session
	if err != nil {
		t.Fatal(err)
	}
	text.Write(rest)
	for _, want := range []string{"id: 2\nevent: entry\ndata: {", "id: 3\n", "event: error\ndata: {\"error\":{\"code\":\"not_found\""} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("stream lacks %q:\n%s", want, text.String())
		}
	}
	if strings.Contains(text.String(), "id: 1\n") {
		t.Errorf("stream after 1 sent entry 1:\n%s", text.String())
	}
}

// TestOpenAPIMatchesRoutes holds the OpenAPI document and the route
// table to each other: every /api route is described, with the query
// parameters it takes (besides the token), and nothing else.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	s := loadSpec(t)
	if v, _ := s.doc["openapi"].(string); !strings.HasPrefix(v, "3.") {
		t.Errorf("openapi = %q; want 3.x", v)
	}
	var inDoc, inTable []string
	for path, ops := range s.doc["paths"].(map[string]any) {
		for method, op := range ops.(map[string]any) {
			if method != "parameters" {
				params := slices.Sorted(slices.Values(s.queryParams(op.(map[string]any))))
				inDoc = append(inDoc, strings.ToUpper(method)+" "+path+" "+strings.Join(params, ","))
			}
		}
	}
	for _, rt := range (&Server{}).routes() {
		if strings.HasPrefix(rt.pattern, "/api/") && rt.method != "" {
			params := slices.Sorted(slices.Values(rt.params))
			inTable = append(inTable, rt.method+" "+rt.pattern+" "+strings.Join(params, ","))
		}
	}
	sort.Strings(inDoc)
	sort.Strings(inTable)
	if diff := cmp.Diff(inTable, inDoc); diff != "" {
		t.Errorf("routes and their query parameters (-table +openapi.json):\n%s", diff)
	}
}

// TestExamples keeps the README's examples true: each is in the README
// as written in testdata, and the Python one, run against a live server,
// appends its two messages and prints the context.
func TestExamples(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"example.py", "example.ts"} {
		ex, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(readme), string(ex)) {
			t.Errorf("README.md does not hold testdata/%s as it is", name)
		}
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the Python example is not run")
	}
	f := newFixture(t, Options{})
	cmd := exec.Command(python, "testdata/example.py")
	cmd.Env = append(os.Environ(), "SESSIONTREE_URL="+f.url, "SESSIONTREE_TOKEN="+token)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("example.py: %v\n%s", err, out)
	}
	want := "user \"What is 2+2?\"\nassistant [{\"type\": \"text\", \"text\": \"4\"}]\n"
	if string(out) != want {
		t.Errorf("example.py printed %q; want %q", out, want)
	}
}

// TestBodyLimit checks that a body longer than Options.MaxBodyBytes is
// refused with a 400 that says so, and nothing is written.
func TestBodyLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{MaxBodyBytes: 200})
	before := f.logIDs()
	big := `{"entries":[{"type":"custom","customType":"x","data":"` + strings.Repeat("a", 300) + `"}]}`
	r := f.call("POST", "/api/sessions/s1/entries", big, 400)
	if !strings.Contains(r.body, "longer than 200 bytes") {
		t.Errorf("too long body answered %s", r.body)
	}
	if after := f.logIDs(); !slices.Equal(after, before) {
		t.Errorf("a refused body changed the log")
	}
}

// TestDeleteTakesAFullID checks that DELETE deletes only the session
// whose id is the one given: DELETE is to be safe to repeat, but a prefix
// that named a deleted session could name another one next time ("s" the
// session "s1" once "s" was gone), and that one was deleted too.
func TestDeleteTakesAFullID(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	f.call("POST", "/api/sessions", `{"id":"s"}`, 201)
	f.call("DELETE", "/api/sessions/s", "", 200)
	r := f.call("DELETE", "/api/sessions/s", "", 404) // a retry
	if !strings.Contains(r.body, "full id") {
		t.Errorf("DELETE of a prefix answered %s; want it to say DELETE takes a full id", r.body)
	}
	f.call("GET", "/api/sessions/s1", "", 200)
}

// TestEditContentNull checks that "content": null is taken as no
// content: alone it is refused for want of omit or content, not with
// pi's "replacement must be null" (which it was), and beside "omit": true
// it omits.
func TestEditContentNull(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	r := f.call("POST", "/api/sessions/s1/edits", `{"entryId":"`+f.entries[0]+`","content":null}`, 400)
	if !strings.Contains(r.body, "exactly one of") {
		t.Errorf(`"content": null answered %s; want it to ask for omit or content`, r.body)
	}
	f.call("POST", "/api/sessions/s1/edits", `{"entryId":"`+f.entries[0]+`","omit":true,"content":null}`, 201)
}

// TestAppendSessionHeader checks that a draft of type "session", a
// session header, is refused: stored as an entry it was the session's
// leaf, but exported it is a second header, which pi skips (so it
// disagreed on the leaf) and importing the file back refuses.
func TestAppendSessionHeader(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	before := f.logIDs()
	r := f.call("POST", "/api/sessions/s1/entries", `{"entries":[{"type":"custom","customType":"a"},{"type":"session"}]}`, 400)
	if !strings.Contains(r.body, "entries[1]") || !strings.Contains(r.body, "session header") {
		t.Errorf("a session header draft answered %s; want it to name entries[1] and say why", r.body)
	}
	if after := f.logIDs(); !slices.Equal(after, before) {
		t.Errorf("a refused append changed the log: %d entries, had %d", len(after), len(before))
	}
}

// TestAppendEntryIDs checks that a draft's id that no ENTRY argument
// can name afterwards (white space, a control character, "root", which
// names before the first entry), or that the route of an entry cannot (a
// dot segment, which a URL's resolution removes), is refused with a 400
// naming the draft,
// and that an id one can name is taken and reachable: they were stored,
// and then every route with an entry id refused the entry.
func TestAppendEntryIDs(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	before := f.logIDs()
	for _, id := range []string{"a b", `tab\tx`, `nul\u0000`, "root", ".", ".."} {
		r := f.call("POST", "/api/sessions/s1/entries", `{"entries":[{"type":"custom","customType":"c","id":"`+id+`"}]}`, 400)
		if !strings.Contains(r.body, "entries[0]") || !strings.Contains(r.body, `\"id\"`) {
			t.Errorf("draft id %s answered %s; want it to name entries[0] and its id", id, r.body)
		}
	}
	if after := f.logIDs(); !slices.Equal(after, before) {
		t.Errorf("refused drafts changed the log: %d entries, had %d", len(after), len(before))
	}
	f.call("POST", "/api/sessions/s1/entries", `{"entries":[{"type":"custom","customType":"c","id":"x/é"}]}`, 201)
	f.call("GET", "/api/sessions/s1/entries/x%2F%C3%A9", "", 200)
}

// TestBodyUTF8 checks that a body that is not UTF-8, which JSON must be,
// is refused with a 400 saying where, and nothing is written: its bytes
// were stored as they came, and every answer holding them was then JSON
// that a strict reader (Python's json.load) cannot read.
func TestBodyUTF8(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	before := f.logIDs()
	for _, c := range []struct{ path, body string }{
		{"/api/sessions/s1/entries", "{\"entries\":[{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"bad \xff byte\"}}]}"},
		{"/api/sessions/s1/name", "{\"name\":\"bad \xc3\"}"},
	} {
		r := f.call("POST", c.path, c.body, 400)
		if !strings.Contains(r.body, "UTF-8") || !strings.Contains(r.body, "byte") {
			t.Errorf("POST %s with a byte not UTF-8 answered %s; want it to say so and where", c.path, r.body)
		}
	}
	if after := f.logIDs(); !slices.Equal(after, before) {
		t.Errorf("refused bodies changed the log: %d entries, had %d", len(after), len(before))
	}
}

// TestEventsResume checks that a reconnecting browser's Last-Event-ID
// wins over the ?after of the URL it repeats.
func TestEventsResume(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	req, _ := http.NewRequest("GET", f.url+"/api/sessions/s1/events?after=1", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Last-Event-ID", "2")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := bufio.NewReader(resp.Body)
	for {
		line, err := events.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "id: ") {
			if line != "id: 3\n" {
				t.Errorf("first event %q; want id 3, the one after Last-Event-ID", line)
			}
			return
		}
	}
}

// TestAppendIfLeafNull checks that "ifLeaf": null, the leafId the API
// answers for an empty session or a leaf moved before the first entry,
// guards the append as "" does: it must not write unguarded.
func TestAppendIfLeafNull(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	f.call("POST", "/api/sessions", `{"id":"empty"}`, 201)
	var info struct{ LeafID *string }
	json.Unmarshal([]byte(f.call("GET", "/api/sessions/empty", "", 200).body), &info)
	if info.LeafID != nil {
		t.Fatalf("an empty session's leafId = %q; want null", *info.LeafID)
	}
	first := `{"ifLeaf":null,"entries":[{"type":"custom","customType":"first"}]}`
	f.call("POST", "/api/sessions/empty/entries", first, 201)
	// A second writer that read the same null leaf is refused.
	if r := f.call("POST", "/api/sessions/empty/entries", first, 409); errorCode(t, r) != CodeConflict {
		t.Errorf("stale null ifLeaf: %s", r.body)
	}
	// After goto root the null leaf is current again.
	f.call("POST", "/api/sessions/empty/leaf", `{"entryId":null}`, 200)
	f.call("POST", "/api/sessions/empty/entries", first, 201)
	if n := strings.Count(f.call("GET", "/api/sessions/empty/entries", "", 200).body, `"customType":"first"`); n != 2 {
		t.Errorf("the session holds %d appended entries; want 2 (the stale write refused)", n)
	}
}

// TestNewSessionIDs checks that create and fork refuse an id that the
// API's own routes cannot name afterwards (a path, a file name, white
// space, a dot segment, which a URL's resolution removes: fetch and curl
// sent GET /api/sessions/.. as GET /api/, and Go's mux redirected it
// there), with a 400 naming it, and create nothing.
func TestNewSessionIDs(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	n := f.sessionCount()
	// The last three pi refuses (store.Create's and Fork's rule).
	for _, id := range []string{"a/b", `a\b`, "notes.JSONL", "two words", "tab\tid", ".", "..", "-rf", "_x", "trailing-"} {
		body, _ := json.Marshal(map[string]string{"id": id})
		for _, path := range []string{"/api/sessions", "/api/sessions/s1/fork"} {
			r := f.do(request{method: "POST", path: path, body: string(body), bearer: token})
			var e struct{ Error struct{ Message string } }
			json.Unmarshal([]byte(r.body), &e)
			if r.status != 400 || !strings.Contains(e.Error.Message, fmt.Sprintf("%q", id)) {
				t.Errorf("POST %s %s = %d %s; want 400 naming the id", path, body, r.status, r.body)
			}
		}
	}
	if got := f.sessionCount(); got != n {
		t.Errorf("refused ids left %d sessions; want %d", got, n)
	}
	// An id the routes take is still taken, and is then reachable.
	f.call("POST", "/api/sessions", `{"id":"mine-1"}`, 201)
	f.call("POST", "/api/sessions/s1/fork", `{"id":"mine-2"}`, 201)
	f.call("GET", "/api/sessions/mine-2", "", 200)
	// An id in use is a 409 that says so, in words of the API, not of
	// the engine's SQL (it was "constraint failed: UNIQUE constraint
	// failed: sessions.id (2067)" on SQLite).
	for _, path := range []string{"/api/sessions", "/api/sessions/s1/fork"} {
		r := f.call("POST", path, `{"id":"mine-1"}`, 409)
		if !strings.Contains(r.body, "session mine-1 already exists") || strings.Contains(r.body, "constraint") {
			t.Errorf("POST %s with an id in use answered %s; want it to say the session already exists", path, r.body)
		}
	}
}

// TestNewSessionCwd checks that the cwd a create or a fork records is the
// one ?cwd= lists it by: a folder given with a trailing slash, a "..", or
// through a symbolic link is recorded as pi records a cwd (store.AbsCwd),
// as ?cwd= reads it, so the session is listed by the path it was created
// with; a relative cwd is refused with a 400 naming it, as ?cwd= refuses
// one (the server's working directory is not the caller's), and nothing
// is created.
func TestNewSessionCwd(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	for i, cwd := range []string{real + "/", link, real + "/../real", "/elsewhere/x/"} {
		body, _ := json.Marshal(map[string]string{"id": fmt.Sprintf("c%d", i), "cwd": cwd})
		path := "/api/sessions"
		if i%2 == 1 {
			path = "/api/sessions/s1/fork"
		}
		f.call("POST", path, string(body), 201)
		list := f.call("GET", "/api/sessions?cwd="+url.QueryEscape(cwd), "", 200).body
		if !strings.Contains(list, fmt.Sprintf(`"id":"c%d"`, i)) {
			t.Errorf("POST %s %s, then ?cwd=%s lists %s; want the new session", path, body, cwd, list)
		}
	}
	n := f.sessionCount()
	for _, path := range []string{"/api/sessions", "/api/sessions/s1/fork"} {
		r := f.do(request{method: "POST", path: path, body: `{"cwd":"work/here"}`, bearer: token})
		if r.status != 400 || !strings.Contains(r.body, `work/here`) {
			t.Errorf("POST %s with a relative cwd = %d %s; want 400 naming it", path, r.status, r.body)
		}
	}
	if got := f.sessionCount(); got != n {
		t.Errorf("refused cwds left %d sessions; want %d", got, n)
	}
}

// TestAmbiguousPrefix checks that an id prefix that names several
// entries is answered as one that names several sessions: 400, naming
// the matches, on every route that takes an entry. It was 404, as if no
// entry had it, while the same mistake with a session was 400.
func TestAmbiguousPrefix(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	f.call("POST", "/api/sessions/s1/entries", `{"entries":[{"type":"custom","customType":"x","id":"ab1"},{"type":"custom","customType":"x","id":"ab2"}]}`, 201)
	f.call("POST", "/api/sessions", `{"id":"s1x"}`, 201)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/api/sessions/s", ""},
		{"GET", "/api/sessions/s1/branch?from=ab", ""},
		{"GET", "/api/sessions/s1/context?from=ab", ""},
		{"GET", "/api/sessions/s1/entries/ab", ""},
		{"GET", "/api/sessions/s1/graph?focus=ab", ""},
		{"POST", "/api/sessions/s1/labels", `{"entryId":"ab","label":"l"}`},
		{"POST", "/api/sessions/s1/leaf", `{"entryId":"ab"}`},
		{"POST", "/api/sessions/s1/edits", `{"entryId":"ab","omit":true}`},
		{"POST", "/api/sessions/s1/fork", `{"at":"ab"}`},
	} {
		r := f.do(request{method: c.method, path: c.path, body: c.body, bearer: token})
		if r.status != 400 || errorCode(t, r) != CodeBadRequest || !strings.Contains(r.body, "ambiguous") {
			t.Errorf("%s %s %s = %d %s; want 400 saying the prefix is ambiguous", c.method, c.path, c.body, r.status, r.body)
		}
	}
}
