package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree/internal/testdb"
	"github.com/sessiontree/sessiontree/storetest"
)

// piDirs are the folders of session files pi wrote with pi's answers:
// 0.73.1's and 1.6.0's.
var piDirs = []string{"../../testdata/pi", "../../testdata/pi1"}

// piImported is a database with piDirs imported by the command, made once
// per test binary (an import of them takes seconds under the race
// detector); tests that import them to read get a copy, newPiDB.
var piImported = testdb.New(func(ctx context.Context, path string) error {
	var out, errb bytes.Buffer
	if code := run(ctx, append([]string{"--db", path, "import"}, piDirs...), strings.NewReader(""), &out, &errb); code != 0 || errb.Len() > 0 {
		return fmt.Errorf("import: exit %d, stderr %q", code, errb.String())
	}
	s := sharedStores.forget(path)
	if s == nil {
		return fmt.Errorf("import: %s was not opened", path)
	}
	return s.Close()
})

// newPiDB returns the path of a fresh database holding piDirs, as
// "sessiontree --db PATH import piDirs..." leaves it.
func newPiDB(t testing.TB) string {
	t.Helper()
	db := newDB(t)
	piImported.CopyTo(t, db)
	return db
}

// TestPiAnswers checks the JSON output of info, ls, context (with its
// projection), branch --full and tree for every session file pi wrote
// (testdata/pi and testdata/pi1) against pi's own answers, for the file
// imported into a database and for the file read straight from its path:
// the context, the full branch and the projection at the leaf and at pi's
// probes (all of them for pi 1.6.0's files, two per file for 0.73.1's,
// whose answers the store's and the JSONL backend's own tests check in
// full), the tree's children, labels and label times, pi's /session stats
// and its session list's messageCount and firstMessage. Each comparison
// pi 1.6.0 recorded is checked where the file has it; stats and the list
// fields are subtests of their own ("stats", "list"), since they come from
// the database's counters in db mode.
func TestPiAnswers(t *testing.T) {
	t.Parallel()
	db := newPiDB(t)
	// ls --json rows by id, for the list fields of imported sessions.
	var rows []map[string]any
	decode(t, ok(t, "--db", db, "ls", "--json", "--limit", "1000"), &rows)
	listed := map[string]map[string]any{}
	for _, r := range rows {
		listed[r["id"].(string)] = r
	}
	for _, dir := range piDirs {
		pi1 := filepath.Base(dir) == "pi1"
		for _, fx := range storetest.PiFixtures(t, dir) {
			for _, src := range []struct{ name, arg string }{{"db", fx.Want.SessionID}, {"file", fx.Path}} {
				t.Run(filepath.Base(dir)+"/"+fx.Name+"/"+src.name, func(t *testing.T) {
					t.Parallel()
					checkPiAnswers(t, db, src.arg, src.name == "db", listed[fx.Want.SessionID], fx.Want, pi1)
				})
			}
		}
	}
}

