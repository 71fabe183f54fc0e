package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
)

// forkSource builds the session the fork tests cut from:
//
//	u1 ─ a1 ─ L1(label u1 "start") ─ u2 ─ a2 ─ n1(name "first name") ─ u3 ─ a3
//	      └─ u4 ─ a4 ─ L2(label u2 "mid") ─ L3(label u1 "begin") ─ n2(name "second name")  ← leaf
//
// (a leaf entry moved from a3 back to a1 before u4.) The current labels
// are u1 "begin" (first set by L1, so first in pi's label map) and u2
// "mid"; the current name is "second name".
//
// A path fork is what pi 1.6.0's createBranchedSession writes: the path
// without label entries, re-chained, then the labels of its entries; a
// name comes only from the path.
func forkSource(t *testing.T, s *store.Store) (sessiontree.DatabaseSession, map[string]sessiontree.Entry) {
	st := mustCreate(t, s, store.CreateOptions{ID: "src", Cwd: "/work/src", Metadata: json.RawMessage(`{"k":"v"}`)})
	b := newBuilder(t, st)
	e := map[string]sessiontree.Entry{}
	e["u1"] = b.user("u1", "hello")
	e["a1"] = b.assistant("a1", "hi")
	e["L1"] = b.label("L1", "u1", "start")
	e["u2"] = b.user("u2", "second")
	e["a2"] = b.assistant("a2", "second answer")
	e["n1"] = b.name("n1", "first name")
	e["u3"] = b.user("u3", "third")
	e["a3"] = b.assistant("a3", "third answer")
	e["leaf"] = b.moveTo("a1")
	e["u4"] = b.user("u4", "branch")
	e["a4"] = b.assistant("a4", "branch answer")
	e["L2"] = b.label("L2", "u2", "mid")
	e["L3"] = b.label("L3", "u1", "begin")
	e["n2"] = b.name("n2", "second name")
	return st, e
}

// row is an entry reduced to what the expectations state.
type row struct {
	ID, Parent, Type, Timestamp string
	// Target and Label for label entries, Name for session_info.
	Target, Label, Name string
	// Same is true when the entry's JSON is the source entry's exactly.
	Same bool
}

func rowsOf(log []sessiontree.Entry, src map[string]sessiontree.Entry) []row {
	var out []row
	for _, e := range log {
		r := row{ID: e.ID, Parent: e.ParentID, Type: string(e.Type), Timestamp: e.Timestamp}
		switch e.Type {
		case sessiontree.TypeLabel:
			r.Target, r.Label = e.TargetID(), sessiontree.LabelOf(e)
			r.ID = "(new)" // fresh ids
		case sessiontree.TypeSessionInfo:
			r.Name = sessiontree.NameOf(e)
			if _, ok := src[e.ID]; !ok {
				r.ID = "(new)"
			}
		}
		if s, ok := src[e.ID]; ok {
			r.Same = string(s.Raw) == string(e.Raw)
		}
		out = append(out, r)
	}
	// Parents that are fresh label ids are shown as (new) too.
	for i := range out {
		if _, ok := src[out[i].Parent]; !ok && out[i].Parent != "" {
			out[i].Parent = "(new)"
		}
	}
	return out
}

func TestFork(t *testing.T) {
	t.Parallel()
	onEngines(t, testFork)
}

