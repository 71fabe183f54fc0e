package storetest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
)

// PiFixture is one session file written by the pi agent with pi's answers.
type PiFixture struct {
	// Name is the file's base name without extension.
	Name string
	// Path is the .jsonl file.
	Path string
	// Want is the parsed .expected.json.
	Want PiExpected
}

// PiExpected holds pi's answers for one file (see testdata/pi/README.md).
type PiExpected struct {
	SessionID  string `json:"sessionId"`
	Cwd        string `json:"cwd"`
	EntryCount int    `json:"entryCount"`
	// LeafID is pi's leaf: a JSON string or null; absent when pi's answer
	// does not include it (legacy files).
	LeafID   json.RawMessage     `json:"leafId"`
	Name     *string             `json:"name"`
	Context  json.RawMessage     `json:"context"`
	Branch   []string            `json:"branch"`
	Probes   []PiProbe           `json:"probes"`
	Labels   map[string]string   `json:"labels"`
	Children map[string][]string `json:"children"`
	// IDsAssigned is true for version-1 files, whose ids pi invents while
	// migrating: only the context can be compared there.
	IDsAssigned bool `json:"idsAssignedOnMigration"`
}

// PiProbe is pi's answer at one entry other than the leaf.
type PiProbe struct {
	From    string          `json:"from"`
	Branch  []string        `json:"branch"`
	Context json.RawMessage `json:"context"`
}

// PiFixtures lists the fixtures in dir (testdata/pi).
func PiFixtures(t testing.TB, dir string) []PiFixture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no pi fixtures in %s: %v", dir, err)
	}
	var out []PiFixture
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".jsonl")
		raw, err := os.ReadFile(filepath.Join(dir, name+".expected.json"))
		if err != nil {
			t.Fatal(err)
		}
		fx := PiFixture{Name: name, Path: p}
		if err := json.Unmarshal(raw, &fx.Want); err != nil {
			t.Fatalf("%s.expected.json: %v", name, err)
		}
		out = append(out, fx)
	}
	return out
}

// RunPiFixtures opens every fixture in dir with open and checks the
// session against pi's answers: id, cwd, entry count, leaf, name, context,
// full branch, probes at other entries, labels and the tree.
func RunPiFixtures(t *testing.T, dir string, open func(t testing.TB, fx PiFixture) sessiontree.Storage) {
	for _, fx := range PiFixtures(t, dir) {
		t.Run(fx.Name, func(t *testing.T) {
			CheckPi(t, open(t, fx), fx.Want)
		})
	}
}

// CheckPi checks one opened session against pi's answers.
func CheckPi(t testing.TB, st sessiontree.Storage, want PiExpected) {
	t.Helper()
	ctx := context.Background()
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	meta, err := st.Meta(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if meta.ID != want.SessionID || meta.Cwd != want.Cwd {
		t.Errorf("Meta() = id %q cwd %q; want %q %q", meta.ID, meta.Cwd, want.SessionID, want.Cwd)
	}
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != want.EntryCount {
		t.Errorf("Log() has %d entries; want %d", len(log), want.EntryCount)
	}
	name, _ := st.Name(ctx)
	if want.Name != nil && name != *want.Name || want.Name == nil && name != "" {
		t.Errorf("Name() = %q; want %v", name, want.Name)
	}
	checkContext(t, s, "", want.Context)
	if want.IDsAssigned {
		return
	}
	if want.LeafID != nil {
		leaf, _ := st.Leaf(ctx)
		var wantLeaf *string
		_ = json.Unmarshal(want.LeafID, &wantLeaf)
		if wantLeaf != nil && leaf != *wantLeaf || wantLeaf == nil && leaf != "" {
			t.Errorf("Leaf() = %q; want %s", leaf, want.LeafID)
		}
	}
	if want.Branch != nil {
		checkBranch(t, s, "", want.Branch)
	}
	for _, p := range want.Probes {
		checkBranch(t, s, p.From, p.Branch)
		checkContext(t, s, p.From, p.Context)
	}
	if want.Labels != nil {
		got, err := st.Labels(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.Labels, got); diff != "" {
			t.Errorf("Labels() (-pi +got):\n%s", diff)
		}
	}
	if want.Children != nil {
		if diff := cmp.Diff(want.Children, childrenOf(sessiontree.BuildTree(log, nil))); diff != "" {
			t.Errorf("tree children (-pi +got):\n%s", diff)
		}
	}
}

func checkBranch(t testing.TB, s *sessiontree.Session, from string, want []string) {
	t.Helper()
	got, err := s.FullBranch(context.Background(), from)
	if err != nil {
		t.Errorf("FullBranch(%q): %v", from, err)
		return
	}
	if diff := cmp.Diff(want, ids(got)); diff != "" {
		t.Errorf("FullBranch(%q) (-pi +got):\n%s", from, diff)
	}
}

func checkContext(t testing.TB, s *sessiontree.Session, from string, want json.RawMessage) {
	t.Helper()
	c, err := s.Context(context.Background(), sessiontree.ContextOptions{From: from})
	if err != nil {
		t.Errorf("Context(%q): %v", from, err)
		return
	}
	got := mustJSON(map[string]any{"messages": c.Messages, "thinkingLevel": c.ThinkingLevel, "model": c.Model})
	var g, w any
	_ = json.Unmarshal(got, &g)
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("expected context: %v", err)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("Context(%q) (-pi +got):\n%s", from, diff)
	}
}

func childrenOf(roots []*sessiontree.TreeNode) map[string][]string {
	out := map[string][]string{}
	var walk func(parent string, nodes []*sessiontree.TreeNode)
	walk = func(parent string, nodes []*sessiontree.TreeNode) {
		list := make([]string, 0, len(nodes))
		for _, n := range nodes {
			list = append(list, n.Entry.ID)
			walk(n.Entry.ID, n.Children)
		}
		out[parent] = list
	}
	walk("", roots)
	return out
}
