package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// spec is the OpenAPI document, decoded, with the few schema keywords it
// uses checked by check.
type spec struct {
	doc map[string]any
}

func loadSpec(t *testing.T) spec {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	return spec{doc}
}

// at returns the object at a "#/a/b" reference.
func (s spec) at(ref string) map[string]any {
	var v any = s.doc
	for _, k := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		v = v.(map[string]any)[k]
	}
	return v.(map[string]any)
}

// resolve follows $ref.
func (s spec) resolve(o map[string]any) map[string]any {
	for o["$ref"] != nil {
		o = s.at(o["$ref"].(string))
	}
	return o
}

// operation returns the operation a request's method and path fall under:
// the path's template matched segment by segment, a {name} taking any one.
func (s spec) operation(method, path string) (template string, op map[string]any) {
	segs := strings.Split(strings.SplitN(path, "?", 2)[0], "/")
	for tmpl, ops := range s.doc["paths"].(map[string]any) {
		t := strings.Split(tmpl, "/")
		if len(t) != len(segs) {
			continue
		}
		match := true
		for i := range t {
			if t[i] != segs[i] && !strings.HasPrefix(t[i], "{") {
				match = false
			}
		}
		if o, ok := ops.(map[string]any)[strings.ToLower(method)]; match && ok {
			return tmpl, o.(map[string]any)
		}
	}
	return "", nil
}

// check returns where v does not match schema sch (type, nullable, enum,
// required, properties, additionalProperties, items, minItems, maxItems).
func (s spec) check(where string, sch map[string]any, v any) []string {
	sch = s.resolve(sch)
	if v == nil {
		if sch["type"] == nil || sch["nullable"] == true {
			return nil
		}
		return []string{where + ": null, but the schema is not nullable"}
	}
	if typ, ok := sch["type"].(string); ok && !isType(typ, v) {
		return []string{fmt.Sprintf("%s: %T %.80v, want %s", where, v, v, typ)}
	}
	if enum, ok := sch["enum"].([]any); ok && !slices.Contains(enum, v) {
		return []string{fmt.Sprintf("%s: %v is not one of %v", where, v, enum)}
	}
	switch v := v.(type) {
	case map[string]any:
		return s.checkObject(where, sch, v)
	case []any:
		var bad []string
		if n, ok := sch["minItems"].(float64); ok && float64(len(v)) < n {
			bad = append(bad, fmt.Sprintf("%s: %d items, want at least %v", where, len(v), n))
		}
		if n, ok := sch["maxItems"].(float64); ok && float64(len(v)) > n {
			bad = append(bad, fmt.Sprintf("%s: %d items, want at most %v", where, len(v), n))
		}
		if items, ok := sch["items"].(map[string]any); ok {
			for i, it := range v {
				bad = append(bad, s.check(fmt.Sprintf("%s[%d]", where, i), items, it)...)
			}
		}
		return bad
	}
	return nil
}