// checkPiAnswers compares the command's answers on one session (a
// database session's id or a file's path) with pi's; row is the
// session's ls --json row, checked when fromDB.
func checkPiAnswers(t *testing.T, db, session string, fromDB bool, row map[string]any, w storetest.PiExpected, allProbes bool) {
	var info map[string]any
	decode(t, ok(t, "--db", db, "info", session, "--json"), &info)
	want := map[string]any{"id": w.SessionID, "cwd": w.Cwd, "entryCount": float64(w.EntryCount), "name": nil}
	if w.Name != nil {
		want["name"] = *w.Name
	}
	if w.LeafID != nil && !w.IDsAssigned {
		var leaf any
		decode(t, string(w.LeafID), &leaf)
		want["leafId"] = leaf
	}
	for k, v := range want {
		if !cmp.Equal(info[k], v) {
			t.Errorf("info --json: %s = %v; want pi's %v", k, info[k], v)
		}
	}
	for _, k := range []string{"createdAt", "parentSession", "stats", "branches", "compactions", "messageCount", "firstMessage"} {
		if _, ok := info[k]; !ok {
			t.Errorf("info --json has no %q", k)
		}
	}
	if w.Stats != nil {
		t.Run("stats", func(t *testing.T) {
			var ws map[string]any
			decode(t, string(w.Stats), &ws)
			delete(ws, "sessionId")
			if diff := cmp.Diff(ws, info["stats"]); diff != "" {
				t.Errorf("info --json stats (-pi +got):\n%s", diff)
			}
		})
	}
	if li, listedByPi := w.ListInfo(); listedByPi {
		t.Run("list", func(t *testing.T) {
			wl := map[string]any{"messageCount": float64(li.MessageCount), "firstMessage": li.FirstMessage}
			got := map[string]any{"messageCount": info["messageCount"], "firstMessage": info["firstMessage"]}
			if diff := cmp.Diff(wl, got); diff != "" {
				t.Errorf("info --json list fields (-pi +got):\n%s", diff)
			}
			if !fromDB {
				return
			}
			got = map[string]any{"messageCount": row["messageCount"], "firstMessage": row["firstMessage"]}
			if diff := cmp.Diff(wl, got); diff != "" {
				t.Errorf("ls --json row's list fields (-pi +got):\n%s", diff)
			}
		})
	}
	checkContext(t, db, session, "", w.Context, w.Projection)
	if w.IDsAssigned {
		return
	}
	if w.Branch != nil {
		checkBranch(t, db, session, "", w.Branch)
	}
	if w.Children != nil || w.Labels != nil || w.LabelTimestamps != nil {
		var roots []node
		decode(t, ok(t, "--db", db, "tree", session, "--json"), &roots)
		children, labels, times := map[string][]string{}, map[string]string{}, map[string]string{}
		collect("", roots, children, labels, times)
		if diff := cmp.Diff(w.Children, children); w.Children != nil && diff != "" {
			t.Errorf("tree --json children (-pi +got):\n%s", diff)
		}
		if diff := cmp.Diff(w.ShownLabels(t), labels); w.Labels != nil && diff != "" {
			t.Errorf("tree --json labels (-pi +got):\n%s", diff)
		}
		if diff := cmp.Diff(w.LabelTimestamps, times); w.LabelTimestamps != nil && diff != "" {
			t.Errorf("tree --json labelTimestamp (-pi +got):\n%s", diff)
		}
	}
	probes := w.Probes
	if !allProbes {
		probes = probes[:min(2, len(probes))]
	}
	for _, p := range probes {
		checkBranch(t, db, session, p.From, p.Branch)
		checkContext(t, db, session, p.From, p.Context, p.Projection)
	}
}

// checkContext compares context --json (at --from, when given) with pi's
// context, on the keys pi gives, and its projection with pi's when pi
// recorded one.
func checkContext(t *testing.T, db, session, from string, want, wantProjection json.RawMessage) {
	t.Helper()
	args := []string{"--db", db, "context", session, "--json"}
	if from != "" {
		args = append(args, "--from", from)
	}
	if wantProjection != nil {
		args = append(args, "--projection")
	}
	var got, w map[string]any
	decode(t, ok(t, args...), &got)
	decode(t, string(want), &w)
	for k := range w {
		if diff := cmp.Diff(w[k], got[k]); diff != "" {
			t.Errorf("context --json --from %q: %s (-pi +got):\n%s", from, k, diff)
		}
	}
	if _, ok := got["activeToolNames"]; !ok {
		t.Errorf("context --json has no activeToolNames")
	}
	if wantProjection == nil {
		return
	}
	var wp any
	decode(t, string(wantProjection), &wp)
	if diff := cmp.Diff(wp, got["projection"]); diff != "" {
		t.Errorf("context --json --projection --from %q: projection (-pi +got):\n%s", from, diff)
	}
}

// checkBranch compares the ids of branch --full --json with pi's branch.
func checkBranch(t *testing.T, db, session, from string, want []string) {
	t.Helper()
	args := []string{"--db", db, "branch", session, "--full", "--json"}
	if from != "" {
		args = append(args, "--from", from)
	}
	var entries []struct{ ID string }
	decode(t, ok(t, args...), &entries)
	got := []string{}
	for _, e := range entries {
		got = append(got, e.ID)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("branch --full --json --from %q (-pi +got):\n%s", from, diff)
	}
}

type node struct {
	Entry          struct{ ID string }
	Label          *string
	LabelTimestamp *string
	Children       []node
}

// collect gathers each node's children ids (key "" for the roots), and
// the labels and label times of the nodes that have them.
func collect(parent string, nodes []node, children map[string][]string, labels, times map[string]string) {
	ids := make([]string, 0, len(nodes))
	for _, n := range nodes {
		ids = append(ids, n.Entry.ID)
		if n.Label != nil {
			labels[n.Entry.ID] = *n.Label
		}
		if n.LabelTimestamp != nil {
			times[n.Entry.ID] = *n.LabelTimestamp
		}
		collect(n.Entry.ID, n.Children, children, labels, times)
	}
	children[parent] = ids
}
