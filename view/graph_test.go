package view_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/memory"
	"github.com/sessiontree/sessiontree/view"
)

// treeLine is what a graph row and a line of the text tree both say: the
// lane, the short id (or the fold's size) and whether it is active.
type treeLine struct {
	Lane   int
	Text   string
	Active bool
}

// textTreeLines reads the entry and fold lines of a text tree, dropping
// the fork lines and the blank lines between roots.
func textTreeLines(t *testing.T, text string) []treeLine {
	t.Helper()
	out := []treeLine{}
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		lane := 0
		for strings.HasPrefix(line, "| ") {
			line, lane = line[2:], lane+1
		}
		mark, rest, _ := strings.Cut(line, " ")
		switch mark {
		case "*", "o":
			id, _, _ := strings.Cut(rest, " ")
			out = append(out, treeLine{lane, id, mark == "*"})
		case "~":
			n, _, _ := strings.Cut(rest, " ")
			out = append(out, treeLine{lane, "~" + n, false})
		}
	}
	return out
}

// graphLines reads the same from graph rows; a fold's activity is not
// drawn by the text tree, so it is left false there.
func graphLines(rows []view.GraphRow) []treeLine {
	out := make([]treeLine, len(rows))
	for i, r := range rows {
		if r.Type == view.FoldType {
			out[i] = treeLine{r.Lane, fmt.Sprintf("~%d", r.Folded), false}
			continue
		}
		out[i] = treeLine{r.Lane, view.ShortID(r.ID), r.Active}
	}
	return out
}

