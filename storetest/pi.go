package storetest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
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
	LeafID  json.RawMessage `json:"leafId"`
	Name    *string         `json:"name"`
	Context json.RawMessage `json:"context"`
	Branch  []string        `json:"branch"`
	Probes  []PiProbe       `json:"probes"`
	// Labels are the labels pi keeps, by entry: a string, or a truthy
	// value of another type that a label entry set.
	Labels map[string]any `json:"labels"`
	// LabelsShown are the labels as pi's tree shows them (JavaScript's
	// String() of one that is not a string), what a backend's Labels
	// answers; testdata/pi1's files, written before it, lack it and have
	// string labels only.
	LabelsShown map[string]string   `json:"labelsShown"`
	Children    map[string][]string `json:"children"`
	// IDsAssigned is true for version-1 files, whose ids pi invents while
	// migrating: only the context can be compared there.
	IDsAssigned bool `json:"idsAssignedOnMigration"`

	// The answers below are recorded by the pi 1.6.0 fixtures
	// (testdata/pi1) only; each is checked when present.

	// PiVersion is the pi release that wrote and answered the file.
	PiVersion string `json:"piVersion"`
	// Projection is buildSessionProjection at the leaf.
	Projection json.RawMessage `json:"projection"`
	// ContextEntryIDs are the ids of buildContextEntries at the leaf.
	ContextEntryIDs []string `json:"contextEntryIds"`
	// LabelTimestamps are the tree nodes' labelTimestamp per labelled entry.
	LabelTimestamps map[string]string `json:"labelTimestamps"`
	// SessionInfo is pi's session list row; JSON null when pi leaves the
	// file out of its list.
	SessionInfo json.RawMessage `json:"sessionInfo"`
	// Stats are pi's /session totals (its sessionId key aside).
	Stats json.RawMessage `json:"stats"`
	// AppendErrors are appends pi refused while writing the file.
	AppendErrors []PiAppendError `json:"appendErrors"`
}

// PiAppendError is an append pi refused while it wrote a fixture.
type PiAppendError struct {
	// Op is pi's method: appendContextEdit, appendLabelChange, branch,
	// branchWithSummary.
	Op       string `json:"op"`
	TargetID string `json:"targetId"`
	// Arg is the replacement, label or summary given.
	Arg   json.RawMessage `json:"arg"`
	Error string          `json:"error"`
}

// PiProbe is pi's answer at one entry other than the leaf.
type PiProbe struct {
	From       string          `json:"from"`
	Branch     []string        `json:"branch"`
	Context    json.RawMessage `json:"context"`
	Projection json.RawMessage `json:"projection"`
}

// PiStats decodes pi's stats without its sessionId key.
func (w PiExpected) PiStats(t testing.TB) sessiontree.Stats {
	t.Helper()
	var st sessiontree.Stats
	if err := json.Unmarshal(w.Stats, &st); err != nil {
		t.Fatalf("expected stats: %v", err)
	}
	return st
}

// ListInfo decodes pi's messageCount and firstMessage; ok is false when
// pi leaves the file out of its list or the answer was not recorded.
func (w PiExpected) ListInfo() (info sessiontree.ListInfo, ok bool) {
	if len(w.SessionInfo) == 0 || string(w.SessionInfo) == "null" {
		return info, false
	}
	return info, json.Unmarshal(w.SessionInfo, &info) == nil
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
	runPiFixtures(t, PiFixtures(t, dir), open)
}

// RunPiFixtureKinds is [RunPiFixtures], except that under go test -short
// it checks one fixture of each kind only ([FixtureKinds]): for a slow
// backend whose every fixture a faster one checks (the root package's
// TestPiFixtures checks them all on the SQLite engine).
func RunPiFixtureKinds(t *testing.T, dir string, open func(t testing.TB, fx PiFixture) sessiontree.Storage) {
	fixtures := PiFixtures(t, dir)
	if testing.Short() {
		fixtures = FixtureKinds(fixtures)
	}
	runPiFixtures(t, fixtures, open)
}

func runPiFixtures(t *testing.T, fixtures []PiFixture, open func(t testing.TB, fx PiFixture) sessiontree.Storage) {
	for _, fx := range fixtures {
		t.Run(fx.Name, func(t *testing.T) {
			CheckPi(t, open(t, fx), fx.Want)
		})
	}
}

// FixtureKinds returns the first fixture of each kind, in order: a
// kind is a name without its trailing number (session-000, session-001
// and so on are one kind; legacy-v1-linear is a kind of its own).
func FixtureKinds(fixtures []PiFixture) []PiFixture {
	return firstOfKinds(fixtures, func(fx PiFixture) string { return fx.Name })
}

