package jsonl_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
)

var uuidV7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestCreateWritesHeaderAndLines(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "new.jsonl")
	st, err := jsonl.Create(ctx, path, sessiontree.SessionMeta{Cwd: "/home/me/proj", ParentSession: "/old/<a&b>.jsonl"}, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := appendUser(t, st, "one")
	b := appendUser(t, st, "two")
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(readFile(t, path), "\n")
	if len(got) != 4 || got[3] != "" {
		t.Fatalf("file has lines %q; want header, two entries and a final newline", got)
	}
	var h map[string]any
	if err := json.Unmarshal([]byte(got[0]), &h); err != nil {
		t.Fatal(err)
	}
	if h["type"] != "session" || h["version"] != 3.0 || h["cwd"] != "/home/me/proj" || h["parentSession"] != "/old/<a&b>.jsonl" {
		t.Errorf("header = %s", got[0])
	}
	if !strings.HasPrefix(got[0], `{"type":"session","version":3,"id":`) || strings.Contains(got[0], `\u003c`) {
		t.Errorf("header = %s; want pi's field order and no HTML escaping", got[0])
	}
	if id, _ := h["id"].(string); !uuidV7.MatchString(id) {
		t.Errorf("header id = %q; want a UUID v7", id)
	}
	if ts, _ := h["timestamp"].(string); !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`).MatchString(ts) {
		t.Errorf("header timestamp = %q", ts)
	}
	if got[1] != string(a.Raw) || got[2] != string(b.Raw) {
		t.Errorf("entry lines = %q; want the entries' JSON", got[1:3])
	}

	// Given values are kept, and the file cannot be created twice.
	meta := sessiontree.SessionMeta{ID: "my-id", CreatedAt: "2026-02-03T04:05:06.789Z", Cwd: "/x"}
	path2 := filepath.Join(t.TempDir(), "given.jsonl")
	st2, err := jsonl.Create(ctx, path2, meta, jsonl.Options{Sync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if m, _ := st2.Meta(ctx); m.ID != "my-id" || m.CreatedAt != meta.CreatedAt || m.Version != 3 {
		t.Errorf("Meta() = %+v", m)
	}
	appendUser(t, st2, "synced")
	if _, err := jsonl.Create(ctx, path2, meta, jsonl.Options{}); !errors.Is(err, fs.ErrExist) || !errors.Is(err, sessiontree.ErrConflict) {
		t.Errorf("Create(existing) error = %v; want fs.ErrExist and ErrConflict", err)
	}
	if _, err := jsonl.Create(ctx, filepath.Join(t.TempDir(), "v"), sessiontree.SessionMeta{Version: 2}, jsonl.Options{}); !errors.Is(err, jsonl.ErrUnsupportedVersion) {
		t.Errorf("Create(version 2) error = %v; want ErrUnsupportedVersion", err)
	}
}

func TestTornTailRecovered(t *testing.T) {
	ctx := context.Background()
	good := lines(testHeader, msg("aaaaaaaa", ""), msg("bbbbbbbb", "aaaaaaaa"))
	torn := `{"type":"message","id":"cccccccc","parentId":"bbbbbbbb","timest`
	path := writeFile(t, good+torn)

	// Strict refuses it.
	_, err := jsonl.Open(ctx, path, jsonl.Options{Mode: jsonl.Strict, ReadOnly: true})
	lineError(t, err, path, 4)
	if !strings.Contains(err.Error(), "torn last line") {
		t.Errorf("strict error = %v; want it to say torn last line", err)
	}

	// A read-only open loads the rest and changes nothing.
	ro := open(t, path, jsonl.Options{ReadOnly: true})
	if got := logIDs(t, ro); !cmp.Equal(got, []string{"aaaaaaaa", "bbbbbbbb"}) {
		t.Errorf("Log() = %v", got)
	}
	r := ro.Report()
	if r.Torn == nil || r.Torn.Line != 4 || r.Torn.Offset != int64(len(good)) || r.Torn.Size != len(torn) || r.Torn.Sidecar != "" {
		t.Fatalf("read-only Report().Torn = %+v", r.Torn)
	}
	if len(r.Warnings) != 1 || r.Warnings[0].Line != 4 {
		t.Errorf("Report().Warnings = %v; want the torn line", r.Warnings)
	}
	if side, _ := filepath.Glob(path + ".torn-*"); len(side) != 0 || readFile(t, path) != good+torn {
		t.Errorf("read-only open wrote something: sidecars %v", side)
	}

	// A writable open copies the torn bytes aside.
	st := open(t, path, jsonl.Options{})
	side := st.Report().Torn.Sidecar
	if !strings.HasPrefix(side, path+".torn-") || readFile(t, side) != torn {
		t.Fatalf("sidecar %q holds %q; want the torn bytes", side, readFile(t, side))
	}
	if readFile(t, path) != good+torn {
		t.Errorf("opening cut the file before any write")
	}
	// The next append starts on a clean line.
	e := appendUser(t, st, "after the crash")
	if e.ParentID != "bbbbbbbb" {
		t.Errorf("appended entry's parent = %q; want bbbbbbbb", e.ParentID)
	}
	if got, want := readFile(t, path), good+string(e.Raw)+"\n"; got != want {
		t.Errorf("file after append =\n%s\nwant\n%s", got, want)
	}
	st.Close()
	again := open(t, path, jsonl.Options{Mode: jsonl.Strict, ReadOnly: true})
	if got := logIDs(t, again); !cmp.Equal(got, []string{"aaaaaaaa", "bbbbbbbb", e.ID}) {
		t.Errorf("after reopening Log() = %v", got)
	}
}

func TestLastLineWithoutNewline(t *testing.T) {
	content := lines(testHeader, msg("aaaaaaaa", "")) + msg("bbbbbbbb", "aaaaaaaa")
	path := writeFile(t, content)
	if _, err := jsonl.Open(context.Background(), path, jsonl.Options{Mode: jsonl.Strict, ReadOnly: true}); err == nil {
		t.Errorf("strict open of a file without final newline succeeded")
	} else {
		lineError(t, err, path, 3)
	}
	st := open(t, path, jsonl.Options{})
	if r := st.Report(); r.Torn != nil || len(r.Warnings) != 0 || r.Entries != 2 {
		t.Errorf("Report() = %+v; want two entries, no damage", r)
	}
	e := appendUser(t, st, "next")
	if got, want := readFile(t, path), content+"\n"+string(e.Raw)+"\n"; got != want {
		t.Errorf("file after append = %q; want %q", got, want)
	}

	// A header alone without newline, too.
	path = writeFile(t, testHeader)
	st = open(t, path, jsonl.Options{})
	e = appendUser(t, st, "first")
	if got, want := readFile(t, path), testHeader+"\n"+string(e.Raw)+"\n"; got != want {
		t.Errorf("file after append = %q; want %q", got, want)
	}
}

func TestLeafRuleOnOpen(t *testing.T) {
	leafTo := func(id, parent, target string) string {
		return `{"type":"leaf","id":"` + id + `","parentId":"` + parent + `",` + ts + `,"targetId":` + target + `}`
	}
	tests := []struct {
		name, content, want string
	}{
		{"pi file: the last entry", lines(testHeader, msg("aaaaaaaa", ""), msg("bbbbbbbb", "aaaaaaaa"), msg("cccccccc", "aaaaaaaa")), "cccccccc"},
		{"moved leaf", lines(testHeader, msg("aaaaaaaa", ""), msg("bbbbbbbb", "aaaaaaaa"), leafTo("cccccccc", "bbbbbbbb", `"aaaaaaaa"`)), "aaaaaaaa"},
		{"moved to null", lines(testHeader, msg("aaaaaaaa", ""), leafTo("cccccccc", "aaaaaaaa", "null")), ""},
		{"header only", lines(testHeader), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := open(t, writeFile(t, tt.content), jsonl.Options{ReadOnly: true, Mode: jsonl.Strict})
			if got := leaf(t, st); got != tt.want {
				t.Errorf("Leaf() = %q; want %q", got, tt.want)
			}
		})
	}
}

