package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// queryParams returns the names of the query parameters openapi.json
// lists for an operation.
func (s spec) queryParams(op map[string]any) []string {
	var names []string
	for _, p := range asSlice(op["parameters"]) {
		if p := s.resolve(p.(map[string]any)); p["in"] == "query" {
			names = append(names, p["name"].(string))
		}
	}
	return names
}

// TestQueryRefusals checks, on every API route of the route table and
// every query parameter it takes, that the server refuses what the
// command refuses of a flag: a parameter given empty (what a variable
// that was not set gives: ?session= would search every session, ?after=
// stream the log from its start), given twice, or one the route does not
// take (a typo as ?sesion= would be ignored, and the answer widened).
// Each is a 400 in the error shape, its message naming the parameter, and
// answered before the route does anything.
func TestQueryRefusals(t *testing.T) {
	t.Parallel()
	s := loadSpec(t)
	f := newFixture(t, Options{})
	good := map[string]string{
		"token": token, "cwd": "/work", "name": "x", "limit": "1", "session": "s1", "q": "hello",
		"literal": "1", "from": f.entries[0], "full": "1", "projection": "1", "after": "0",
		"offset": "0", "expand": f.entries[0], "focus": f.entries[0], "force": "0",
	}
	f.call("POST", "/api/sessions", `{"id":"s2"}`, 201)
	good["cursor"] = f.call("GET", "/api/sessions?limit=1", "", 200).header.Get(NextCursorHeader)
	n := 0
	for _, rt := range (&Server{}).routes() {
		if !strings.HasPrefix(rt.pattern, "/api/") || rt.method == "" {
			continue
		}
		path := strings.NewReplacer("{id}", "s1", "{entry}", f.entries[0]).Replace(rt.pattern)
		_, op := s.operation(rt.method, path)
		if op == nil {
			t.Fatalf("%s %s: no operation in openapi.json", rt.method, rt.pattern)
		}
		refuse := func(query, name string) {
			t.Helper()
			n++
			r := f.doWithin(request{method: rt.method, path: path + "?" + query, bearer: token})
			if r.status != http.StatusBadRequest || !strings.Contains(r.body, `\"`+name+`\"`) {
				t.Errorf("%s %s?%s = %d %s; want 400 naming %q", rt.method, rt.pattern, query, r.status, r.body, name)
			} else if code := errorCode(t, r); code != CodeBadRequest {
				t.Errorf("%s %s?%s: code %q; want %q", rt.method, rt.pattern, query, code, CodeBadRequest)
			}
		}
		refuse("sesion=s1", "sesion")
		// The token is a parameter of every route (see authorized).
		for _, p := range append([]string{tokenParam}, s.queryParams(op)...) {
			v, ok := good[p]
			if !ok {
				t.Fatalf("%s %s: no good value of %q to try", rt.method, rt.pattern, p)
			}
			refuse(p+"=", p)
			refuse(p+"="+v+"&"+p+"="+v, p)
		}
	}
	if n < 60 {
		t.Errorf("%d requests tried; the route table or the document lost its parameters", n)
	}
	f.call("GET", "/api/sessions/s1", "", 200) // nothing was deleted
}

// doWithin is do with a deadline: a request the server wrongly takes for
// an event stream would never end.
func (f *fixture) doWithin(r request) response {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, r.method, f.url+r.path, strings.NewReader(r.body))
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+r.bearer)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return response{body: fmt.Sprintf(`{"error":{"code":"client","message":%q}}`, err.Error())}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"error": map[string]string{"code": "client", "message": err.Error()}})
	}
	return response{resp.StatusCode, resp.Header, string(b)}
}
