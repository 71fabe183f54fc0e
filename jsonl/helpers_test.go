package jsonl_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
)

const testHeader = `{"type":"session","version":3,"id":"0190a000-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}`

// msg is a user message entry line.
func msg(id, parent string) string {
	p := "null"
	if parent != "" {
		p = `"` + parent + `"`
	}
	return fmt.Sprintf(`{"type":"message","id":"%s","parentId":%s,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"%s","timestamp":1}}`, id, p, id)
}

// lines joins lines, each with its newline.
func lines(ls ...string) string {
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}

// writeFile writes content to a new file in a temporary directory.
func writeFile(t testing.TB, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// open opens path and registers its Close.
func open(t testing.TB, path string, opts jsonl.Options) *jsonl.Storage {
	t.Helper()
	st, err := jsonl.Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Open(%s, %+v): %v", path, opts, err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func logIDs(t testing.TB, st sessiontree.Storage) []string {
	t.Helper()
	log, err := st.Log(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(log))
	for i, e := range log {
		ids[i] = e.ID
	}
	return ids
}

func leaf(t testing.TB, st sessiontree.Storage) string {
	t.Helper()
	l, err := st.Leaf(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func appendUser(t testing.TB, st sessiontree.Storage, text string) sessiontree.Entry {
	t.Helper()
	e, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).
		AppendMessage(context.Background(), json.RawMessage(`{"role":"user","content":"`+text+`","timestamp":1}`))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// lineError checks err is a *LineError at path:line matching ErrCorrupt.
func lineError(t testing.TB, err error, path string, line int) *jsonl.LineError {
	t.Helper()
	var le *jsonl.LineError
	if !errors.As(err, &le) {
		t.Fatalf("error %v (%T) is not a *LineError", err, err)
	}
	if le.Path != path || le.Line != line {
		t.Errorf("LineError at %s:%d; want %s:%d (%v)", le.Path, le.Line, path, line, err)
	}
	if prefix := fmt.Sprintf("%s:%d: ", path, line); !strings.HasPrefix(err.Error(), prefix) {
		t.Errorf("error %q does not start with %q", err, prefix)
	}
	if !errors.Is(err, sessiontree.ErrCorrupt) {
		t.Errorf("error %v does not match ErrCorrupt", err)
	}
	return le
}

func jsonEqual(t testing.TB, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return cmp.Equal(x, y)
}