func TestReadOnlyRefusesWrites(t *testing.T) {
	ctx := context.Background()
	path := writeFile(t, lines(testHeader, msg("aaaaaaaa", "")))
	st := open(t, path, jsonl.Options{ReadOnly: true})
	if _, err := st.Append(ctx, sessiontree.Draft{Type: sessiontree.TypeCustom, Fields: json.RawMessage(`{"customType":"x"}`)}, sessiontree.AppendOptions{}); !errors.Is(err, sessiontree.ErrReadOnly) {
		t.Errorf("Append(read-only) error = %v; want ErrReadOnly", err)
	}
	if _, err := st.SetLeaf(ctx, "", sessiontree.AppendOptions{}); !errors.Is(err, sessiontree.ErrReadOnly) {
		t.Errorf("SetLeaf(read-only) error = %v; want ErrReadOnly", err)
	}
	if err := st.Upgrade(ctx); !errors.Is(err, sessiontree.ErrReadOnly) {
		t.Errorf("Upgrade(read-only) error = %v; want ErrReadOnly", err)
	}
	if _, err := jsonl.Create(ctx, filepath.Join(t.TempDir(), "x"), sessiontree.SessionMeta{}, jsonl.Options{ReadOnly: true}); !errors.Is(err, sessiontree.ErrReadOnly) {
		t.Errorf("Create(read-only) error = %v; want ErrReadOnly", err)
	}
	st.Close()
	if _, err := st.Leaf(ctx); !errors.Is(err, sessiontree.ErrClosed) {
		t.Errorf("Leaf() after Close error = %v; want ErrClosed", err)
	}
	if err := st.Close(); err != nil {
		t.Errorf("second Close() = %v; want nil", err)
	}
}

