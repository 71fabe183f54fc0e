package view_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/storetest"
	"github.com/sessiontree/sessiontree/view"
)

// now is the fixed clock of the golden files: an hour and a half after the
// demo session's last entry.
var now = time.Date(2026, 3, 1, 11, 31, 39, 0, time.UTC)

func names() []string {
	var out []string
	for n := range fixtures {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func TestTreeGolden(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, name := range names() {
		for _, all := range []bool{false, true} {
			file := name + ".tree.txt"
			if all {
				file = name + ".tree-all.txt"
			}
			t.Run(file, func(t *testing.T) {
				var buf bytes.Buffer
				if err := view.WriteTree(ctx, &buf, load(t, fixtures[name]), view.TreeOptions{All: all}); err != nil {
					t.Fatal(err)
				}
				golden(t, file, buf.Bytes())
			})
		}
	}
}

func TestTreeWidth(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := view.WriteTree(context.Background(), &buf, load(t, fixtures["session-003"]), view.TreeOptions{Width: 40}); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		if w := view.StringWidth(line); w > 40 {
			t.Errorf("line %q is %d columns; want at most 40", line, w)
		}
	}
}

func TestBranchGolden(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, name := range names() {
		for _, full := range []bool{false, true} {
			file := name + ".branch.txt"
			if full {
				file = name + ".branch-full.txt"
			}
			t.Run(file, func(t *testing.T) {
				st := load(t, fixtures[name])
				s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
				branch := s.Branch
				if full {
					branch = s.FullBranch
				}
				path, err := branch(ctx, "")
				if err != nil {
					t.Fatal(err)
				}
				labels, _ := st.Labels(ctx)
				leaf, _ := st.Leaf(ctx)
				var buf bytes.Buffer
				if err := view.WriteBranch(&buf, path, view.BranchOptions{Labels: labels, Leaf: leaf}); err != nil {
					t.Fatal(err)
				}
				golden(t, file, buf.Bytes())
			})
		}
	}
}

func TestTranscriptGolden(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, name := range names() {
		t.Run(name, func(t *testing.T) {
			s := sessiontree.NewSession(load(t, fixtures[name]), sessiontree.SessionOptions{})
			c, err := s.Context(ctx, sessiontree.ContextOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := view.WriteTranscript(&buf, c); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".context.txt", buf.Bytes())
		})
	}
	t.Run("empty", func(t *testing.T) {
		var buf bytes.Buffer
		if err := view.WriteTranscript(&buf, sessiontree.Context{State: sessiontree.DefaultState()}); err != nil {
			t.Fatal(err)
		}
		want := "model: none · thinking: off · tools: default\n\n(no messages)\n"
		if buf.String() != want {
			t.Errorf("WriteTranscript(empty) = %q; want %q", buf.String(), want)
		}
	})
}

func TestInfoGolden(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, name := range names() {
		t.Run(name, func(t *testing.T) {
			info, err := view.LoadInfo(ctx, load(t, fixtures[name]))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := view.WriteInfo(&buf, info, now); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".info.txt", buf.Bytes())
			buf.Reset()
			if err := view.WriteJSON(&buf, info, view.JSONOptions{Indent: true}); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".info.json", buf.Bytes())
		})
	}
}