// graphFixtures are the session files the graph is tested on: every pi
// fixture, of every version, and the demo.
func graphFixtures(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, dir := range []string{"../testdata/pi", "../testdata/pi1"} {
		m, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	return append(files, fixtures["demo"])
}

// readSession reads a session file of any version as the tree view does.
func readSession(t *testing.T, path string) view.SessionData {
	t.Helper()
	ctx := context.Background()
	st, err := jsonl.Open(ctx, path, jsonl.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d, err := view.LoadSessionData(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestGraphRowsMatchTextTree holds the graph the page draws to the text
// tree the CLI prints, over every pi fixture: the same entries in the same
// order and lanes, the same folds.
func TestGraphRowsMatchTextTree(t *testing.T) {
	t.Parallel()
	for _, path := range graphFixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			d := readSession(t, path)
			var text bytes.Buffer
			if err := view.WriteTreeData(&text, d, view.TreeOptions{}); err != nil {
				t.Fatal(err)
			}
			rows := view.NewGraph(d).Rows(nil)
			if diff := cmp.Diff(textTreeLines(t, text.String()), graphLines(rows)); diff != "" {
				t.Errorf("Graph.Rows differs from the text tree (-text +graph):\n%s", diff)
			}
			checkParents(t, d, rows)
		})
	}
}

// checkParents checks that each row's parent row holds the entry's parent,
// or the fold that hides it, and comes before it.
func checkParents(t *testing.T, d view.SessionData, rows []view.GraphRow) {
	t.Helper()
	parent := map[string]string{}
	for _, e := range d.Log {
		parent[e.ID] = e.ParentID
	}
	for i, r := range rows {
		if r.Type == view.FoldType || r.Parent < 0 {
			continue
		}
		if r.Parent >= i {
			t.Fatalf("row %d (%s): parent row %d is not above it", i, r.ID, r.Parent)
		}
		if p := rows[r.Parent]; p.Type != view.FoldType && p.ID != parent[r.ID] {
			t.Errorf("row %d (%s): parent row holds %s; want %s", i, r.ID, p.ID, parent[r.ID])
		}
	}
}

// linearSession is a session of n user messages in one chain, with a label
// on entry label and a side branch of two messages from entry fork.
func linearSession(t *testing.T, n, label, fork int) (sessiontree.Storage, view.SessionData, []string) {
	t.Helper()
	ctx := context.Background()
	st, err := memory.New(sessiontree.SessionMeta{ID: "s", Version: 3, Cwd: "/x"}, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	user := func(i int) {
		msg, _ := json.Marshal(map[string]any{"role": "user", "content": fmt.Sprintf("message %d", i)})
		if _, err := s.AppendMessage(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	for i := range n {
		user(i)
		leaf, _ := s.Leaf(ctx)
		ids = append(ids, leaf)
	}
	if _, err := s.SetLabel(ctx, ids[label], "mid"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MoveTo(ctx, ids[fork], nil); err != nil {
		t.Fatal(err)
	}
	user(n)
	user(n + 1)
	if _, err := s.MoveTo(ctx, ids[n-1], nil); err != nil {
		t.Fatal(err)
	}
	d, err := view.LoadSessionData(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	return st, d, ids
}

func TestGraphFoldsAndExpands(t *testing.T) {
	t.Parallel()
	st, d, ids := linearSession(t, 20, 10, 3)
	g := view.NewGraph(d)
	rows := g.Rows(nil)
	// 0..3, then the fork at 3: the side branch is the newer child, so it
	// keeps lane 0 and the older chain 4..19 opens lane 1 and comes first:
	// 4, fold 5..9, 10 labelled, fold 11..18, 19 the leaf, the label entry
	// under it; then the side branch.
	var got []string
	for _, r := range rows {
		s := fmt.Sprintf("%d:%s", r.Lane, r.ID)
		if r.Type == view.FoldType {
			s = fmt.Sprintf("%d:~%d@%s", r.Lane, r.Folded, r.ID)
		}
		got = append(got, s)
	}
	label := d.Log[20].ID
	side1, side2 := d.Log[22].ID, d.Log[23].ID
	want := []string{
		"0:" + ids[0], "0:" + ids[1], "0:" + ids[2], "0:" + ids[3],
		"1:" + ids[4], fmt.Sprintf("1:~5@%s", ids[5]), "1:" + ids[10], fmt.Sprintf("1:~8@%s", ids[11]),
		"1:" + ids[19], "1:" + label,
		"0:" + side1, "0:" + side2,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Rows(nil) (-want +got):\n%s", diff)
	}
	if r := rows[4]; r.Parent != 3 || !r.Active {
		t.Errorf("older child row = %+v; want parent 3, active", r)
	}
	if r := rows[10]; r.Parent != 3 || r.Active {
		t.Errorf("newer child row = %+v; want parent 3, not active", r)
	}
	if r := rows[6]; r.Label != "mid" {
		t.Errorf("row 6 label = %q; want mid", r.Label)
	}
	if r := rows[8]; !r.Leaf {
		t.Errorf("row 8 = %+v; want the leaf", r)
	}

	if err := view.Describe(context.Background(), st, rows); err != nil {
		t.Fatal(err)
	}
	if r := rows[3]; r.Summary != "user: message 3" || r.Role != "user" {
		t.Errorf("described row 3 = %q, role %q; want %q, user", r.Summary, r.Role, "user: message 3")
	}
	if r := rows[5]; r.Summary != "5 entries" || r.Role != "" {
		t.Errorf("described fold = %q, role %q; want %q, no role", r.Summary, r.Role, "5 entries")
	}
	if r := rows[9]; r.Summary != "label "+view.ShortID(ids[10])+": mid" {
		t.Errorf("described label entry = %q", r.Summary)
	}

	key, ok := g.FoldOf(ids[15], rows)
	if !ok || key != ids[11] {
		t.Errorf("FoldOf(%s) = %q, %v; want %q, true", ids[15], key, ok, ids[11])
	}
	if key, ok := g.FoldOf(ids[10], rows); ok {
		t.Errorf("FoldOf(shown entry) = %q, true; want false", key)
	}
	if key, ok := g.FoldOf(ids[19], rows); ok {
		t.Errorf("FoldOf(entry after a fold) = %q, true; want false", key)
	}
	expanded := g.Rows(map[string]bool{ids[11]: true})
	if len(expanded) != len(rows)+7 {
		t.Fatalf("expanding an 8-entry fold: %d rows; want %d", len(expanded), len(rows)+7)
	}
	for i, id := range ids[11:19] {
		r := expanded[7+i]
		if r.ID != id || r.Parent != 6+i || !r.Active {
			t.Errorf("expanded row %d = %+v; want %s, parent %d, active", 7+i, r, id, 6+i)
		}
	}
	if _, ok := g.FoldOf(ids[15], expanded); ok {
		t.Errorf("FoldOf(%s) after expanding its fold = true; want false", ids[15])
	}
}

// TestGraphExtendMatchesNewGraph builds each fixture's graph from a part of
// its log, extends it with the rest, and holds it to the graph built from
// the whole log.
func TestGraphExtendMatchesNewGraph(t *testing.T) {
	t.Parallel()
	extended := 0
	for _, path := range graphFixtures(t) {
		full := readSession(t, path)
		meta := sessiontree.SessionMeta{ID: "s", Version: 3}
		hasEdits := slices.ContainsFunc(full.Log, func(e sessiontree.Entry) bool { return e.Type == sessiontree.TypeContextEdit })
		want := view.NewGraph(full)
		for _, cut := range []int{0, 1, len(full.Log) / 3, len(full.Log) / 2, len(full.Log) - 1} {
			if cut < 0 || cut > len(full.Log) {
				continue
			}
			part := sessionData(t, meta, full.Log[:cut])
			got, ok := view.NewGraph(part).Extend(full.Log[cut:], full.Labels, full.Leaf)
			if ok == hasEdits {
				t.Errorf("%s cut at %d: Extend ok = %v; want %v (the session has context edits: %v)", path, cut, ok, !hasEdits, hasEdits)
				continue
			}
			if !ok {
				continue
			}
			extended++
			compareGraphs(t, fmt.Sprintf("%s cut at %d", filepath.Base(path), cut), want, got)
		}
	}
	if extended == 0 {
		t.Fatal("no graph was extended")
	}
}

// sessionData is what LoadSessionData reads of a session of these entries.
func sessionData(t *testing.T, meta sessiontree.SessionMeta, log []sessiontree.Entry) view.SessionData {
	t.Helper()
	st, err := memory.New(meta, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.AppendBatch(context.Background(), log); err != nil {
		t.Fatal(err)
	}
	d, err := view.LoadSessionData(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// compareGraphs compares the rows of two graphs, folded and with every
// fold expanded.
func compareGraphs(t *testing.T, what string, want, got *view.Graph) {
	t.Helper()
	if want.Len() != got.Len() {
		t.Errorf("%s: %d entries; want %d", what, got.Len(), want.Len())
	}
	folded := want.Rows(nil)
	if diff := cmp.Diff(folded, got.Rows(nil)); diff != "" {
		t.Errorf("%s: rows (-new +extended):\n%s", what, diff)
	}
	all := map[string]bool{}
	for _, r := range folded {
		if r.Type == view.FoldType {
			all[r.ID] = true
		}
	}
	if diff := cmp.Diff(want.Rows(all), got.Rows(all)); diff != "" {
		t.Errorf("%s: expanded rows (-new +extended):\n%s", what, diff)
	}
}

// TestLoadGraphMatchesNewGraph holds the graph LoadGraph reads from a
// session's heads to the graph of its whole log, over every fixture, read
// from its file (LogHeads from Log) and from an engine database (the
// engine's narrow read).
func TestLoadGraphMatchesNewGraph(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	forEachStored(t, func(t *testing.T, path string, file *jsonl.Storage, stored *engine.Storage) {
		d := readSession(t, path)
		want := view.NewGraph(d).Rows(nil)
		for name, st := range map[string]sessiontree.Storage{"file": file, "engine": stored} {
			g, last, err := view.LoadGraph(ctx, st)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if diff := cmp.Diff(want, g.Rows(nil)); diff != "" {
				t.Errorf("%s: LoadGraph differs from NewGraph of the log (-log +loaded):\n%s", name, diff)
			}
			wantLast := int64(0)
			if n := len(d.Log); n > 0 {
				wantLast = d.Log[n-1].Seq
			}
			if last != wantLast {
				t.Errorf("%s: LoadGraph's last seq = %d; want %d", name, last, wantLast)
			}
		}
	})
}

// TestGraphActiveOnDamagedLog checks the active path of a graph whose log
// is not one node per entry (an id twice, a leaf entry, a cycle cut off
// from the root) against SessionData.ActiveSet.
func TestGraphActiveOnDamagedLog(t *testing.T) {
	t.Parallel()
	entry := func(typ, id, parent string) sessiontree.Entry {
		line := map[string]any{"type": typ, "id": id, "parentId": nilIfEmpty(parent), "timestamp": "2026-03-01T10:00:00.000Z"}
		if typ == "message" {
			line["message"] = map[string]any{"role": "user", "content": "hi " + id}
		}
		if typ == "leaf" {
			line["targetId"] = nilIfEmpty(parent)
		}
		raw, _ := json.Marshal(line)
		e, err := sessiontree.DecodeEntry(raw)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for name, log := range map[string][]sessiontree.Entry{
		"duplicate id": {entry("message", "a", ""), entry("message", "b", "a"), entry("message", "c", "b"), entry("message", "b", "")},
		"leaf entry":   {entry("message", "a", ""), entry("message", "b", "a"), entry("leaf", "l", "a"), entry("message", "c", "b")},
		"cycle":        {entry("message", "a", ""), entry("message", "b", "a"), entry("message", "x", "y"), entry("message", "y", "x"), entry("message", "c", "b")},
	} {
		t.Run(name, func(t *testing.T) {
			d := view.SessionData{Log: log, Leaf: "c"}
			active := d.ActiveSet()
			rows := view.NewGraph(d).Rows(map[string]bool{"a": true})
			if len(rows) == 0 {
				t.Fatal("no rows")
			}
			for _, r := range rows {
				if r.Active != active[r.ID] || r.Leaf != (r.ID == "c") {
					t.Errorf("row %s: active %v, leaf %v; want active %v, leaf %v", r.ID, r.Active, r.Leaf, active[r.ID], r.ID == "c")
				}
			}
		})
	}
}