func TestLockInProcess(t *testing.T) {
	ctx := context.Background()
	path := writeFile(t, lines(testHeader, msg("aaaaaaaa", "")))
	w := open(t, path, jsonl.Options{})
	_, err := jsonl.Open(ctx, path, jsonl.Options{})
	if !errors.Is(err, sessiontree.ErrLocked) || !strings.Contains(err.Error(), "session is locked by another writer") {
		t.Fatalf("second writer in the same process: error = %v; want ErrLocked", err)
	}
	if _, err := jsonl.Upgrade(ctx, path, jsonl.Options{}); !errors.Is(err, sessiontree.ErrLocked) {
		t.Errorf("Upgrade while locked: error = %v; want ErrLocked", err)
	}
	// Readers are not blocked, and see what the writer wrote.
	e := appendUser(t, w, "written")
	r := open(t, path, jsonl.Options{ReadOnly: true})
	if got := logIDs(t, r); !cmp.Equal(got, []string{"aaaaaaaa", e.ID}) {
		t.Errorf("reader Log() = %v", got)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w2 := open(t, path, jsonl.Options{})
	appendUser(t, w2, "second writer, after the first closed")

	// Create locks too.
	created, err := jsonl.Create(ctx, filepath.Join(t.TempDir(), "c.jsonl"), sessiontree.SessionMeta{}, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer created.Close()
	if _, err := jsonl.Open(ctx, created.File(), jsonl.Options{}); !errors.Is(err, sessiontree.ErrLocked) {
		t.Errorf("Open of a file another storage created: error = %v; want ErrLocked", err)
	}
}

func TestForeignWriterDetected(t *testing.T) {
	ctx := context.Background()
	path := writeFile(t, lines(testHeader, msg("aaaaaaaa", "")))
	st := open(t, path, jsonl.Options{})
	// pi takes no lock: simulate it appending behind our back.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(msg("bbbbbbbb", "aaaaaaaa") + "\n")
	f.Close()
	before := readFile(t, path)
	_, err = st.Append(ctx, sessiontree.Draft{Type: sessiontree.TypeCustom, Fields: json.RawMessage(`{"customType":"x"}`)}, sessiontree.AppendOptions{})
	if !errors.Is(err, sessiontree.ErrConflict) {
		t.Errorf("Append after a foreign write: error = %v; want ErrConflict", err)
	}
	if readFile(t, path) != before {
		t.Errorf("the refused append wrote to the file")
	}
	if n := len(logIDs(t, st)); n != 1 {
		t.Errorf("index has %d entries; want 1", n)
	}
}

// TestFileReplacedUnderWriter: the file is deleted, or another file is
// renamed over it (an editor's or a sync tool's atomic save), while a
// storage has it open for writing. An append would go to the file the
// storage holds, which no path names any more, and be lost when it
// closes: it is refused as a conflict, and nothing is written.
func TestFileReplacedUnderWriter(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		replace func(t *testing.T, path string)
	}{
		{"deleted", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}},
		{"renamed over", func(t *testing.T, path string) {
			saved := path + ".save"
			if err := os.WriteFile(saved, []byte(readFile(t, path)), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(saved, path); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, lines(testHeader, msg("aaaaaaaa", "")))
			st := open(t, path, jsonl.Options{})
			tc.replace(t, path)
			_, err := st.Append(ctx, sessiontree.Draft{Type: sessiontree.TypeCustom, Fields: json.RawMessage(`{"customType":"x"}`)}, sessiontree.AppendOptions{})
			if !errors.Is(err, sessiontree.ErrConflict) {
				t.Errorf("Append after the file was %s: error = %v; want ErrConflict", tc.name, err)
			}
			if n := len(logIDs(t, st)); n != 1 {
				t.Errorf("index has %d entries; want 1", n)
			}
		})
	}
}

