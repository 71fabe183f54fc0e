package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/storetest"
)

const unknownHeader = `{"type":"session","version":3,"id":"0190a000-0000-7000-8000-00000000f001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}`

// unknownFile is a pi file with entries of types no version of this
// project knows, nested fields and keys in an unusual order among them,
// on two branches; n more user messages follow, chained on the last line.
func unknownFile(n int) string {
	ts := `"timestamp":"2026-01-01T00:00:01.000Z"`
	user := func(id, parent string) string {
		return `{"type":"message","id":"` + id + `","parentId":"` + parent + `",` + ts + `,"message":{"role":"user","content":"` + id + `","timestamp":1}}`
	}
	ls := []string{
		unknownHeader,
		`{"type":"message","id":"u0000000","parentId":null,` + ts + `,"message":{"role":"user","content":"root","timestamp":1}}`,
		`{"type":"future_thing","id":"f1000000","parentId":"u0000000",` + ts + `,"payload":{"deep":[1,2.50,{"x":null,"y":"\u00e9\ud83d\ude42"}],"n":1e3}}`,
		user("u1000000", "f1000000"),
		`{"id":"o1000000","type":"other_thing","timestamp":"2026-01-01T00:00:02.000Z","parentId":"u0000000","v":[[],{}]}`,
		`{"type":"future_thing","id":"f2000000","parentId":"u1000000",` + ts + `,"payload":"<tag>&amp;"}`,
	}
	parent := "f2000000"
	for i := range n {
		id := fmt.Sprintf("m%07d", i)
		ls = append(ls, user(id, parent))
		parent = id
	}
	return strings.Join(ls, "\n") + "\n"
}

var wantUnknown = sessiontree.UnknownTypes{{Type: "future_thing", Count: 2}, {Type: "other_thing", Count: 1}}

// An imported file with unknown types exports byte for byte, in both
// forms, and its result counts them once, in one pass and in two.
func TestImportUnknownTypes(t *testing.T) {
	t.Parallel()
	onEngines(t, testImportUnknownTypes)
}

func testImportUnknownTypes(t *testing.T, openStore opener) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		chunk int // entries per chunk; 0 for the default (one pass)
	}{{"one pass", 0}, {"two passes", 3}} {
		t.Run(tc.name, func(t *testing.T) {
			chunked := func(o store.ImportOptions) store.ImportOptions { return store.WithImportChunk(o, tc.chunk) }
			s := openStore(t)
			path := filepath.Join(t.TempDir(), "session.jsonl")
			content := unknownFile(4)
			writeFile(t, path, content)
			f := mustImport(t, s, []string{path}, chunked(store.ImportOptions{Mode: jsonl.Strict})).Files[0]
			if f.Outcome != store.OutcomeNew || f.Err != nil || len(f.Problems) != 0 || f.Entries != 9 {
				t.Fatalf("import: %+v; want new, 9 entries, no problems", f)
			}
			if diff := cmp.Diff(wantUnknown, f.Unknown); diff != "" {
				t.Errorf("FileResult.Unknown (-want +got):\n%s", diff)
			}
			for _, forPi := range []bool{false, true} {
				if got := exportString(t, s, f.SessionID, store.ExportOptions{ForPi: forPi}); got != content {
					t.Errorf("export (for pi %v):\n%s\nwant the file byte for byte:\n%s", forPi, got, content)
				}
			}
			st, err := s.OpenSession(ctx, f.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			if got := leafOf(t, st); got != "m0000003" {
				t.Errorf("leaf = %q; want the last line's m0000003", got)
			}

			// The file grows: only the new part is counted.
			appendFile(t, path, `{"type":"future_thing","id":"f3000000","parentId":"m0000003","timestamp":"2026-01-01T00:00:03.000Z"}`+"\n")
			g := mustImport(t, s, []string{path}, chunked(store.ImportOptions{})).Files[0]
			want := sessiontree.UnknownTypes{{Type: "future_thing", Count: 1}}
			if g.Outcome != store.OutcomeGrown || g.Entries != 1 || !cmp.Equal(g.Unknown, want) {
				t.Errorf("import of the grown file: %+v; want grown, 1 entry, Unknown %v", g, want)
			}
			if u := mustImport(t, s, []string{path}, chunked(store.ImportOptions{})).Files[0]; u.Outcome != store.OutcomeUnchanged || u.Unknown != nil {
				t.Errorf("import of the unchanged file: %+v; want unchanged, no Unknown", u)
			}
		})
	}
}

// In lenient mode a skipped line of an unknown type is a problem, not
// an entry: it is not counted as unknown.
func TestImportUnknownTypeSkipped(t *testing.T) {
	t.Parallel()
	onEngines(t, testImportUnknownTypeSkipped)
}

