package view_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/memory"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", name, diff)
	}
}

// load reads a version-3 session file into a memory session.
func load(t testing.TB, path string) sessiontree.Storage {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	var meta sessiontree.SessionMeta
	var entries []sessiontree.Entry
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if meta.ID == "" {
			if err := json.Unmarshal(line, &meta); err != nil {
				t.Fatal(err)
			}
			continue
		}
		e, err := sessiontree.DecodeEntry(line)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		entries = append(entries, e)
	}
	st, err := memory.New(meta, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AppendBatch(context.Background(), entries); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// fixtures are the sessions the golden files are made from: the demo
// session with fixed ids and times, three sessions written by pi 0.73.1,
// and two by pi 1.6.0 (context edits, usage entries, system messages).
var fixtures = map[string]string{
	"demo":          "testdata/demo.jsonl",
	"session-002":   "../testdata/pi/session-002.jsonl",
	"session-003":   "../testdata/pi/session-003.jsonl",
	"session-010":   "../testdata/pi/session-010.jsonl",
	"pi1-edited-00": "../testdata/pi1/edited-00.jsonl",
	"pi1-real-00":   "../testdata/pi1/real-00.jsonl",
}

// forEachStored runs fn in a subtest per fixture (graphFixtures) with the
// file opened read-only and the same session stored in an engine
// database, under the file's metadata.
func forEachStored(t *testing.T, fn func(t *testing.T, path string, file *jsonl.Storage, stored *engine.Storage)) {
	t.Helper()
	ctx := context.Background()
	db, err := engine.Open(ctx, filepath.Join(t.TempDir(), "fixtures.db"), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	for _, path := range graphFixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			file, err := jsonl.Open(ctx, path, jsonl.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer file.Close()
			meta, err := file.Meta(ctx)
			if err != nil {
				t.Fatal(err)
			}
			stored, err := db.CreateSession(ctx, meta)
			if err != nil {
				t.Fatal(err)
			}
			defer stored.Close()
			if err := stored.AppendBatch(ctx, readSession(t, path).Log); err != nil {
				t.Fatal(err)
			}
			fn(t, path, file, stored)
		})
	}
}