func TestLineBreaksInFields(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	st, err := jsonl.Create(ctx, path, sessiontree.SessionMeta{}, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fields := json.RawMessage("{\n  \"customType\": \"x\",\n  \"data\": {\"text\": \"a\\nb\"}\n}")
	e, err := st.Append(ctx, sessiontree.Draft{Type: sessiontree.TypeCustom, Fields: fields}, sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(e.Raw), "\n") {
		t.Errorf("entry Raw %q holds a line break", e.Raw)
	}
	batch, _ := sessiontree.BuildEntry(sessiontree.Draft{Type: sessiontree.TypeCustom, Fields: fields}, "bbbbbbbb", e.ID, "2026-01-01T00:00:00.000Z")
	if err := st.AppendBatch(ctx, []sessiontree.Entry{batch}); err != nil {
		t.Fatal(err)
	}
	// Invalid JSON is refused, not repaired by the rewrite.
	bad := json.RawMessage("{\"customType\": \"x\n\"}")
	if _, err := st.Append(ctx, sessiontree.Draft{Type: sessiontree.TypeCustom, Fields: bad}, sessiontree.AppendOptions{}); !errors.Is(err, sessiontree.ErrInvalidEntry) {
		t.Errorf("Append(raw line break in a string) error = %v; want ErrInvalidEntry", err)
	}
	st.Close()
	again := open(t, path, jsonl.Options{Mode: jsonl.Strict, ReadOnly: true})
	got, err := again.Entry(ctx, e.ID)
	if err != nil || string(got.Raw) != string(e.Raw) {
		t.Errorf("Entry(%q) after reopen = %s, %v; want %s", e.ID, got.Raw, err, e.Raw)
	}
	if n := len(logIDs(t, again)); n != 2 {
		t.Errorf("file holds %d entries; want 2", n)
	}
}

func TestAppendBatchAllOrNothing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	st, err := jsonl.Create(ctx, path, sessiontree.SessionMeta{}, jsonl.Options{Sync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	root := appendUser(t, st, "root")
	before := readFile(t, path)
	entry := func(id, parent string) sessiontree.Entry {
		e, err := jsonl.ParseLine([]byte(msg(id, parent)))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	bad := []sessiontree.Entry{entry("b0000001", root.ID), entry("b0000002", "b0000001"), entry("b0000003", "nothere0")}
	if err := st.AppendBatch(ctx, bad); !errors.Is(err, sessiontree.ErrNotFound) || errors.Is(err, sessiontree.ErrCorrupt) {
		t.Errorf("AppendBatch(missing parent) error = %v; want ErrNotFound (the caller's mistake, not damage)", err)
	}
	if got := readFile(t, path); got != before {
		t.Errorf("failed batch left lines in the file:\n%s", strings.TrimPrefix(got, before))
	}
	if n := len(logIDs(t, st)); n != 1 {
		t.Errorf("index has %d entries after a failed batch; want 1", n)
	}
	if err := st.AppendBatch(ctx, bad[:2]); err != nil {
		t.Fatal(err)
	}
	e := appendUser(t, st, "after")
	if e.ParentID != "b0000002" {
		t.Errorf("append after batch has parent %q; want b0000002", e.ParentID)
	}
	st.Close()
	again := open(t, path, jsonl.Options{Mode: jsonl.Strict, ReadOnly: true})
	if got := logIDs(t, again); !cmp.Equal(got, []string{root.ID, "b0000001", "b0000002", e.ID}) {
		t.Errorf("file Log() = %v", got)
	}
}

func TestContextCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	path := writeFile(t, lines(testHeader, msg("aaaaaaaa", "")))
	if _, err := jsonl.Open(ctx, path, jsonl.Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Open(canceled) error = %v; want context.Canceled", err)
	}
	// The lock was not kept.
	open(t, path, jsonl.Options{})
}
