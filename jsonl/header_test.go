package jsonl_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
)

// TestCreateWritesHeaderAsPi: a new file's header is the line pi's
// JSON.stringify writes, U+2028 and U+2029 and HTML characters as they
// are, as an export's header is (jsonl.HeaderLine, the one writer of
// both). Before, the new file's went through encoding/json, which
// escapes U+2028 and U+2029, so a cwd holding one gave another line than
// pi's and than an export of the same session.
func TestCreateWritesHeaderAsPi(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	meta := sessiontree.SessionMeta{ID: "0198f2a4-0000-7000-8000-000000000001", CreatedAt: "2026-12-07T05:00:00.000Z",
		Cwd: "/home/me/a\u2028b\u2029<c>&\"d\"\\e\tf", ParentSession: "/p/q.jsonl"}
	st, err := jsonl.Create(ctx, path, meta, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"session","version":3,"id":"0198f2a4-0000-7000-8000-000000000001","timestamp":"2026-12-07T05:00:00.000Z",` +
		`"cwd":"/home/me/a` + "\u2028b\u2029" + `<c>&\"d\"\\e\tf","parentSession":"/p/q.jsonl"}` + "\n"
	if string(got) != want {
		t.Errorf("header written:\n%s\nwant pi's:\n%s", got, want)
	}
	if h := string(jsonl.HeaderLine(meta)); h != want {
		t.Errorf("HeaderLine = %s; want %s", h, want)
	}
}
