package server

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// branchIDs returns the ids of the entries on a session's active branch,
// root first.
func (f *fixture) branchIDs(session string) []string {
	f.t.Helper()
	var path []struct{ ID string }
	if err := json.Unmarshal([]byte(f.call("GET", "/api/sessions/"+session+"/branch", "", 200).body), &path); err != nil {
		f.t.Fatal(err)
	}
	ids := []string{}
	for _, e := range path {
		ids = append(ids, e.ID)
	}
	return ids
}

// sessionCount returns how many sessions the store lists.
func (f *fixture) sessionCount() int {
	f.t.Helper()
	var rows []json.RawMessage
	if err := json.Unmarshal([]byte(f.call("GET", "/api/sessions?limit=0", "", 200).body), &rows); err != nil {
		f.t.Fatal(err)
	}
	return len(rows)
}

// TestForkPoints checks POST /api/sessions/{id}/fork at and before an
// entry: "at" keeps the entry, "before" stops at its parent, an entry off
// the active branch forks its own path, and every refusal (a fork point
// that is not a user message, missing, another session's, or two of
// them, or one given empty) is a 4xx naming what is wrong that creates no
// session.
func TestForkPoints(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	e := f.entries // hello, hi, <script>..., all on one branch
	f.call("POST", "/api/sessions/s1/leaf", `{"entryId":"`+e[1]+`"}`, 200)
	var added []struct{ ID string }
	json.Unmarshal([]byte(f.call("POST", "/api/sessions/s1/entries",
		`{"entries":[{"type":"message","message":{"role":"user","content":"other"}}]}`, 201).body), &added)
	f.call("POST", "/api/sessions", `{"id":"s9"}`, 201)
	var theirs []struct{ ID string }
	json.Unmarshal([]byte(f.call("POST", "/api/sessions/s9/entries",
		`{"entries":[{"type":"message","message":{"role":"user","content":"theirs"}}]}`, 201).body), &theirs)
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"at the root", `{"at":"` + e[0] + `"}`, e[:1]},
		{"at an entry off the active branch", `{"at":"` + e[2][:6] + `"}`, e[:3]},
		{"before a user message off the active branch", `{"before":"` + e[2] + `"}`, e[:2]},
		{"before the root prompt", `{"before":"` + e[0] + `"}`, []string{}},
		{"at the leaf by default", `{}`, []string{e[0], e[1], added[0].ID}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var info struct{ ID string }
			json.Unmarshal([]byte(f.call("POST", "/api/sessions/s1/fork", c.body, 201).body), &info)
			if got := f.branchIDs(info.ID); !slices.Equal(got, c.want) {
				t.Errorf("fork %s has the branch %v; want %v", c.body, got, c.want)
			}
		})
	}
	n := f.sessionCount()
	for _, c := range []struct {
		name, body string
		status     int
		says       string
	}{
		{"before an assistant message", `{"before":"` + e[1] + `"}`, 400, e[1]},
		{"at a missing entry", `{"at":"feedbeef"}`, 404, "feedbeef"},
		{"at another session's entry", `{"at":"` + theirs[0].ID + `"}`, 404, theirs[0].ID},
		{"before another session's entry", `{"before":"` + theirs[0].ID + `"}`, 404, theirs[0].ID},
		{"at and before", `{"at":"` + e[0] + `","before":"` + e[2] + `"}`, 400, "one of"},
		{"at and tree", `{"at":"` + e[0] + `","tree":true}`, 400, "one of"},
		// As fork --at "" is: "" is not the leaf, nor "" the whole branch.
		{"at empty", `{"at":""}`, 400, `\"at\"`},
		{"before empty", `{"before":""}`, 400, `\"before\"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := f.do(request{method: "POST", path: "/api/sessions/s1/fork", body: c.body, bearer: token})
			if r.status != c.status || !strings.Contains(r.body, c.says) {
				t.Errorf("fork %s = %d %s; want %d naming %q", c.body, r.status, r.body, c.status, c.says)
			}
		})
	}
	if got := f.sessionCount(); got != n {
		t.Errorf("refused forks left %d sessions; want %d", got, n)
	}
}