func testFork(t *testing.T, openStore opener) {
	ctx := context.Background()
	s := openStore(t)
	src, e := forkSource(t, s)
	srcLog := logOf(t, src)
	ts := func(id string) string { return e[id].Timestamp }
	msg := func(id, parent string, same bool) row {
		return row{ID: id, Parent: parent, Type: "message", Timestamp: ts(id), Same: same}
	}
	labelRow := func(parent, target, label, from string) row {
		return row{ID: "(new)", Parent: parent, Type: "label", Timestamp: ts(from), Target: target, Label: label}
	}

	for _, tc := range []struct {
		name      string
		opts      store.ForkOptions
		want      []row
		wantLeaf  string // "(last)" for the last entry
		contextAt string // the source entry whose context the fork's leaf has
		wantName  string // the latest name on the path
	}{
		{
			// The path u1 a1 L1 u2 a2: L1 is left out and u2 re-parented
			// on a1; both labels apply, in pi's map order, with the
			// times of the label entries that set them; the path has no
			// name, and none is added.
			name: "at a2",
			opts: store.ForkOptions{At: "a2"},
			want: []row{
				msg("u1", "", true), msg("a1", "u1", true), msg("u2", "a1", false), msg("a2", "u2", true),
				labelRow("a2", "u1", "begin", "L3"), labelRow("(new)", "u2", "mid", "L2"),
			},
			wantLeaf: "(last)", contextAt: "a2",
		},
		{
			// Before u3 is at its parent n1: its name is the fork's.
			name: "before u3",
			opts: store.ForkOptions{Before: "u3"},
			want: []row{
				msg("u1", "", true), msg("a1", "u1", true), msg("u2", "a1", false), msg("a2", "u2", true),
				{ID: "n1", Parent: "a2", Type: "session_info", Timestamp: ts("n1"), Name: "first name", Same: true},
				labelRow("n1", "u1", "begin", "L3"), labelRow("(new)", "u2", "mid", "L2"),
			},
			wantLeaf: "(last)", contextAt: "n1", wantName: "first name",
		},
		{
			// The leaf's path u1 a1 u4 a4 L2 L3 n2: the labels are left
			// out and n2 re-parented on a4; u2 is not in the fork, so
			// only u1's label applies; n2 already names it.
			name: "active branch",
			opts: store.ForkOptions{},
			want: []row{
				msg("u1", "", true), msg("a1", "u1", true), msg("u4", "a1", true), msg("a4", "u4", true),
				{ID: "n2", Parent: "a4", Type: "session_info", Timestamp: ts("n2"), Name: "second name"},
				labelRow("n2", "u1", "begin", "L3"),
			},
			wantLeaf: "(last)", contextAt: "n2", wantName: "second name",
		},
		{
			// At an entry with no label on the path: a1 alone keeps u1's
			// label.
			name: "at a1",
			opts: store.ForkOptions{At: "a1"},
			want: []row{
				msg("u1", "", true), msg("a1", "u1", true),
				labelRow("a1", "u1", "begin", "L3"),
			},
			wantLeaf: "(last)", contextAt: "a1",
		},
		{
			// Before the root prompt: nothing at all.
			name: "before u1",
			opts: store.ForkOptions{Before: "u1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fork, err := s.Fork(ctx, "src", tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			log := logOf(t, fork)
			if diff := cmp.Diff(tc.want, rowsOf(log, e)); diff != "" {
				t.Errorf("fork log (-want +got):\n%s", diff)
			}
			leaf := leafOf(t, fork)
			if tc.wantLeaf == "(last)" && leaf != log[len(log)-1].ID {
				t.Errorf("fork leaf = %q; want its last entry %q", leaf, log[len(log)-1].ID)
			}
			if len(log) == 0 && leaf != "" {
				t.Errorf("empty fork leaf = %q; want none", leaf)
			}
			if tc.contextAt != "" {
				if diff := cmp.Diff(contextOf(t, src, tc.contextAt), contextOf(t, fork, "")); diff != "" {
					t.Errorf("fork context differs from the source's at %s (-source +fork):\n%s", tc.contextAt, diff)
				}
				st, err := sessiontree.StateAt(ctx, src, tc.contextAt)
				if err != nil {
					t.Fatal(err)
				}
				got, err := sessiontree.StateAt(ctx, fork, leaf)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(st, got); diff != "" {
					t.Errorf("fork state (-source +fork):\n%s", diff)
				}
			}
			if got := nameOf(t, fork); got != tc.wantName {
				t.Errorf("fork name = %q; want the path's %q", got, tc.wantName)
			}
			m := metaOf(t, fork)
			if m.ParentSession != "src" || m.Cwd != "/work/src" || m.ID == "src" {
				t.Errorf("fork meta = %+v; want parentSession src, cwd /work/src", m)
			}
			in, err := s.Info(ctx, m.ID)
			if err != nil {
				t.Fatal(err)
			}
			if string(in.Metadata) != `{"k":"v"}` {
				t.Errorf("fork metadata = %s; want the source's", in.Metadata)
			}
		})
	}

	t.Run("tree", func(t *testing.T) {
		fork, err := s.Fork(ctx, "src", store.ForkOptions{Tree: true, ID: "tree-fork", Cwd: "/elsewhere",
			Metadata: json.RawMessage(`null`)})
		if err != nil {
			t.Fatal(err)
		}
		log := logOf(t, fork)
		if len(log) != len(srcLog) {
			t.Fatalf("tree fork has %d entries; want %d", len(log), len(srcLog))
		}
		for i := range log {
			if string(log[i].Raw) != string(srcLog[i].Raw) {
				t.Errorf("tree fork entry %d = %s; want %s", i, log[i].Raw, srcLog[i].Raw)
			}
		}
		if leafOf(t, fork) != "n2" || nameOf(t, fork) != "second name" ||
			!cmp.Equal(labelsOf(t, fork), map[string]string{"u1": "begin", "u2": "mid"}) {
			t.Errorf("tree fork leaf %q name %q labels %v; want n2, second name, u1 begin u2 mid",
				leafOf(t, fork), nameOf(t, fork), labelsOf(t, fork))
		}
		if m := metaOf(t, fork); m.ID != "tree-fork" || m.Cwd != "/elsewhere" || m.ParentSession != "src" {
			t.Errorf("tree fork meta = %+v", m)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		before := countSessions(t, s)
		for _, tc := range []struct {
			opts store.ForkOptions
			want error
		}{
			{store.ForkOptions{Before: "a2"}, store.ErrNotUserMessage},
			{store.ForkOptions{Before: "L1"}, store.ErrNotUserMessage},
			{store.ForkOptions{Before: "nope"}, sessiontree.ErrNotFound},
			{store.ForkOptions{At: "nope"}, sessiontree.ErrNotFound},
			{store.ForkOptions{At: "a1", Tree: true}, store.ErrBadOptions},
			{store.ForkOptions{ID: "src"}, sessiontree.ErrConflict},
			{store.ForkOptions{Tree: true, ID: "src"}, sessiontree.ErrConflict},
		} {
			// A refusal of the caller's options is no storage failure
			// (which a caller would try again).
			if _, err := s.Fork(ctx, "src", tc.opts); !errors.Is(err, tc.want) || errors.Is(err, sessiontree.ErrStorage) {
				t.Errorf("Fork(%+v) = %v; want %v, not ErrStorage", tc.opts, err, tc.want)
			}
		}
		if _, err := s.Fork(ctx, "nosuch", store.ForkOptions{}); !errors.Is(err, sessiontree.ErrNotFound) {
			t.Errorf("Fork(missing session) = %v; want ErrNotFound", err)
		}
		if after := countSessions(t, s); after != before {
			t.Errorf("refused forks left %d sessions; want %d", after, before)
		}
	})

	// The source is untouched.
	if diff := cmp.Diff(ids(srcLog), ids(logOf(t, src))); diff != "" {
		t.Errorf("source log changed:\n%s", diff)
	}
	if leafOf(t, src) != "n2" {
		t.Errorf("source leaf = %q; want n2", leafOf(t, src))
	}
	if err := s.Check(ctx, "src"); err != nil {
		t.Error(err)
	}
}

// A compaction whose kept entry is a label that a path fork leaves out
// keeps the entry after it instead, as pi does.
func TestForkCompactionKeptLabel(t *testing.T) {
	t.Parallel()
	onEngines(t, testForkCompactionKeptLabel)
}

func testForkCompactionKeptLabel(t *testing.T, openStore opener) {
	ctx := context.Background()
	s := openStore(t)
	st := mustCreate(t, s, store.CreateOptions{ID: "c"})
	b := newBuilder(t, st)
	b.user("u1", "one")
	b.label("L1", "u1", "x")
	b.user("u2", "two")
	c := b.add(sessiontree.TypeCompaction, "c1", `"summary":"sum","firstKeptEntryId":"L1","tokensBefore":10`)
	b.user("u3", "three")
	fork, err := s.Fork(ctx, "c", store.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	log := logOf(t, fork)
	if got := ids(log)[:4]; !slices.Equal(got, []string{"u1", "u2", "c1", "u3"}) {
		t.Fatalf("fork ids = %v; want u1 u2 c1 u3 then the label", ids(log))
	}
	fc := log[2]
	want := strings.Replace(string(c.Raw), `"firstKeptEntryId":"L1"`, `"firstKeptEntryId":"u2"`, 1)
	if string(fc.Raw) != want {
		t.Errorf("forked compaction = %s; want %s", fc.Raw, want)
	}
	if log[1].ParentID != "u1" {
		t.Errorf("u2's parent = %q; want u1", log[1].ParentID)
	}
	if diff := cmp.Diff(contextOf(t, st, "u3"), contextOf(t, fork, "")); diff != "" {
		t.Errorf("context (-source +fork):\n%s", diff)
	}
}

func countSessions(t *testing.T, s *store.Store) int {
	t.Helper()
	p, err := s.List(context.Background(), store.ListOptions{Limit: store.MaxListLimit})
	if err != nil {
		t.Fatal(err)
	}
	return len(p.Sessions)
}

// forkFixture is a fork pi 1.6.0 wrote: the path (lines 2 to 12, ending
// at 44a59e33), then its three label entries with their original
// timestamps (lines 13 to 15, older than their parents), then one more
// message pi appended under the last label.
const forkFixture = "../testdata/pi1/fork-00.jsonl"

// Forking pi's own fork gives pi's shape: forked at the end of its path,
// the same lines byte for byte, label ids aside; forked at the message
// after the labels, that message re-chained onto the path and the labels
// after it.
func TestForkAsPi(t *testing.T) {
	t.Parallel()
	onEngines(t, testForkAsPi)
}

func testForkAsPi(t *testing.T, openStore opener) {
	ctx := context.Background()
	s := openStore(t)
	f := mustImport(t, s, []string{forkFixture}, store.ImportOptions{Mode: jsonl.Strict}).Files[0]
	if f.Outcome != store.OutcomeNew {
		t.Fatalf("import %s: %+v", forkFixture, f)
	}
	file := lines(t, forkFixture)
	for i := range file {
		file[i] = strings.TrimSuffix(file[i], "\n")
	}
	path, labelLines, after := file[1:12], file[12:15], file[15]
	src, err := s.OpenSession(ctx, f.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		at   string
		want []string // the fork's lines before its label entries
	}{
		{"at the end of the path", "44a59e33", path},
		{"after the labels", "b065c04d", append(slices.Clone(path), strings.Replace(after, `"parentId":"6023ccba"`, `"parentId":"44a59e33"`, 1))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fork, err := s.Fork(ctx, f.SessionID, store.ForkOptions{At: tc.at})
			if err != nil {
				t.Fatal(err)
			}
			log := logOf(t, fork)
			if len(log) != len(tc.want)+len(labelLines) {
				t.Fatalf("fork has %d entries; want %d and %d labels", len(log), len(tc.want), len(labelLines))
			}
			var got []string
			for _, e := range log {
				got = append(got, string(e.Raw))
			}
			// pi's label lines with the fork's fresh ids, chained after
			// the path.
			want := slices.Clone(tc.want)
			parent := log[len(tc.want)-1].ID
			for i, l := range labelLines {
				e := log[len(tc.want)+i]
				var orig struct{ ID, ParentID string }
				if err := json.Unmarshal([]byte(l), &orig); err != nil {
					t.Fatal(err)
				}
				l = strings.Replace(l, `"id":"`+orig.ID+`"`, `"id":"`+e.ID+`"`, 1)
				want = append(want, strings.Replace(l, `"parentId":"`+orig.ParentID+`"`, `"parentId":"`+parent+`"`, 1))
				parent = e.ID
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("fork lines (-pi's shape +fork):\n%s", diff)
			}
			if leaf := leafOf(t, fork); leaf != log[len(log)-1].ID {
				t.Errorf("fork leaf = %q; want the last label entry", leaf)
			}
			if diff := cmp.Diff(contextOf(t, src, tc.at), contextOf(t, fork, "")); diff != "" {
				t.Errorf("fork context (-source at %s +fork):\n%s", tc.at, diff)
			}
			if diff := cmp.Diff(labelsOf(t, src), labelsOf(t, fork)); diff != "" {
				t.Errorf("fork labels (-source +fork):\n%s", diff)
			}
		})
	}
}

// Labels are written again as written, the cleared ones not at all, in
// the order of pi's label map: relabelling keeps a target's place,
// clearing and labelling again moves it to the end.
func TestForkLabelOrder(t *testing.T) {
	t.Parallel()
	onEngines(t, testForkLabelOrder)
}

func testForkLabelOrder(t *testing.T, openStore opener) {
	ctx := context.Background()
	s := openStore(t)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "l"}))
	b.user("u1", "one")
	b.user("u2", "two")
	b.user("u3", "three")
	b.label("L1", "u1", "  spaced  ")
	b.label("L2", "u2", "second")
	b.label("L3", "u3", "third")
	b.label("L4", "u1", "")      // cleared: u1 leaves the map
	b.label("L5", "u1", " back") // and comes back at the end
	b.label("L6", "u2", "again") // relabelled in place
	b.label("L7", "u3", "")      // cleared for good
	b.user("u4", "four")
	fork, err := s.Fork(ctx, "l", store.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range logOf(t, fork) {
		if e.Type == sessiontree.TypeLabel {
			got = append(got, e.TargetID()+"="+sessiontree.LabelOf(e)+"@"+e.Timestamp)
		}
	}
	log := logOf(t, fork)
	ts := func(i int) string { return sessiontree.FormatTime(time.Date(2026, 3, 1, 10, 0, i, 0, time.UTC)) }
	want := []string{"u2=again@" + ts(9), "u1= back@" + ts(8)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fork label entries (-want +got):\n%s", diff)
	}
	if ids := ids(log[:4]); !slices.Equal(ids, []string{"u1", "u2", "u3", "u4"}) || log[3].ParentID != "u3" {
		t.Errorf("fork path = %v, u4 under %q; want u1 u2 u3 u4 re-chained", ids, log[3].ParentID)
	}
}

