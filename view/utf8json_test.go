package view_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sessiontree/sessiontree/view"
)

// TestJSONOutputIsUTF8: a session file may hold bytes that are not UTF-8
// inside an entry's text (testdata/piedge/invalid-utf8), stored as they
// came. The JSON views (log, branch, tree, context, with and without
// indent or projection) wrote them as they are, which is not JSON (it
// must be UTF-8): Python's json.load raised UnicodeDecodeError on it.
// They now write what pi reads there: each maximal part of an invalid
// sequence as U+FFFD, as Node decodes a file (pi 1.6.0's answer, below,
// from Buffer.toString).
func TestJSONOutputIsUTF8(t *testing.T) {
	t.Parallel()
	bad := "a\xe6\x97 \xf0\x9f\x98 \xed\xa0\x80 \xc0\xaf \xff\xc3 \xf4\x90\x80\x80 \xe0\x80 \xf0\x9f\x98\x80"
	const pi = "a\ufffd \ufffd \ufffd\ufffd\ufffd \ufffd\ufffd \ufffd\ufffd \ufffd\ufffd\ufffd\ufffd \ufffd\ufffd 😀"
	path := filepath.Join(t.TempDir(), "s.jsonl")
	file := `{"type":"session","version":3,"id":"s1","timestamp":"2026-12-01T10:00:00.000Z","cwd":"/p"}` + "\n" +
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-12-01T10:00:01.000Z","message":{"role":"user","content":"` + bad + `","timestamp":1}}` + "\n"
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	st := load(t, path)
	ctx := context.Background()
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, indent := range []bool{false, true} {
		opts := view.JSONOptions{Indent: indent}
		writers := map[string]func(w *bytes.Buffer) error{
			"entries": func(w *bytes.Buffer) error { return view.WriteEntriesJSON(w, log, opts) },
			"tree":    func(w *bytes.Buffer) error { return view.WriteTreeJSON(ctx, w, st, opts) },
			"context": func(w *bytes.Buffer) error {
				c, err := view.LoadContextJSON(ctx, st, "", false)
				if err != nil {
					return err
				}
				return view.WriteContextJSON(w, c, opts)
			},
			"projection": func(w *bytes.Buffer) error {
				c, err := view.LoadContextJSON(ctx, st, "", true)
				if err != nil {
					return err
				}
				return view.WriteContextJSON(w, c, opts)
			},
		}
		for name, write := range writers {
			var out bytes.Buffer
			if err := write(&out); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !utf8.Valid(out.Bytes()) {
				t.Errorf("%s (indent %v): not UTF-8: %q", name, indent, out.Bytes())
			}
			if got := out.String(); !strings.Contains(got, `"`+pi+`"`) {
				t.Errorf("%s (indent %v): want the text as pi reads it, %q, in\n%q", name, indent, pi, got)
			}
		}
	}
}
