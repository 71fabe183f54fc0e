package jsonl_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
)

func piFiles(f *testing.F) map[string][]byte {
	f.Helper()
	out := map[string][]byte{}
	for _, dir := range fixtureDirs {
		paths, err := filepath.Glob(filepath.Join("..", "testdata", dir, "*.jsonl"))
		if err != nil || len(paths) == 0 {
			f.Fatalf("no seed files in %s: %v", dir, err)
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			out[dir+"/"+filepath.Base(p)] = data
		}
	}
	return out
}

// FuzzParseLine feeds arbitrary lines to the line parser, seeded with
// every line of the pi files: it never panics, and either returns a valid
// entry that parses again to itself or an ErrInvalidEntry.
func FuzzParseLine(f *testing.F) {
	for _, data := range piFiles(f) {
		ls := bytes.Split(data, []byte("\n"))
		for i, line := range ls {
			if i < 25 || i > len(ls)-5 {
				f.Add(line)
			}
		}
	}
	f.Add([]byte(`{"type":"leaf","id":"a","parentId":null,"timestamp":"t","targetId":null}`))
	f.Add([]byte(`{"type":"message","id":"\u0061","parentId":"b","timestamp":"t","message":{}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := jsonl.ParseLine(line)
		if err != nil {
			if !errors.Is(err, sessiontree.ErrInvalidEntry) {
				t.Fatalf("ParseLine(%q) error %v does not match ErrInvalidEntry", line, err)
			}
			return
		}
		if err := e.Validate(); err != nil || e.ID == "" || e.Timestamp == "" {
			t.Fatalf("ParseLine(%q) = %+v, which does not validate: %v", line, e, err)
		}
		again, err := jsonl.ParseLine(e.Raw)
		if err != nil || !cmp.Equal(again, e) {
			t.Fatalf("ParseLine(Raw) = %+v, %v; want %+v", again, err, e)
		}
		if _, err := jsonl.ParseHeader(line); err == nil && e.Type == "session" {
			t.Fatalf("%q parsed both as header and entry", line)
		}
	})
}

// FuzzOpenFile opens arbitrary files in every mode, seeded with the pi
// files' first lines, some cut short: opening never panics or hangs (each
// input gets ten seconds), and either fails with a *LineError or gives a
// session whose tree and states hold.
func FuzzOpenFile(f *testing.F) {
	// Heads of the files (every kind of entry shows up early) keep inputs
	// small, so the fuzzer mutates them quickly; the whole files are run
	// by TestPiFixtures and TestRoundTrip.
	for _, data := range piFiles(f) {
		head := data
		for i, n := 0, 0; i < len(data); i++ {
			if data[i] == '\n' {
				if n++; n == 25 {
					head = data[:i+1]
					break
				}
			}
		}
		f.Add(head)
		f.Add(head[:len(head)*2/3])
	}
	f.Add([]byte(testHeader + "\n" + msg("aaaaaaaa", "bbbbbbbb") + "\n" + msg("bbbbbbbb", "aaaaaaaa") + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			openAllModes(t, data)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("opening %q did not finish: a hang", data)
		}
	})
}

func openAllModes(t *testing.T, data []byte) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "f.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Error(err)
		return
	}
	// The modes nest: Strict refuses all Recover refuses, and Recover all
	// Lenient refuses; what a stricter mode opens, a laxer one opens the
	// same (each skips only lines the stricter one refuses).
	var prev *opened
	for _, mode := range []jsonl.Mode{jsonl.Strict, jsonl.Recover, jsonl.Lenient} {
		st, err := jsonl.Open(ctx, path, jsonl.Options{ReadOnly: true, Mode: mode})
		if err != nil {
			var le *jsonl.LineError
			if !errors.As(err, &le) || !errors.Is(err, sessiontree.ErrCorrupt) || le.Line < 1 {
				t.Errorf("Open(%v) error %v is not a *LineError matching ErrCorrupt", mode, err)
			}
			if prev != nil {
				t.Errorf("Open(%v) = %v; Open(%v) opens the file", mode, err, prev.mode)
			}
			continue
		}
		checkTree(t, st)
		o := openedOf(t, st, mode)
		_ = st.Close()
		if t.Failed() {
			return
		}
		checkLines(t, o, data)
		if prev != nil {
			if diff := cmp.Diff(prev, o, cmp.AllowUnexported(opened{}), cmp.FilterPath(func(p cmp.Path) bool {
				return p.Last().String() == ".mode"
			}, cmp.Ignore())); diff != "" {
				t.Errorf("Open(%v) and Open(%v) differ (-%v +%v):\n%s", prev.mode, mode, prev.mode, mode, diff)
			}
		} else {
			writeBack(t, o)
		}
		prev = o
	}
}

// opened is what an open read: the header, the log (Raw and Seq alone
// are compared, the rest is parsed from Raw), the leaf.
type opened struct {
	mode    jsonl.Mode
	header  sessiontree.SessionMeta
	version int
	raws    []string
	leaf    string
}

func openedOf(t *testing.T, st *jsonl.Storage, mode jsonl.Mode) *opened {
	ctx := context.Background()
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := st.Leaf(ctx)
	if err != nil {
		t.Fatal(err)
	}
	o := &opened{mode: mode, header: st.Header().SessionMeta, version: st.Report().Version, leaf: leaf}
	for _, e := range log {
		o.raws = append(o.raws, string(e.Raw))
	}
	return o
}

// checkLines checks that a version-3 file's entries are its lines, byte
// for byte (less the JSON white space around them), in file order:
// every line after the header, or in Recover and Lenient modes some of
// them. (Older versions are migrated, and their lines rewritten.)
func checkLines(t *testing.T, o *opened, data []byte) {
	if o.version != jsonl.CurrentVersion {
		return
	}
	var lines []string
	header := true
	for _, l := range bytes.SplitAfter(data, []byte("\n")) {
		if jsonl.Blank(l) {
			continue
		}
		if header {
			header = false
			continue
		}
		lines = append(lines, string(bytes.Trim(l, " \t\r\n")))
	}
	if o.mode == jsonl.Strict {
		if diff := cmp.Diff(lines, o.raws, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Open(Strict) entries are not the file's lines (-lines +entries):\n%s", diff)
		}
		return
	}
	i := 0
	for _, r := range o.raws {
		for i < len(lines) && lines[i] != r {
			i++
		}
		if i == len(lines) {
			t.Errorf("Open(%v) entry %q is not one of the file's lines, in file order", o.mode, r)
			return
		}
		i++
	}
}

// writeBack writes what an open read to a new file through this
// package's writer (Create, AppendBatch) and checks that the file opens
// in Strict mode as the same header, entries and leaf.
func writeBack(t *testing.T, o *opened) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "back.jsonl")
	meta := o.header
	meta.Version = jsonl.CurrentVersion
	if sessiontree.CheckNewSessionID(meta.ID) != nil {
		return // an id a file may hold, but no new file takes
	}
	w, err := jsonl.Create(ctx, path, meta, jsonl.Options{})
	if err != nil {
		t.Errorf("Create(%+v): %v", meta, err)
		return
	}
	entries := make([]sessiontree.Entry, len(o.raws))
	for i, r := range o.raws {
		if entries[i], err = sessiontree.DecodeEntry([]byte(r)); err != nil {
			t.Errorf("DecodeEntry(%q): %v", r, err)
			return
		}
	}
	if err := w.AppendBatch(ctx, entries); err != nil {
		_ = w.Close()
		t.Errorf("AppendBatch of the entries read (%v): %v", o.mode, err)
		return
	}
	if err := w.Close(); err != nil {
		t.Error(err)
		return
	}
	st, err := jsonl.Open(ctx, path, jsonl.Options{ReadOnly: true, Mode: jsonl.Strict})
	if err != nil {
		t.Errorf("the file written back does not open: %v", err)
		return
	}
	back := openedOf(t, st, o.mode)
	_ = st.Close()
	want := *o
	want.header.Version, want.version = jsonl.CurrentVersion, jsonl.CurrentVersion
	if diff := cmp.Diff(&want, back, cmp.AllowUnexported(opened{})); diff != "" {
		t.Errorf("the file written back reads differently (-read +written back):\n%s", diff)
	}
}

// checkTree checks an opened session: unique ids, parents earlier in the
// log (so every path ends at a root), the state at each entry, a context
// at the leaf.
func checkTree(t testing.TB, st *jsonl.Storage) {
	t.Helper()
	ctx := context.Background()
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range log {
		if seen[e.ID] || e.ParentID != "" && !seen[e.ParentID] {
			t.Fatalf("entry %s: duplicate, or parent %q not before it", e.ID, e.ParentID)
		}
		seen[e.ID] = true
	}
	checkStates(t, st)
	// A context may fail on a malformed payload (a retainedTail that is not
	// an array), never panic.
	_, _ = sessiontree.NewSession(st, sessiontree.SessionOptions{}).Context(ctx, sessiontree.ContextOptions{})
}