// FixturePathKinds is [FixtureKinds] for the paths of fixture files: the
// first path of each kind, in order, a kind being the file's base name
// without its extension and trailing number.
func FixturePathKinds(paths []string) []string {
	return firstOfKinds(paths, func(p string) string {
		base := filepath.Base(p)
		return strings.TrimSuffix(base, filepath.Ext(base))
	})
}

// firstOfKinds returns the first of xs of each kind, in order, the kind
// of x being the name of x without its trailing number.
func firstOfKinds[T any](xs []T, name func(T) string) []T {
	seen := map[string]bool{}
	var out []T
	for _, x := range xs {
		kind := strings.TrimRight(name(x), "0123456789")
		if !seen[kind] {
			seen[kind] = true
			out = append(out, x)
		}
	}
	return out
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
	checkName(t, st, want.Name)
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
		if p.Projection != nil {
			checkProjection(t, s, p.From, p.Projection)
		}
	}
	if want.Projection != nil {
		checkProjection(t, s, "", want.Projection)
	}
	if want.ContextEntryIDs != nil {
		got, err := s.ContextEntries(ctx, sessiontree.ContextOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.ContextEntryIDs, ids(got)); diff != "" {
			t.Errorf("ContextEntries() ids (-pi +got):\n%s", diff)
		}
	}
	if want.Stats != nil {
		got, err := st.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.PiStats(t), got, cmpopts.IgnoreFields(sessiontree.Stats{}, "Entries")); diff != "" {
			t.Errorf("Stats() (-pi +got):\n%s", diff)
		}
	}
	if wantInfo, ok := want.ListInfo(); ok {
		if got := sessiontree.ListInfoOf(log); got != wantInfo {
			t.Errorf("ListInfoOf(log) = %+v; want pi's %+v", got, wantInfo)
		}
	}
	checkAppendErrors(t, s, want.AppendErrors)
	if want.Labels != nil {
		got, err := st.Labels(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.ShownLabels(t), got); diff != "" {
			t.Errorf("Labels() (-pi +got):\n%s", diff)
		}
	}
	if want.Children != nil || want.LabelTimestamps != nil {
		labels, err := st.Labels(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tree := sessiontree.BuildTree(log, labels)
		if diff := cmp.Diff(want.Children, childrenOf(tree)); want.Children != nil && diff != "" {
			t.Errorf("tree children (-pi +got):\n%s", diff)
		}
		if diff := cmp.Diff(want.LabelTimestamps, labelTimestampsOf(tree)); want.LabelTimestamps != nil && diff != "" {
			t.Errorf("tree label timestamps (-pi +got):\n%s", diff)
		}
	}
}

// checkName compares the session's name with pi's (nil: none).
func checkName(t testing.TB, st sessiontree.Storage, want *string) {
	t.Helper()
	name, err := st.Name(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case want == nil && name != "":
		t.Errorf("Name() = %+q; want none", name)
	case want != nil && name != *want:
		t.Errorf("Name() = %+q; want %+q", name, *want)
	}
}

// checkProjection compares Session.Projection at from with pi's
// buildSessionProjection entries.
func checkProjection(t testing.TB, s *sessiontree.Session, from string, want json.RawMessage) {
	t.Helper()
	p, err := s.Projection(context.Background(), sessiontree.ContextOptions{From: from})
	if err != nil {
		t.Errorf("Projection(%q): %v", from, err)
		return
	}
	var g, w any
	_ = json.Unmarshal(mustJSON(p), &g)
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("expected projection: %v", err)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("Projection(%q) (-pi +got):\n%s", from, diff)
	}
}

// checkAppendErrors replays the appends pi refused whose refusal does not
// depend on where the leaf was at the time (a missing target, a bad
// replacement) and checks that the session refuses them with pi's
// message. A target that is not editable is refused after the branch
// check, so the leaf first moves onto it. It runs last: it may move the
// leaf.
func checkAppendErrors(t testing.TB, s *sessiontree.Session, refused []PiAppendError) {
	t.Helper()
	ctx := context.Background()
	for _, r := range refused {
		if strings.Contains(r.Error, "active branch") {
			continue // depends on the leaf when pi tried it
		}
		var err error
		switch r.Op {
		case "appendContextEdit":
			if strings.HasSuffix(r.Error, "editable model content") {
				if _, err := s.MoveTo(ctx, r.TargetID, nil); err != nil {
					t.Errorf("MoveTo(%s): %v", r.TargetID, err)
				}
			}
			var repl json.RawMessage
			if string(r.Arg) != "null" {
				repl = editReplacement(r.Arg)
			}
			_, err = s.EditContext(ctx, r.TargetID, repl)
		case "appendLabelChange":
			var label string
			_ = json.Unmarshal(r.Arg, &label)
			_, err = s.SetLabel(ctx, r.TargetID, label)
		case "branch":
			_, err = s.MoveTo(ctx, r.TargetID, nil)
		case "branchWithSummary":
			_, err = s.MoveTo(ctx, r.TargetID, &sessiontree.BranchSummary{Summary: "s"})
		default:
			t.Errorf("pi refused unknown op %q", r.Op)
			continue
		}
		if err == nil || !strings.HasSuffix(err.Error(), r.Error) {
			t.Errorf("%s(%s, %s) = %v; want pi's %q", r.Op, r.TargetID, r.Arg, err, r.Error)
		}
	}
}