func testImportUnknownTypeSkipped(t *testing.T, openStore opener) {
	s := openStore(t)
	path := filepath.Join(t.TempDir(), "session.jsonl")
	writeFile(t, path, unknownFile(0)+`{"type":"future_thing","id":"f9000000","parentId":"nowhere","timestamp":"2026-01-01T00:00:03.000Z"}`+"\n")
	f := mustImport(t, s, []string{path}, store.ImportOptions{Mode: jsonl.Lenient}).Files[0]
	if f.Outcome != store.OutcomeNew || len(f.Problems) != 1 || !cmp.Equal(f.Unknown, wantUnknown) {
		t.Errorf("lenient import: %+v; want one problem and Unknown %v", f, wantUnknown)
	}
	if f := mustImport(t, s, []string{writeDamaged(t)}, store.ImportOptions{}).Files[0]; f.Outcome != store.OutcomeFailed || f.Unknown != nil {
		t.Errorf("failed import: %+v; want failed, no Unknown", f)
	}
}

// writeDamaged writes a file with unknown types that the default mode
// refuses (a line that is not JSON after them).
func writeDamaged(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "damaged.jsonl")
	writeFile(t, path, strings.Replace(unknownFile(1), unknownHeader, strings.Replace(unknownHeader, "f001", "f002", 1), 1)+"not json\n")
	return path
}

// Warnings names each session with unknown types once, with its file.
func TestWarnings(t *testing.T) {
	t.Parallel()
	onEngines(t, testWarnings)
}

func testWarnings(t *testing.T, openStore opener) {
	ctx := context.Background()
	s := openStore(t)
	path := filepath.Join(t.TempDir(), "session.jsonl")
	writeFile(t, path, unknownFile(2))
	f := mustImport(t, s, []string{path}, store.ImportOptions{}).Files[0]
	plain := mustCreate(t, s, store.CreateOptions{ID: "plain"})
	newBuilder(t, plain).user("p1", "nothing unusual")
	made := mustCreate(t, s, store.CreateOptions{ID: "made"})
	b := newBuilder(t, made)
	b.user("x1", "hi")
	b.add("future_thing", "x2", `"k":{"n":[1]}`)

	got, err := s.Warnings(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Warning{
		{SessionID: f.SessionID, File: path, Unknown: wantUnknown},
		{SessionID: "made", Unknown: sessiontree.UnknownTypes{{Type: "future_thing", Count: 1}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Warnings() (-want +got):\n%s", diff)
	}
	if len(got) == 2 && (got[0].Where() != path || got[1].Where() != "session made") {
		t.Errorf("Where() = %q, %q; want the file, then \"session made\"", got[0].Where(), got[1].Where())
	}
	for id, n := range map[string]int{"plain": 0, "made": 1, f.SessionID: 1} {
		if w, err := s.Warnings(ctx, id); err != nil || len(w) != n {
			t.Errorf("Warnings(%q) = %v, %v; want %d", id, w, err, n)
		}
	}
	if _, err := s.Warnings(ctx, "nosuch"); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("Warnings(missing) = %v; want ErrNotFound", err)
	}
	// A warning is not damage.
	if err := s.Check(ctx, ""); err != nil {
		t.Errorf("Check() = %v; want no problem", err)
	}
}

// The files pi 1.6.0 wrote import without a warning (usage and
// context_edit are known types) and export byte for byte; the export
// reads in the JSONL backend with pi's answers.
func TestImportExportPi1(t *testing.T) {
	t.Parallel()
	onEngines(t, testImportExportPi1)
}

func testImportExportPi1(t *testing.T, openStore opener) {
	ctx := context.Background()
	s := openStore(t)
	var fixtures []storetest.PiFixture
	for _, fx := range storetest.PiFixtures(t, "../testdata/pi1") {
		// Under the race detector, the small files only.
		if !storetest.RaceEnabled || strings.HasPrefix(fx.Name, "tiny-") || strings.HasPrefix(fx.Name, "fork-") || strings.HasPrefix(fx.Name, "edited-") {
			fixtures = append(fixtures, fx)
		}
	}
	rep := mustImport(t, s, fixturePaths(fixtures), store.ImportOptions{Mode: jsonl.Strict})
	out := t.TempDir()
	for i, fx := range fixtures {
		t.Run(fx.Name, func(t *testing.T) {
			f := rep.Files[i]
			if f.Outcome != store.OutcomeNew || f.Entries != fx.Want.EntryCount || len(f.Problems) != 0 || f.Unknown != nil {
				t.Fatalf("import: %+v; want new with %d entries, no problems or unknown types", f, fx.Want.EntryCount)
			}
			path := filepath.Join(out, fx.Name+".jsonl")
			if err := s.ExportFile(ctx, f.SessionID, path, store.ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			orig, err := os.ReadFile(fx.Path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(orig, got) {
				t.Errorf("export differs from pi's file")
			}
			// Writable: the checker replays appends pi refused.
			st, err := jsonl.Open(ctx, path, jsonl.Options{Mode: jsonl.Strict})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			storetest.CheckPi(t, st, fx.Want)
		})
	}
	if w, err := s.Warnings(ctx, ""); err != nil || len(w) != 0 {
		t.Errorf("Warnings() = %v, %v; want none", w, err)
	}
}
