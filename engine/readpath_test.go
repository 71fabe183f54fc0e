package engine_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// TestReadShapes reads entries whose JSON starts with their fields (the
// canonical shape, read from the JSON's start) and entries in other
// shapes (decoded whole): fields in another order, escaped, or the shape
// followed by the same names again, which the decoder takes instead. Every
// read gives the fields the entry was appended with.
func TestReadShapes(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, filepath.Join(t.TempDir(), "s.db"), engine.Options{})
	st := newSession(t, db)
	raws := []string{
		`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-01T10:00:00.000Z","message":{"role":"user","content":"x"}}`,
		`{"id":"a2","timestamp":"2026-03-01T10:00:01.000Z","parentId":"a1","type":"message","message":{"role":"user","content":"x"}}`,
		`{"type":"message","id":"a\u0033","parentId":"a2","timestamp":"2026-03-01T10:00:02.000Z","message":{"role":"user","content":"x"}}`,
		`{"type":"message","id":"dup","parentId":"a3","timestamp":"2026-03-01T10:00:03.000Z","id":"a4","message":{"role":"user","content":"x"}}`,
		`{"type":"label","id":"a5","parentId":"a4","timestamp":"2026-03-01T10:00:04.000Z","targetId":"a1","label":"l"}`,
	}
	var want []sessiontree.Entry
	for _, raw := range raws {
		e, err := sessiontree.DecodeEntry([]byte(raw))
		if err != nil {
			t.Fatalf("DecodeEntry(%s): %v", raw, err)
		}
		want = append(want, e)
	}
	if err := st.AppendBatch(ctx, want); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		want[i].Seq = int64(i + 1)
	}
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("Log (-want +got):\n%s", diff)
	}
	path, err := st.Path(ctx, "a5")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, path); diff != "" {
		t.Errorf("Path(a5) (-want +got):\n%s", diff)
	}
	heads, err := st.LogHeads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(withoutRaw(want), heads); diff != "" {
		t.Errorf("LogHeads (-want +got):\n%s", diff)
	}
	for _, w := range want {
		got, err := st.Entry(ctx, w.ID)
		if err != nil || !cmp.Equal(w, got) {
			t.Errorf("Entry(%q) = %+v, %v; want %+v", w.ID, got, err, w)
		}
	}
}