// editReplacement turns pi's replacement argument into EditContext's:
// the content of an object with one, else something EditContext must
// refuse as pi did.
func editReplacement(arg json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(arg, &obj) == nil {
		if c, ok := obj["content"]; ok {
			return c
		}
	}
	return json.RawMessage(`{"not":"content"}`)
}

func labelTimestampsOf(roots []*sessiontree.TreeNode) map[string]string {
	out := map[string]string{}
	stack := roots
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = append(stack[:len(stack)-1], n.Children...)
		if n.LabelTimestamp != "" {
			out[n.Entry.ID] = n.LabelTimestamp
		}
	}
	return out
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

// ReadSessionFile reads a pi session file of any version strictly through
// the JSONL reader (which migrates versions 1 and 2): its header and its
// entries, ready for a backend's AppendBatch. It fails the test on any
// error.
func ReadSessionFile(t testing.TB, path string) (sessiontree.SessionMeta, []sessiontree.Entry) {
	t.Helper()
	var meta sessiontree.SessionMeta
	var entries []sessiontree.Entry
	for rec, err := range jsonl.ReadFile(context.Background(), path, jsonl.ReadOptions{Mode: jsonl.Strict}) {
		if err != nil {
			t.Fatal(err)
		}
		switch rec.Kind {
		case jsonl.KindHeader:
			meta = rec.Header.SessionMeta
		case jsonl.KindEntry:
			entries = append(entries, rec.Entry)
		default:
			t.Fatalf("%s:%d: unexpected record kind %d", path, rec.Line, rec.Kind)
		}
	}
	return meta, entries
}

// ShownLabels returns the labels as pi shows them: LabelsShown, or for a
// file without it Labels, which must then all be strings.
func (want *PiExpected) ShownLabels(t testing.TB) map[string]string {
	t.Helper()
	if want.LabelsShown != nil {
		return want.LabelsShown
	}
	out := make(map[string]string, len(want.Labels))
	for id, l := range want.Labels {
		s, ok := l.(string)
		if !ok {
			t.Fatalf("pi's label of %s is %v, not a string, and the file has no labelsShown", id, l)
		}
		out[id] = s
	}
	return out
}

// PiRandFixtures lists the random files of dir (testdata/pirand, written
// by its gen.mjs with pi's answers), or of the folder
// $SESSIONTREE_PIRAND_DIR names instead: a larger corpus the same
// generator wrote elsewhere. With -short it keeps one file in ten, under
// the race detector one in four.
func PiRandFixtures(t testing.TB, dir string) []PiFixture {
	t.Helper()
	if d := os.Getenv("SESSIONTREE_PIRAND_DIR"); d != "" {
		dir = d
	}
	all := PiFixtures(t, dir)
	switch {
	case testing.Short():
		return oneIn(all, 10)
	case RaceEnabled:
		return oneIn(all, 4)
	}
	return all
}

// CheckSystemSnapshot compares sessiontree's replay of the system
// messages in the context at the leaf ([sessiontree.CurrentSystemMessage],
// what AppendCompaction stores) with pi's (getCurrentSystemMessage,
// stamped 1, as testdata/piedge's answers record it: null when there is
// none), as JSON values. A nil want checks nothing.
func CheckSystemSnapshot(t testing.TB, st sessiontree.Storage, want json.RawMessage) {
	t.Helper()
	if want == nil {
		return
	}
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	p, err := s.Projection(context.Background(), sessiontree.ContextOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got, w any
	if sys, ok := sessiontree.CurrentSystemMessage(p.Messages(), 1); ok {
		_ = json.Unmarshal(sys, &got)
	}
	_ = json.Unmarshal(want, &w)
	if diff := cmp.Diff(w, got); diff != "" {
		t.Errorf("CurrentSystemMessage at the leaf (-pi +got):\n%s", diff)
	}
}
