package main

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree/storetest"
)

// TestPiAnswers checks the JSON output of info, context, branch --full and
// tree for every session file pi wrote against pi's own answers, for the
// file imported into a database and for the file read straight from its
// path.
func TestPiAnswers(t *testing.T) {
	db := newDB(t)
	ok(t, "--db", db, "import", "../../testdata/pi")
	for _, fx := range storetest.PiFixtures(t, "../../testdata/pi") {
		for _, src := range []struct{ name, arg string }{{"db", fx.Want.SessionID}, {"file", fx.Path}} {
			t.Run(fx.Name+"/"+src.name, func(t *testing.T) {
				t.Parallel()
				w := fx.Want
				var info map[string]any
				decode(t, ok(t, "--db", db, "info", src.arg, "--json"), &info)
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
				for _, k := range []string{"createdAt", "parentSession", "stats", "branches", "compactions"} {
					if _, ok := info[k]; !ok {
						t.Errorf("info --json has no %q", k)
					}
				}
				checkContext(t, db, src.arg, "", w.Context)
				if w.IDsAssigned {
					return
				}
				if w.Branch != nil {
					checkBranch(t, db, src.arg, "", w.Branch)
				}
				if w.Children != nil {
					var roots []node
					decode(t, ok(t, "--db", db, "tree", src.arg, "--json"), &roots)
					children := map[string][]string{}
					collect("", roots, children)
					if diff := cmp.Diff(w.Children, children); diff != "" {
						t.Errorf("tree --json children (-pi +got):\n%s", diff)
					}
				}
				// pi answers at six other entries per file; the store's and
				// the JSONL backend's own tests check them all. Here two of
				// them check that --from reaches the library.
				for _, p := range w.Probes[:min(2, len(w.Probes))] {
					checkBranch(t, db, src.arg, p.From, p.Branch)
					checkContext(t, db, src.arg, p.From, p.Context)
				}
			})
		}
	}
}

// checkContext compares context --json (at --from, when given) with pi's
// context, on the keys pi gives.
func checkContext(t *testing.T, db, session, from string, want json.RawMessage) {
	t.Helper()
	args := []string{"--db", db, "context", session, "--json"}
	if from != "" {
		args = append(args, "--from", from)
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
	Entry    struct{ ID string }
	Label    string
	Children []node
}

func collect(parent string, nodes []node, out map[string][]string) {
	ids := make([]string, 0, len(nodes))
	for _, n := range nodes {
		ids = append(ids, n.Entry.ID)
		collect(n.Entry.ID, n.Children, out)
	}
	out[parent] = ids
}
