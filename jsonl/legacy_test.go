package jsonl_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/storetest"
)

// copyFixture copies a testdata/pi file to a temporary directory.
func copyFixture(t testing.TB, name string) string {
	t.Helper()
	return copyFixtureFrom(t, filepath.Join("..", "testdata", "pi"), name)
}

// copyFixtureFrom copies file name of dir to a temporary directory.
func copyFixtureFrom(t testing.TB, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o640); err != nil {
		t.Fatal(err)
	}
	return path
}

func contextOf(t testing.TB, st sessiontree.Storage) sessiontree.Context {
	t.Helper()
	c, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).Context(context.Background(), sessiontree.ContextOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLegacyV1Migration(t *testing.T) {
	ctx := context.Background()
	path := copyFixture(t, "legacy-v1-compaction.jsonl")
	st := open(t, path, jsonl.Options{ReadOnly: true, Mode: jsonl.Strict})
	if v := st.Report().Version; v != 1 {
		t.Errorf("Report().Version = %d; want 1", v)
	}
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range log {
		if len(e.ID) != 8 || (i == 0) != (e.ParentID == "") || i > 0 && e.ParentID != log[i-1].ID {
			t.Errorf("entry %d: id %q parent %q; want 8-character ids linked in file order", i+1, e.ID, e.ParentID)
		}
		if !strings.HasPrefix(string(e.Raw), `{"type":"`+string(e.Type)+`","id":"`+e.ID+`","parentId":`) {
			t.Errorf("entry %d Raw = %s; want the common fields first", i+1, e.Raw)
		}
	}
	// firstKeptEntryIndex 3 counts the header as 0: the third entry.
	comp := log[4]
	if comp.Type != sessiontree.TypeCompaction || sessiontree.FirstKeptEntryID(comp) != log[2].ID {
		t.Errorf("compaction = %s; want firstKeptEntryId %q", comp.Raw, log[2].ID)
	}
	if _, has := comp.Field("firstKeptEntryIndex"); has {
		t.Errorf("compaction still has firstKeptEntryIndex: %s", comp.Raw)
	}
	// The ids do not change from one open to the next.
	again := open(t, path, jsonl.Options{ReadOnly: true})
	if !cmp.Equal(logIDs(t, st), logIDs(t, again)) {
		t.Errorf("ids differ between opens: %v and %v", logIDs(t, st), logIDs(t, again))
	}
}

func TestLegacyV2Migration(t *testing.T) {
	ctx := context.Background()
	st := open(t, copyFixture(t, "legacy-v2-hookmessage.jsonl"), jsonl.Options{ReadOnly: true})
	e, err := st.Entry(ctx, "a0000002")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"message","id":"a0000002","parentId":"a0000001","timestamp":"2025-06-01T09:00:02.000Z","message":{"role":"custom","customType":"reminder","content":"remember the tests","display":true,"timestamp":1748768402000}}`
	if string(e.Raw) != want {
		t.Errorf("migrated hookMessage = %s; want %s", e.Raw, want)
	}
	if v := st.Report().Version; v != 2 {
		t.Errorf("Report().Version = %d; want 2", v)
	}
}

func TestUpgrade(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"legacy-v1-compaction.jsonl", "legacy-v1-linear.jsonl", "legacy-v2-hookmessage.jsonl"} {
		t.Run(name, func(t *testing.T) {
			path := copyFixture(t, name)
			original := readFile(t, path)
			st := open(t, path, jsonl.Options{})
			before, _ := st.Log(ctx, 0, 0)
			wantCtx := contextOf(t, st)
			// Opening did not rewrite; writing needs the upgrade.
			if readFile(t, path) != original {
				t.Fatal("opening a legacy file rewrote it")
			}
			if _, err := st.Append(ctx, sessiontree.Draft{Type: sessiontree.TypeCustom, Fields: json.RawMessage(`{"customType":"x"}`)}, sessiontree.AppendOptions{}); !errors.Is(err, sessiontree.ErrReadOnly) || !strings.Contains(err.Error(), "Upgrade") {
				t.Errorf("Append to a legacy file: error = %v; want ErrReadOnly asking for Upgrade", err)
			}
			if readFile(t, path) != original {
				t.Fatal("a refused append changed the file")
			}
			if err := st.Upgrade(ctx); err != nil {
				t.Fatal(err)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
				t.Errorf("upgraded file mode = %v; want the original's 0640", fi.Mode().Perm())
			}
			if tmp, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp")); len(tmp) != 0 {
				t.Errorf("temporary files left: %v", tmp)
			}
			// Still the only writer, now of the new file.
			if _, err := jsonl.Open(ctx, path, jsonl.Options{}); !errors.Is(err, sessiontree.ErrLocked) {
				t.Errorf("Open during upgraded writer: error = %v; want ErrLocked", err)
			}
			e := appendUser(t, st, "after upgrade")
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			up := open(t, path, jsonl.Options{Mode: jsonl.Strict})
			if r := up.Report(); r.Version != 3 {
				t.Errorf("upgraded file version = %d; want 3", r.Version)
			}
			var h map[string]any
			first, _, _ := strings.Cut(readFile(t, path), "\n")
			if err := json.Unmarshal([]byte(first), &h); err != nil || h["version"] != 3.0 || h["type"] != "session" {
				t.Errorf("upgraded header = %s", first)
			}
			after, _ := up.Log(ctx, 0, 0)
			if len(after) != len(before)+1 {
				t.Fatalf("upgraded file has %d entries; want %d", len(after), len(before)+1)
			}
			for i := range before {
				if string(after[i].Raw) != string(before[i].Raw) {
					t.Errorf("entry %d after upgrade = %s; want %s", i+1, after[i].Raw, before[i].Raw)
				}
			}
			if after[len(before)].ID != e.ID {
				t.Errorf("last entry = %s; want the one appended after the upgrade", after[len(before)].ID)
			}
			// The context is pi's, before and after.
			if err := up.Upgrade(ctx); err != nil {
				t.Errorf("Upgrade of a current file = %v; want nil", err)
			}
			_, err := up.SetLeaf(ctx, before[len(before)-1].ID, sessiontree.AppendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantCtx, contextOf(t, up)); diff != "" {
				t.Errorf("context after upgrade (-before +after):\n%s", diff)
			}
		})
	}
}

func TestUpgradeFunction(t *testing.T) {
	ctx := context.Background()
	path := copyFixture(t, "legacy-v1-linear.jsonl")
	from, err := jsonl.Upgrade(ctx, path, jsonl.Options{})
	if err != nil || from != 1 {
		t.Fatalf("Upgrade() = %d, %v; want 1, nil", from, err)
	}
	upgraded := readFile(t, path)
	if from, err := jsonl.Upgrade(ctx, path, jsonl.Options{}); err != nil || from != 3 || readFile(t, path) != upgraded {
		t.Errorf("second Upgrade() = %d, %v, file changed %v; want 3, nil, unchanged", from, err, readFile(t, path) != upgraded)
	}
	fx := storetest.PiFixtures(t, filepath.Join("..", "testdata", "pi"))
	for _, f := range fx {
		if f.Name == "legacy-v1-linear" {
			storetest.CheckPi(t, open(t, path, jsonl.Options{ReadOnly: true, Mode: jsonl.Strict}), f.Want)
		}
	}
}

func TestUpgradeRefusesToDropSkippedLines(t *testing.T) {
	ctx := context.Background()
	v1 := `{"type":"session","id":"v1","timestamp":"2025-06-01T09:00:00.000Z","cwd":"/"}`
	path := writeFile(t, lines(v1, `{"type":"message",`+ts+`,"message":{"role":"user","content":"a"}}`, "garbage"))
	st := open(t, path, jsonl.Options{Mode: jsonl.Lenient})
	before := readFile(t, path)
	if err := st.Upgrade(ctx); !errors.Is(err, sessiontree.ErrCorrupt) {
		t.Errorf("Upgrade with skipped lines: error = %v; want ErrCorrupt", err)
	}
	if readFile(t, path) != before {
		t.Errorf("refused upgrade changed the file")
	}
}

func TestV1Details(t *testing.T) {
	v1 := `{"type":"session","id":"v1","timestamp":"2025-06-01T09:00:00.000Z","cwd":"/"}`
	m := func(text string) string {
		return `{"type":"message",` + ts + `,"message":{"role":"user","content":"` + text + `"}}`
	}
	comp := func(index string) string {
		return `{"type":"compaction",` + ts + `,"summary":"s","firstKeptEntryIndex":` + index + `,"tokensBefore":1}`
	}
	path := writeFile(t, lines(v1,
		m("a"),
		"",          // blank: not counted
		"not json",  // dropped before numbering, as pi does
		comp("0"),   // the header: no id
		comp("2"),   // index 2 is the compaction above
		comp("9"),   // later than itself: none
		comp("5"),   // itself
		comp(`"1"`), // not a number: none
		m("b"),
	))
	st := open(t, path, jsonl.Options{ReadOnly: true, Mode: jsonl.Lenient})
	log, err := st.Log(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 7 || len(st.Report().Warnings) != 1 {
		t.Fatalf("loaded %d entries, %d warnings; want 7 and 1", len(log), len(st.Report().Warnings))
	}
	wantKept := []string{"", log[1].ID, "", log[4].ID, ""}
	for i, want := range wantKept {
		c := log[i+1]
		if got := sessiontree.FirstKeptEntryID(c); got != want {
			t.Errorf("compaction %d firstKeptEntryId = %q; want %q (%s)", i+1, got, want, c.Raw)
		}
		if _, has := c.Field("firstKeptEntryIndex"); has {
			t.Errorf("compaction %d kept firstKeptEntryIndex", i+1)
		}
	}
	if log[6].ParentID != log[5].ID {
		t.Errorf("last entry's parent = %q; want %q", log[6].ParentID, log[5].ID)
	}
}