// TestInfoAgainstPi checks info's keys against pi's answers for every
// version-3 fixture: pi's /session stats and session-list fields where pi
// 1.6.0 recorded them.
func TestInfoAgainstPi(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, fx := range piFixtures(t) {
		t.Run(fx.Name, func(t *testing.T) {
			info, err := view.LoadInfo(ctx, load(t, fx.Path))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := view.WriteJSON(&buf, info, view.JSONOptions{}); err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			var leaf any
			_ = json.Unmarshal(fx.Want.LeafID, &leaf)
			var name any
			if fx.Want.Name != nil {
				name = *fx.Want.Name
			}
			want := map[string]any{"id": fx.Want.SessionID, "cwd": fx.Want.Cwd, "entryCount": float64(fx.Want.EntryCount), "leafId": leaf, "name": name}
			for k, w := range want {
				if !cmp.Equal(got[k], w) {
					t.Errorf("info %s = %v; want pi's %v", k, got[k], w)
				}
			}
			if roots := len(fx.Want.Children[""]); got["roots"] != float64(roots) {
				t.Errorf("info roots = %v; want %d", got["roots"], roots)
			}
			tips := 0
			for id := range fx.Want.Children {
				if id != "" && len(fx.Want.Children[id]) == 0 {
					tips++
				}
			}
			if got["branches"] != float64(tips) {
				t.Errorf("info branches = %v; want %d tips", got["branches"], tips)
			}
			if fx.Want.Stats != nil {
				var w map[string]any
				if err := json.Unmarshal(fx.Want.Stats, &w); err != nil {
					t.Fatal(err)
				}
				delete(w, "sessionId")
				if diff := cmp.Diff(w, got["stats"]); diff != "" {
					t.Errorf("info stats (-pi +got):\n%s", diff)
				}
			}
			if li, ok := fx.Want.ListInfo(); ok {
				if got["messageCount"] != float64(li.MessageCount) || got["firstMessage"] != li.FirstMessage {
					t.Errorf("info messageCount, firstMessage = %v, %q; want pi's %d, %q", got["messageCount"], got["firstMessage"], li.MessageCount, li.FirstMessage)
				}
			}
		})
	}
}

// piFixtures are the version-3 files of testdata/pi and testdata/pi1 (the
// legacy files need migrating, which load does not do).
func piFixtures(t testing.TB) []storetest.PiFixture {
	var out []storetest.PiFixture
	for _, dir := range []string{"../testdata/pi", "../testdata/pi1"} {
		for _, fx := range storetest.PiFixtures(t, dir) {
			if !strings.HasPrefix(fx.Name, "legacy") {
				fx.Name = filepath.Base(dir) + "/" + fx.Name
				out = append(out, fx)
			}
		}
	}
	return out
}

func TestTreeJSON(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, fx := range piFixtures(t) {
		t.Run(fx.Name, func(t *testing.T) {
			st := load(t, fx.Path)
			var buf bytes.Buffer
			if err := view.WriteTreeJSON(ctx, &buf, st, view.JSONOptions{}); err != nil {
				t.Fatal(err)
			}
			log, _ := st.Log(ctx, 0, 0)
			labels, _ := st.Labels(ctx)
			nodes := sessiontree.BuildTree(log, labels)
			if nodes == nil {
				nodes = []*sessiontree.TreeNode{} // an empty tree is written []
			}
			std, err := json.Marshal(nodes)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := normalize(t, buf.Bytes()), normalize(t, std); !bytes.Equal(got, want) {
				i := 0
				for i < len(got) && i < len(want) && got[i] == want[i] {
					i++
				}
				t.Errorf("WriteTreeJSON differs from encoding/json at byte %d: got %.200s; want %.200s", i, got[i:], want[i:])
			}
			var roots []treeNode
			_ = json.Unmarshal(buf.Bytes(), &roots)
			children := map[string][]string{}
			collect("", roots, children)
			if diff := cmp.Diff(fx.Want.Children, children); diff != "" {
				t.Errorf("tree children (-pi +got):\n%s", diff)
			}
			if fx.Want.LabelTimestamps != nil {
				times := map[string]string{}
				labelTimes(roots, times)
				if diff := cmp.Diff(fx.Want.LabelTimestamps, times); diff != "" {
					t.Errorf("tree labelTimestamp (-pi +got):\n%s", diff)
				}
			}
			if !bytes.HasSuffix(buf.Bytes(), []byte("]\n")) {
				t.Errorf("tree JSON does not end in a newline")
			}
		})
	}
	t.Run("empty", func(t *testing.T) {
		var buf bytes.Buffer
		if err := view.WriteTreeNodesJSON(&buf, nil, view.JSONOptions{}); err != nil || buf.String() != "[]\n" {
			t.Errorf("WriteTreeNodesJSON(nil) = %q, %v; want \"[]\\n\"", buf.String(), err)
		}
	})
	t.Run("deep", func(t *testing.T) {
		// Written iteratively, so depth costs no stack. (encoding/json
		// refuses to decode past 10,000 levels, so build the want by hand.)
		const depth = 50000
		var log []sessiontree.Entry
		var want strings.Builder
		want.WriteString("[")
		parent := ""
		for i := range depth {
			id := fmt.Sprintf("%08x", i)
			e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: sessiontree.TypeCustom, Fields: json.RawMessage(`{"customType":"x"}`)}, id, parent, "2026-01-01T00:00:00.000Z")
			if err != nil {
				t.Fatal(err)
			}
			log = append(log, e)
			parent = id
			fmt.Fprintf(&want, `{"entry":%s,"children":[`, e.Raw)
		}
		want.WriteString(strings.Repeat("]}", depth) + "]\n")
		var buf bytes.Buffer
		if err := view.WriteTreeNodesJSON(&buf, sessiontree.BuildTree(log, nil), view.JSONOptions{}); err != nil {
			t.Fatal(err)
		}
		if buf.String() != want.String() {
			t.Errorf("deep tree JSON differs from the nested document")
		}
	})
}

