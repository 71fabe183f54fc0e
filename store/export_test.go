package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/storetest"
)

func openJSONL(t testing.TB, path string) *jsonl.Storage {
	t.Helper()
	st, err := jsonl.Open(context.Background(), path, jsonl.Options{ReadOnly: true, Mode: jsonl.Strict})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Every pi fixture, imported and exported, opens in the JSONL backend
// with pi's answers; a version-3 file comes back byte for byte.
func TestExportRoundTrip(t *testing.T) {
	t.Parallel()
	onEngines(t, testExportRoundTrip)
}

func testExportRoundTrip(t *testing.T, openStore opener) {
	ctx := context.Background()
	s := openStore(t)
	fixtures := piFixtures(t)
	rep := mustImport(t, s, fixturePaths(fixtures), store.ImportOptions{})
	out := t.TempDir()
	for i, fx := range fixtures {
		t.Run(fx.Name, func(t *testing.T) {
			path := filepath.Join(out, fx.Name+".jsonl")
			if err := s.ExportFile(ctx, rep.Files[i].SessionID, path, store.ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("exported file mode %v; want 0600", fi.Mode().Perm())
			}
			storetest.CheckPi(t, openJSONL(t, path), fx.Want)
			orig, err := os.ReadFile(fx.Path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(orig[:bytes.IndexByte(orig, '\n')], []byte(`"version":3`)) && !bytes.Equal(orig, got) {
				t.Errorf("export differs from pi's file")
			}
		})
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

// movedSession is u1 a1 u2 a2, a move back to a1, u3 a3, and a move to
// a2, whose leaf (a2) has no children but is not the last entry.
func movedSession(t *testing.T, s *store.Store, id string) *builder {
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: id, Cwd: "/w"}))
	b.user("u1", "one")
	b.assistant("a1", "one back")
	b.user("u2", "two")
	b.assistant("a2", "two back")
	b.moveTo("a1")
	b.user("u3", "three")
	b.assistant("a3", "three back")
	b.label("l1", "a1", "fork point")
	b.moveTo("a2")
	return b
}

func exportString(t *testing.T, s *store.Store, id string, opts store.ExportOptions) string {
	t.Helper()
	var buf bytes.Buffer
	if err := s.Export(context.Background(), id, &buf, opts); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func lineIDs(t *testing.T, file string) (ids, types []string) {
	t.Helper()
	for _, l := range strings.Split(strings.TrimSuffix(file, "\n"), "\n")[1:] {
		e, err := sessiontree.DecodeEntry([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		ids, types = append(ids, e.ID), append(types, string(e.Type))
	}
	return ids, types
}

// A session whose leaf moved exports its leaf entries and reopens on the
// same leaf.
func TestExportLeafEntries(t *testing.T) {
	t.Parallel()
	onEngines(t, testExportLeafEntries)
}

func testExportLeafEntries(t *testing.T, openStore opener) {
	ctx := context.Background()
	s := openStore(t)
	b := movedSession(t, s, "moved")
	path := filepath.Join(t.TempDir(), "moved.jsonl")
	if err := s.ExportFile(ctx, "moved", path, store.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	got := openJSONL(t, path)
	if diff := cmp.Diff(ids(logOf(t, b.st)), ids(logOf(t, got))); diff != "" {
		t.Errorf("exported log (-store +file):\n%s", diff)
	}
	leaves := 0
	for _, e := range logOf(t, got) {
		if e.Type == sessiontree.TypeLeaf {
			leaves++
		}
	}
	if leaves != 2 || leafOf(t, got) != "a2" {
		t.Errorf("exported file has %d leaf entries and leaf %q; want 2 and a2", leaves, leafOf(t, got))
	}
	if diff := cmp.Diff(contextOf(t, b.st, ""), contextOf(t, got, "")); diff != "" {
		t.Errorf("context (-store +file):\n%s", diff)
	}
	// Writing over an existing file replaces it whole.
	if err := os.WriteFile(path, []byte("old content that is longer than nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.ExportFile(ctx, "moved", path, store.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != exportString(t, s, "moved", store.ExportOptions{}) {
		t.Errorf("ExportFile over an existing file: content is not the export")
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v; want 0600", fi.Mode().Perm())
	}
	if err := s.ExportFile(ctx, "nosuch", path, store.ExportOptions{}); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("ExportFile(missing) = %v; want ErrNotFound", err)
	}
}

// piLoad reads a file as the released pi does: every line indexed by id
// first, the leaf on the last line, labels in file order.
func piLoad(t *testing.T, file string) (byID map[string]sessiontree.Entry, leaf string, labels map[string]string) {
	t.Helper()
	byID, labels = map[string]sessiontree.Entry{}, map[string]string{}
	for _, l := range strings.Split(strings.TrimSuffix(file, "\n"), "\n")[1:] {
		e, err := sessiontree.DecodeEntry([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		byID[e.ID] = e
		leaf = e.ID
		if e.Type == sessiontree.TypeLabel {
			if l := sessiontree.LabelOf(e); l != "" {
				labels[e.TargetID()] = l
			} else {
				delete(labels, e.TargetID())
			}
		}
	}
	return byID, leaf, labels
}

// piContext builds the context at leaf the way pi does, from a file read
// by piLoad.
func piContext(t *testing.T, byID map[string]sessiontree.Entry, leaf string) []string {
	t.Helper()
	ctx := context.Background()
	get := func(id string) (sessiontree.Entry, bool) { e, ok := byID[id]; return e, ok }
	path, err := sessiontree.WalkPath(ctx, leaf, false, len(byID), get)
	if err != nil {
		t.Fatal(err)
	}
	full, err := sessiontree.WalkPath(ctx, leaf, true, len(byID), get)
	if err != nil {
		t.Fatal(err)
	}
	st := sessiontree.DefaultState()
	for _, e := range full {
		st.Apply(e)
	}
	c, err := sessiontree.BuildContext(ctx, path, st, sessiontree.ContextOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(c.Messages))
	for i, m := range c.Messages {
		out[i] = string(m)
	}
	return out
}

func TestExportForPi(t *testing.T) {
	t.Parallel()
	onEngines(t, testExportForPi)
}

func testExportForPi(t *testing.T, openStore opener) {
	ctx := context.Background()
	s := openStore(t)

	t.Run("leaf without children", func(t *testing.T) {
		b := movedSession(t, s, "tip")
		file := exportString(t, s, "tip", store.ExportOptions{ForPi: true})
		gotIDs, types := lineIDs(t, file)
		want := []string{"u1", "a1", "u2", "u3", "a3", "l1", "a2"}
		if !slices.Equal(gotIDs, want) || slices.Contains(types, "leaf") {
			t.Errorf("for-pi lines %v (%v); want %v, no leaf entries", gotIDs, types, want)
		}
		// No forward reference: every reader takes it, and resumes at a2.
		path := filepath.Join(t.TempDir(), "tip.jsonl")
		writeFile(t, path, file)
		st := openJSONL(t, path)
		if leafOf(t, st) != "a2" {
			t.Errorf("JSONL backend resumes at %q; want a2", leafOf(t, st))
		}
		if diff := cmp.Diff(contextOf(t, b.st, ""), contextOf(t, st, "")); diff != "" {
			t.Errorf("context (-store +file):\n%s", diff)
		}
		byID, leaf, labels := piLoad(t, file)
		if diff := cmp.Diff(contextOf(t, b.st, ""), piContext(t, byID, leaf)); diff != "" {
			t.Errorf("pi's context (-store +file):\n%s", diff)
		}
		if !cmp.Equal(labels, labelsOf(t, b.st)) {
			t.Errorf("pi's labels %v; want %v", labels, labelsOf(t, b.st))
		}
	})

	t.Run("leaf with children", func(t *testing.T) {
		b := movedSession(t, s, "back")
		b.moveTo("a1")
		file := exportString(t, s, "back", store.ExportOptions{ForPi: true})
		gotIDs, _ := lineIDs(t, file)
		if want := []string{"u1", "u2", "a2", "u3", "a3", "l1", "a1"}; !slices.Equal(gotIDs, want) {
			t.Errorf("for-pi lines %v; want %v", gotIDs, want)
		}
		// pi indexes by id before linking, so it reads the forward
		// references and resumes at a1.
		byID, leaf, labels := piLoad(t, file)
		if leaf != "a1" {
			t.Errorf("pi resumes at %q; want a1", leaf)
		}
		if diff := cmp.Diff(contextOf(t, b.st, ""), piContext(t, byID, leaf)); diff != "" {
			t.Errorf("pi's context (-store +file):\n%s", diff)
		}
		if !cmp.Equal(labels, labelsOf(t, b.st)) {
			t.Errorf("pi's labels %v; want %v", labels, labelsOf(t, b.st))
		}
		// This project's JSONL reader refuses a parent after its child.
		path := filepath.Join(t.TempDir(), "back.jsonl")
		writeFile(t, path, file)
		_, err := jsonl.Open(ctx, path, jsonl.Options{ReadOnly: true})
		var le *jsonl.LineError
		if !errors.As(err, &le) || le.Line != 3 || !strings.Contains(err.Error(), "comes after its child") {
			t.Errorf("jsonl.Open(forward references) = %v; want the line of u2 refused", err)
		}
		// The normal export of the same session reads everywhere.
		writeFile(t, path, exportString(t, s, "back", store.ExportOptions{}))
		if st := openJSONL(t, path); leafOf(t, st) != "a1" {
			t.Errorf("normal export reopens at %q; want a1", leafOf(t, st))
		}
	})

	t.Run("null leaf", func(t *testing.T) {
		b := movedSession(t, s, "null")
		b.moveTo("")
		if err := s.Export(ctx, "null", &bytes.Buffer{}, store.ExportOptions{ForPi: true}); !errors.Is(err, store.ErrNullLeaf) {
			t.Errorf("Export(ForPi, null leaf) = %v; want ErrNullLeaf", err)
		}
		mustCreate(t, s, store.CreateOptions{ID: "empty", Cwd: "/w"})
		file := exportString(t, s, "empty", store.ExportOptions{ForPi: true})
		if strings.Count(file, "\n") != 1 || !strings.HasPrefix(file, `{"type":"session","version":3,"id":"empty",`) {
			t.Errorf("export of an empty session = %q; want the header alone", file)
		}
	})
}

// An exported file for pi keeps each leaf entry that another entry names
// as its parent, whether that child comes right after it or later in the
// file (the PostgreSQL engine finds the two kinds by different indexes),
// and drops the others.
func TestExportForPiLeafEntryParents(t *testing.T) {
	t.Parallel()
	onEngines(t, testExportForPiLeafEntryParents)
}

func testExportForPiLeafEntryParents(t *testing.T, openStore opener) {
	s := openStore(t)
	ts := `"timestamp":"2026-01-01T00:00:01.000Z"`
	msg := func(id, parent string) string {
		return `{"type":"message","id":"` + id + `","parentId":"` + parent + `",` + ts + `,"message":{"role":"user","content":"` + id + `","timestamp":1}}`
	}
	leaf := func(id, parent, target string) string {
		return `{"type":"leaf","id":"` + id + `","parentId":"` + parent + `",` + ts + `,"targetId":"` + target + `"}`
	}
	lines := []string{
		`{"type":"session","version":3,"id":"0190a000-0000-7000-8000-00000000f002",` + ts + `,"cwd":"/p"}`,
		`{"type":"message","id":"u1","parentId":null,` + ts + `,"message":{"role":"user","content":"root","timestamp":1}}`,
		leaf("la", "u1", "u1"),
		msg("c1", "la"), // right after its leaf entry
		leaf("lb", "c1", "u1"),
		msg("u2", "u1"),
		msg("c2", "lb"), // not right after it
		leaf("lc", "c2", "c2"),
		msg("m3", "c2"),
	}
	path := filepath.Join(t.TempDir(), "leaves.jsonl")
	writeFile(t, path, strings.Join(lines, "\n")+"\n")
	f := mustImport(t, s, []string{path}, store.ImportOptions{}).Files[0]
	if f.Err != nil || f.Entries != 8 {
		t.Fatalf("import: %+v; want 8 entries", f)
	}
	got, _ := lineIDs(t, exportString(t, s, f.SessionID, store.ExportOptions{ForPi: true}))
	if want := []string{"u1", "la", "c1", "lb", "u2", "c2", "m3"}; !slices.Equal(got, want) {
		t.Errorf("for-pi lines %v; want %v (lc, named by nothing, dropped)", got, want)
	}
}

// Each random pi file of testdata/pirand (CRLF, blank lines and lines of
// white space among them), imported as pi reads it and exported, is the
// file again but for what Export's doc says reading normalises: line
// ends, lines of white space alone, white space around an entry. The
// header is pi's own (pi writes those members only).
func TestExportPiRand(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	fixtures := storetest.PiRandFixtures(t, filepath.Join("..", "testdata", "pirand"))
	rep := mustImport(t, s, fixturePaths(fixtures), store.ImportOptions{Mode: jsonl.Lenient})
	for i, fx := range fixtures {
		orig, err := os.ReadFile(fx.Path)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, l := range strings.Split(string(orig), "\n") {
			if l = strings.Trim(l, " \t\r"); l != "" {
				want = append(want, l)
			}
		}
		got := exportString(t, s, rep.Files[i].SessionID, store.ExportOptions{})
		if diff := cmp.Diff(want, strings.Split(strings.TrimSuffix(got, "\n"), "\n")); diff != "" {
			t.Errorf("%s: export (-pi's lines +export):\n%s", fx.Name, diff)
		}
	}
}

// An entry appended through the Go API with line breaks between its JSON
// tokens (a pretty-printed message or custom data) is stored as it came,
// and exported on one line, each break a space, as the JSONL backend
// writes it: a break inside the line would cut the entry in two, which
// pi skips as two bad lines and this project's reader refuses.
func TestExportEntryWithLineBreaks(t *testing.T) {
	t.Parallel()
	onEngines(t, testExportEntryWithLineBreaks)
}

func testExportEntryWithLineBreaks(t *testing.T, openStore opener) {
	ctx := context.Background()
	s := openStore(t)
	st := mustCreate(t, s, store.CreateOptions{ID: "nl", Cwd: "/w"})
	ss := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	if _, err := ss.AppendMessage(ctx, json.RawMessage("{\n  \"role\": \"user\",\r\n  \"content\": \"two\\nlines\"\n}")); err != nil {
		t.Fatal(err)
	}
	if _, err := ss.AppendCustom(ctx, "c", json.RawMessage("{\"a\": [1,\n2]}")); err != nil {
		t.Fatal(err)
	}
	stored := logOf(t, st)
	if !bytes.Contains(stored[1].Raw, []byte("[1,\n2]")) {
		t.Errorf("stored %s; want it as it came", stored[1].Raw)
	}
	path := filepath.Join(t.TempDir(), "nl.jsonl")
	if err := s.ExportFile(ctx, "nl", path, store.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	got := logOf(t, openJSONL(t, path))
	if len(got) != len(stored) {
		t.Fatalf("export reads back %d entries; want %d", len(got), len(stored))
	}
	for i := range got {
		if want := bytes.ReplaceAll(stored[i].Raw, []byte("\n"), []byte(" ")); !bytes.Equal(got[i].Raw, want) {
			t.Errorf("entry %d exported as %q; want %q", i, got[i].Raw, want)
		}
	}
}