func (s spec) checkObject(where string, sch map[string]any, v map[string]any) []string {
	var bad []string
	for _, r := range asSlice(sch["required"]) {
		if _, ok := v[r.(string)]; !ok {
			bad = append(bad, fmt.Sprintf("%s: lacks the required %q", where, r))
		}
	}
	props, _ := sch["properties"].(map[string]any)
	for k, pv := range v {
		if p, ok := props[k].(map[string]any); ok {
			bad = append(bad, s.check(where+"."+k, p, pv)...)
		} else if extra, ok := sch["additionalProperties"].(map[string]any); ok {
			bad = append(bad, s.check(where+"."+k, extra, pv)...)
		} else if sch["additionalProperties"] == false {
			bad = append(bad, fmt.Sprintf("%s: %q is not in the schema", where, k))
		}
	}
	return bad
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// isType reports whether a decoded JSON value is of an OpenAPI type.
func isType(typ string, v any) bool {
	switch v := v.(type) {
	case map[string]any:
		return typ == "object"
	case []any:
		return typ == "array"
	case string:
		return typ == "string"
	case bool:
		return typ == "boolean"
	case float64:
		return typ == "number" || typ == "integer" && v == math.Trunc(v)
	}
	return false
}

// checkAnswer checks one answer against the document: its status is one
// the operation lists, its Content-Type the one listed, and its JSON body
// matches the schema.
func (s spec) checkAnswer(method, path string, r response) []string {
	where := fmt.Sprintf("%s %s (%d)", method, path, r.status)
	tmpl, op := s.operation(method, path)
	if op == nil {
		return []string{where + ": no operation in openapi.json"}
	}
	resp, ok := op["responses"].(map[string]any)[fmt.Sprint(r.status)].(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s: status %d is not listed for %s %s", where, r.status, method, tmpl)}
	}
	content, _ := s.resolve(resp)["content"].(map[string]any)
	ct := strings.TrimSpace(strings.SplitN(r.header.Get("Content-Type"), ";", 2)[0])
	media, ok := content[ct].(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s: Content-Type %q is not listed", where, ct)}
	}
	if ct != "application/json" {
		return nil
	}
	var body any
	dec := json.NewDecoder(bytes.NewReader([]byte(r.body)))
	if err := dec.Decode(&body); err != nil {
		return []string{fmt.Sprintf("%s: body is not JSON: %v", where, err)}
	}
	return s.check(where+" body", media["schema"].(map[string]any), body)
}

// TestOpenAPIDescribesAnswers sends a request to every route, good and
// bad, and holds each answer to openapi.json: the status is listed for
// the operation, the Content-Type too, and the body matches the schema.
func TestOpenAPIDescribesAnswers(t *testing.T) {
	t.Parallel()
	s := loadSpec(t)
	f, ids := graphFixture(t)
	e := f.entries
	sid := f.session
	f.call("POST", "/api/sessions", `{"id":"empty","cwd":"/tmp/e"}`, 201)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/api/openapi.json", ""},
		{"GET", "/api/sessions", ""},
		{"GET", "/api/sessions?limit=1", ""},
		{"GET", "/api/sessions?cursor=!!", ""},
		{"GET", "/api/sessions?sesion=x", ""},
		{"GET", "/api/sessions?cwd=", ""},
		{"POST", "/api/sessions/" + sid + "/name?name=n", `{"name":"n"}`},
		{"GET", "/api/sessions/" + sid, ""},
		{"GET", "/api/sessions/empty", ""},
		{"GET", "/api/sessions/nope", ""},
		{"GET", "/api/sessions/" + sid + "/tree", ""},
		{"GET", "/api/sessions/empty/tree", ""},
		{"GET", "/api/sessions/" + sid + "/branch?full=1", ""},
		{"GET", "/api/sessions/" + sid + "/branch?from=" + ids[10], ""},
		{"GET", "/api/sessions/empty/branch", ""},
		{"GET", "/api/sessions/" + sid + "/branch?full=maybe", ""},
		{"GET", "/api/sessions/" + sid + "/context", ""},
		{"GET", "/api/sessions/" + sid + "/context?projection=1", ""},
		{"GET", "/api/sessions/empty/context", ""},
		{"GET", "/api/sessions/" + sid + "/entries?limit=2", ""},
		{"GET", "/api/sessions/" + sid + "/entries?after=x", ""},
		{"GET", "/api/sessions/" + sid + "/graph", ""},
		{"GET", "/api/sessions/empty/graph", ""},
		{"GET", "/api/sessions/" + sid + "/graph?focus=" + ids[20] + "&limit=5", ""},
		{"GET", "/api/sessions/" + sid + "/graph?limit=0", ""},
		{"GET", "/api/sessions/" + sid + "/entries/" + ids[20], ""},
		{"GET", "/api/sessions/" + sid + "/entries/" + ids[39], ""},
		{"GET", "/api/sessions/" + sid + "/entries/feedbeef", ""},
		{"GET", "/api/search?q=step", ""},
		{"GET", "/api/search?q=step&session=" + sid + "&literal=1", ""},
		{"GET", "/api/search?q=%22x", ""},
		{"GET", "/api/search?q=step&session=nope", ""},
		{"GET", "/api/sessions/nope/events", ""},
		{"GET", "/api/sessions/" + sid + "/events?after=x", ""},
		{"POST", "/api/sessions", `{"cwd":"/tmp/new","metadata":{"k":1}}`},
		{"POST", "/api/sessions", `{"id":"empty"}`},
		{"POST", "/api/sessions", `{"bad":1}`},
		{"POST", "/api/sessions/empty/entries", `{"ifLeaf":null,"entries":[{"type":"message","message":{"role":"user","content":"hi"}}]}`},
		{"POST", "/api/sessions/empty/entries", `{"ifLeaf":"","entries":[{"type":"custom","customType":"x"}]}`},
		{"POST", "/api/sessions/empty/entries", `{"entries":[]}`},
		{"POST", "/api/sessions/" + sid + "/labels", `{"entryId":"` + e[1] + `","label":"l"}`},
		{"POST", "/api/sessions/" + sid + "/labels", `{"entryId":"feedbeef","label":"l"}`},
		{"POST", "/api/sessions/" + sid + "/name", `{"name":"n"}`},
		{"POST", "/api/sessions/" + sid + "/name", `{}`},
		{"POST", "/api/sessions/" + sid + "/edits", `{"entryId":"` + e[0] + `","omit":true}`},
		{"POST", "/api/sessions/" + sid + "/edits", `{"entryId":"` + e[0] + `"}`},
		{"POST", "/api/sessions/" + sid + "/leaf", `{"entryId":"` + ids[5] + `","summary":"s"}`},
		{"POST", "/api/sessions/" + sid + "/leaf", `{"entryId":null}`},
		{"POST", "/api/sessions/" + sid + "/leaf", `{}`},
		{"POST", "/api/sessions/" + sid + "/fork", `{"at":"` + ids[3] + `","id":"forked"}`},
		{"POST", "/api/sessions/" + sid + "/fork", `{"before":"` + e[1] + `"}`},
		{"POST", "/api/sessions/" + sid + "/fork", `{"tree":true,"id":"forked"}`},
		{"GET", "/api/sessions/forked", ""},
		{"DELETE", "/api/sessions/forked", ""},
		{"DELETE", "/api/sessions/forked?force=1", ""},
		{"DELETE", "/api/sessions/forked?force=x", ""},
	} {
		r := f.do(request{method: c.method, path: c.path, body: c.body, bearer: token})
		for _, bad := range s.checkAnswer(c.method, c.path, r) {
			t.Error(bad)
		}
	}
	// Refusals of the token, the host and the origin, on a read and a write.
	for _, req := range []request{
		{method: "GET", path: "/api/sessions"},
		{method: "POST", path: "/api/sessions/" + sid + "/name?token=" + token, body: `{"name":"x"}`},
		{method: "GET", path: "/api/sessions", bearer: token, header: map[string]string{"Origin": "https://evil.example"}},
		{method: "GET", path: "/api/sessions/" + sid, bearer: token, header: map[string]string{"Host": "evil.example"}},
	} {
		for _, bad := range s.checkAnswer(req.method, req.path, f.do(req)) {
			t.Error(bad)
		}
	}
}

