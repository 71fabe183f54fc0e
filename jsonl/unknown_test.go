package jsonl_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
)

// unknownLines are entries of types no version of this project knows,
// with nested fields, keys in an unusual order and odd numbers, between
// known ones; the last one is the leaf.
var unknownLines = []string{
	msg("aaaaaaaa", ""),
	`{"type":"future_thing","id":"bbbbbbbb","parentId":"aaaaaaaa",` + ts + `,"payload":{"deep":[1,2.50,{"x":null,"y":"\u00e9\ud83d\ude42"}],"n":1e3}}`,
	msg("cccccccc", "bbbbbbbb"),
	`{"id":"dddddddd","type":"other_thing","timestamp":"2026-01-01T00:00:02.000Z","parentId":"aaaaaaaa","v":[[],{}]}`,
	`{"type":"future_thing","id":"eeeeeeee","parentId":"cccccccc",` + ts + `,"payload":"<tag>&amp;"}`,
	`{"type":"future_thing","id":"ffffffff","parentId":"eeeeeeee",` + ts + `}`,
}

func TestUnknownTypesKeptByteForByte(t *testing.T) {
	ctx := context.Background()
	content := lines(append([]string{testHeader}, unknownLines...)...)
	path := writeFile(t, content)
	wantUnknown := sessiontree.UnknownTypes{{Type: "future_thing", Count: 3}, {Type: "other_thing", Count: 1}}

	st := open(t, path, jsonl.Options{Mode: jsonl.Strict})
	r := st.Report()
	if len(r.Warnings) != 0 || r.Entries != len(unknownLines) {
		t.Errorf("Report() = %+v; want %d entries and no warning lines", r, len(unknownLines))
	}
	if diff := cmp.Diff(wantUnknown, r.Unknown); diff != "" {
		t.Errorf("Report().Unknown (-want +got):\n%s", diff)
	}
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range log {
		if string(e.Raw) != unknownLines[i] {
			t.Errorf("Log()[%d].Raw = %s; want the line %s", i, e.Raw, unknownLines[i])
		}
	}
	if got := leaf(t, st); got != "ffffffff" {
		t.Errorf("Leaf() = %q; want the last entry ffffffff", got)
	}
	next := appendUser(t, st, "after the unknown")
	if next.ParentID != "ffffffff" {
		t.Errorf("append after an unknown entry: parent %q; want ffffffff", next.ParentID)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, path), content+string(next.Raw)+"\n"; got != want {
		t.Errorf("file after the append:\n%s\nwant the original lines and one more:\n%s", got, want)
	}

	// A copy made by batch append is the same file.
	back := open(t, path, jsonl.Options{ReadOnly: true, Mode: jsonl.Strict})
	all, err := back.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	meta, _ := back.Meta(ctx)
	copyPath := filepath.Join(t.TempDir(), "copy.jsonl")
	dst, err := jsonl.Create(ctx, copyPath, meta, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.AppendBatch(ctx, all); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	orig := strings.SplitAfter(readFile(t, path), "\n")[1:]
	got := strings.SplitAfter(readFile(t, copyPath), "\n")[1:]
	if diff := cmp.Diff(orig, got); diff != "" {
		t.Errorf("batch copy's entry lines (-original +copy):\n%s", diff)
	}
	if diff := cmp.Diff(wantUnknown, open(t, copyPath, jsonl.Options{ReadOnly: true}).Report().Unknown); diff != "" {
		t.Errorf("copy's Report().Unknown (-want +got):\n%s", diff)
	}

	// The streaming reader yields them as entries too.
	var types []string
	for rec, err := range jsonl.ReadFile(ctx, path, jsonl.ReadOptions{Mode: jsonl.Strict}) {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind == jsonl.KindEntry {
			types = append(types, string(rec.Entry.Type))
		}
	}
	want := []string{"message", "future_thing", "message", "other_thing", "future_thing", "future_thing", "message"}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("ReadFile entry types (-want +got):\n%s", diff)
	}
}
