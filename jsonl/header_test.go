package jsonl_test

import (
	"context"
	"errors"
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

// TestCreateRefusesIDsPiRefuses: a new file's id must be one pi 1.6.0
// takes (sessiontree.CheckNewSessionID); nothing is left behind. A file
// already holding another id opens as any.
func TestCreateRefusesIDsPiRefuses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	for _, id := range []string{"-rf", "x.jsonl", "a b", "a/b"} {
		var me *sessiontree.InvalidSessionMetaError
		if st, err := jsonl.Create(ctx, path, sessiontree.SessionMeta{ID: id}, jsonl.Options{}); !errors.As(err, &me) || me.Field != "id" {
			if st != nil {
				st.Close()
			}
			t.Errorf("Create(id %q) = %v; want an InvalidSessionMetaError naming the id", id, err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("after Create(id %q) refused, the file: %v; want none", id, err)
		}
	}
	header := `{"type":"session","version":3,"id":"-rf","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}` + "\n"
	if err := os.WriteFile(path, []byte(header), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := jsonl.Open(ctx, path, jsonl.Options{})
	if err != nil {
		t.Fatalf("Open(a file whose id is -rf) = %v", err)
	}
	defer st.Close()
	if m, err := st.Meta(ctx); err != nil || m.ID != "-rf" {
		t.Errorf("Meta() = %+v, %v; want id -rf", m, err)
	}
}