// TestOpenAPIRequestBodies holds every write to what openapi.json says
// of its body: a body marked required is refused when empty, one that is
// not is taken empty (its defaults); a body without a member the schema
// requires is refused, and so is one with a member the schema does not
// have. Each refusal is a 400 in the error shape.
func TestOpenAPIRequestBodies(t *testing.T) {
	t.Parallel()
	s := loadSpec(t)
	f := newFixture(t, Options{})
	for tmpl, ops := range s.doc["paths"].(map[string]any) {
		for method, op := range ops.(map[string]any) {
			o, isOp := op.(map[string]any) // not the path's "parameters"
			body, ok := o["requestBody"].(map[string]any)
			if !isOp || !ok {
				continue
			}
			method = strings.ToUpper(method)
			path := strings.ReplaceAll(tmpl, "{id}", f.session)
			sch := s.resolve(body["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any))
			r := f.do(request{method: method, path: path, bearer: token})
			if required := body["required"] == true; required != (r.status == 400) {
				t.Errorf("%s %s with no body = %d %s; openapi.json has the body required: %v", method, path, r.status, r.body, required)
			}
			if len(asSlice(sch["required"])) > 0 {
				refused(t, f, method, path, `{}`)
			}
			if sch["additionalProperties"] == false {
				refused(t, f, method, path, `{"notAMember":1}`)
			}
		}
	}
}

// refused sends a write and fails unless it is answered 400 in the
// error shape.
func refused(t *testing.T, f *fixture, method, path, body string) {
	t.Helper()
	r := f.do(request{method: method, path: path, body: body, bearer: token})
	if r.status != 400 || errorCode(t, r) != CodeBadRequest {
		t.Errorf("%s %s %s = %d %s; want 400", method, path, body, r.status, r.body)
	}
}

// TestSpecCheck checks the checker itself: each keyword it reads refuses
// what it should, so that TestOpenAPIDescribesAnswers can fail.
func TestSpecCheck(t *testing.T) {
	t.Parallel()
	s := loadSpec(t)
	errSchema := map[string]any{"$ref": "#/components/schemas/Error"}
	window := map[string]any{"$ref": "#/components/schemas/GraphWindow"}
	for _, c := range []struct {
		name   string
		schema map[string]any
		body   string
		ok     bool
	}{
		{"an error body", errSchema, `{"error":{"code":"not_found","message":"m"}}`, true},
		{"a code not in the enum", errSchema, `{"error":{"code":"teapot","message":"m"}}`, false},
		{"a required member missing", errSchema, `{"error":{"code":"not_found"}}`, false},
		{"a string for an object", errSchema, `{"error":"x"}`, false},
		{"null, not nullable", errSchema, `{"error":{"code":"not_found","message":null}}`, false},
		{"a fraction for an integer", window, `{"total":1.5,"lanes":1,"offset":0,"rows":[],"edges":[],"expand":[],"focusRow":-1}`, false},
		{"an edge of 3", window, `{"total":1,"lanes":1,"offset":0,"rows":[],"edges":[[0,0,1]],"expand":[],"focusRow":-1}`, false},
		{"a window", window, `{"total":1,"lanes":1,"offset":0,"rows":[],"edges":[[0,0,1,0]],"expand":[],"focusRow":-1}`, true},
		{"a member not allowed", map[string]any{"type": "object", "additionalProperties": false}, `{"x":1}`, false},
	} {
		var v any
		if err := json.Unmarshal([]byte(c.body), &v); err != nil {
			t.Fatal(err)
		}
		if bad := s.check("body", c.schema, v); (len(bad) == 0) != c.ok {
			t.Errorf("%s: check = %q; want ok %v", c.name, bad, c.ok)
		}
	}
}