// normalize decodes and re-encodes JSON, so documents that mean the same
// compare equal as bytes (cmp.Diff on deep trees is too slow).
func normalize(t testing.TB, b []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("JSON does not parse: %v", err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type treeNode struct {
	Entry          struct{ ID string }
	Label          string
	LabelTimestamp *string
	Children       []treeNode
}

// labelTimes collects the labelTimestamp of every node that has one.
func labelTimes(nodes []treeNode, out map[string]string) {
	for _, n := range nodes {
		if n.LabelTimestamp != nil {
			out[n.Entry.ID] = *n.LabelTimestamp
		}
		labelTimes(n.Children, out)
	}
}

func collect(parent string, nodes []treeNode, out map[string][]string) {
	ids := make([]string, 0, len(nodes))
	for _, n := range nodes {
		ids = append(ids, n.Entry.ID)
		collect(n.Entry.ID, n.Children, out)
	}
	out[parent] = ids
}

func TestTreeTextShowsEveryEntryWithAll(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, fx := range storetest.PiFixtures(t, "../testdata/pi") {
		if strings.HasPrefix(fx.Name, "legacy") {
			continue
		}
		t.Run(fx.Name, func(t *testing.T) {
			st := load(t, fx.Path)
			var buf bytes.Buffer
			if err := view.WriteTree(ctx, &buf, st, view.TreeOptions{All: true}); err != nil {
				t.Fatal(err)
			}
			log, _ := st.Log(ctx, 0, 0)
			text := buf.String()
			lines := strings.Count(text, "\n")
			if lines < len(log) {
				t.Errorf("WriteTree(All) printed %d lines for %d entries", lines, len(log))
			}
			for _, e := range log {
				if !strings.Contains(text, " "+view.ShortID(e.ID)+" ") {
					t.Errorf("WriteTree(All) does not show entry %s", e.ID)
				}
			}
			buf.Reset()
			if err := view.WriteTree(ctx, &buf, st, view.TreeOptions{}); err != nil {
				t.Fatal(err)
			}
			if folded := strings.Count(buf.String(), "\n"); folded > lines {
				t.Errorf("folded tree has %d lines, more than the full %d", folded, lines)
			}
			leaf, _ := st.Leaf(ctx)
			if leaf != "" && !strings.Contains(buf.String(), "* "+view.ShortID(leaf)+" (leaf)") {
				t.Errorf("folded tree does not mark the leaf %s", leaf)
			}
		})
	}
}

func TestSessionsTable(t *testing.T) {
	t.Parallel()
	rows := []view.SessionRow{
		{ID: "0198f2a4-5c1e-7d3a-9b2f-3e4d5c6b7a81", Name: "ls --json flag", Cwd: "/home/me/project", Entries: 15, Messages: 7, Updated: now.Add(-90 * time.Minute)},
		{ID: "0198f2a4-7e00-7000-8000-000000000001", FirstMessage: "Why does the\nbuild fail on 日本語 paths?", Cwd: "/home/me/a/very/long/path/that/does/not/fit/in/the/column/src", Entries: 1234, Messages: 600, Updated: now.Add(-3 * 24 * time.Hour)},
		{ID: "01a237bc-c4aa-7424-823d-95976470926c", Cwd: "/", Entries: 0, Messages: 0},
	}
	var buf bytes.Buffer
	if err := view.WriteSessions(&buf, rows, now); err != nil {
		t.Fatal(err)
	}
	golden(t, "ls.txt", buf.Bytes())
}

func TestHitsTable(t *testing.T) {
	t.Parallel()
	rows := []view.HitRow{
		{SessionID: "0198f2a4-5c1e-7d3a-9b2f-3e4d5c6b7a81", EntryID: "4a1ce8d2", From: "branch_summary", Time: now.Add(-90 * time.Minute),
			Snippet: "Tried a table/JSON switch and cursor [paging]; going back to keep ls simple.", OnActiveBranch: true},
		{SessionID: "0198f2a4-5c1e-7d3a-9b2f-3e4d5c6b7a81", EntryID: "2c6b8e04", From: "user", Time: now.Add(-91 * time.Minute),
			Snippet: "Now add [paging]."},
		{SessionID: "01a237bc-c4aa-7424-823d-95976470926c", EntryID: "0123456789abcdef", From: "assistant", Snippet: "日本語 [paging]"},
	}
	var buf bytes.Buffer
	if err := view.WriteHits(&buf, rows, now, 40); err != nil {
		t.Fatal(err)
	}
	golden(t, "hits.txt", buf.Bytes())
	buf.Reset()
	if err := view.WriteHits(&buf, nil, now, 0); err != nil || buf.String() != "no hits\n" {
		t.Errorf("WriteHits(nil) = %q, %v; want \"no hits\"", buf.String(), err)
	}
}

// TestEditMarks checks which entries the tree marks edited or omitted in
// the file pi wrote with hand-added edits: only edits in effect in the
// leaf's context, and only those that change something (the replacement
// of a system message is ignored, as pi ignores it; the edits of a missing
// id do nothing). Moving the leaf above an edit takes its mark away.
func TestEditMarks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := load(t, "../testdata/pi1/edited-00.jsonl")
	d, err := view.LoadSessionData(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"3199483c": view.MarkOmitted, // a bash execution
		"2fd28c7a": view.MarkEdited,  // an assistant message
		"9169653d": view.MarkEdited,  // a tool result
		"07a4521a": view.MarkEdited,  // a custom message
		"645bfd0f": view.MarkOmitted, // a branch summary
		"40fb22f8": view.MarkEdited,  // a user message
		"617d9aed": view.MarkOmitted, // the newest compaction, by the leaf itself
	}
	if diff := cmp.Diff(want, d.EditMarks()); diff != "" {
		t.Errorf("EditMarks() (-want +got):\n%s", diff)
	}
	// pi's own projection agrees: an omitted entry contributes nothing.
	var proj []struct {
		SourceID string
		Messages []json.RawMessage
	}
	fx := storetest.PiFixtures(t, "../testdata/pi1")
	for _, f := range fx {
		if f.Name == "edited-00" {
			if err := json.Unmarshal(f.Want.Projection, &proj); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, pe := range proj {
		if want[pe.SourceID] == view.MarkOmitted && len(pe.Messages) != 0 {
			t.Errorf("entry %s is marked omitted but pi's projection gives it %d messages", pe.SourceID, len(pe.Messages))
		}
	}

	// Edits are branch-local: with the leaf above the compaction's edit,
	// the compaction is no longer marked.
	if _, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).MoveTo(ctx, "40e4321d", nil); err != nil {
		t.Fatal(err)
	}
	if d, err = view.LoadSessionData(ctx, st); err != nil {
		t.Fatal(err)
	}
	delete(want, "617d9aed")
	if diff := cmp.Diff(want, d.EditMarks()); diff != "" {
		t.Errorf("EditMarks() after moving the leaf above an edit (-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	if err := view.WriteTreeData(&buf, d, view.TreeOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"* 3199483c (omitted) bash: $ pwd (exit 0)", "* 40fb22f8 (edited) user: after the edits", "* 617d9aed compaction: hand compaction"} {
		if !strings.Contains(buf.String(), line+"\n") {
			t.Errorf("folded tree lacks %q:\n%s", line, buf.String())
		}
	}
}