// A path fork writes each label again as its label entry wrote it, as
// pi's createBranchedSession does (it copies the label's value): a label
// that is not a string stays a number or a boolean, and a string keeps a
// NUL (the label text the store derives takes it as a space). Labels from
// testdata/piedge/labels-nonstring, plus a NUL.
func TestForkLabelValues(t *testing.T) {
	t.Parallel()
	onEngines(t, testForkLabelValues)
}

func testForkLabelValues(t *testing.T, openStore opener) {
	ctx := context.Background()
	s := openStore(t)
	src := lines(t, "../testdata/piedge/labels-nonstring.jsonl")
	last := src[len(src)-1]
	src[len(src)-1] = `{"type":"label","id":"l7","parentId":"l6","timestamp":"2026-12-01T10:00:11.500Z","targetId":"a2","label":"a\u0000b"}` + "\n"
	src = append(src, strings.Replace(last, `"parentId":"l6"`, `"parentId":"l7"`, 1))
	path := filepath.Join(t.TempDir(), "labels.jsonl")
	writeFile(t, path, strings.Join(src, ""))
	f := mustImport(t, s, []string{path}, store.ImportOptions{Mode: jsonl.Strict}).Files[0]
	fork, err := s.Fork(ctx, f.SessionID, store.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range logOf(t, fork) {
		if e.Type == sessiontree.TypeLabel {
			v, _ := e.Field("label")
			got = append(got, e.TargetID()+"="+string(v))
		}
	}
	want := []string{"u1=-0.000001", "a1=true", "u2=1.5e+300", `a2="a\u0000b"`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fork label values (-as written +fork):\n%s", diff)
	}
}
