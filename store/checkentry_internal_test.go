package store

import (
	"errors"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestCheckEntry checks each refusal of an import's per-entry check, with
// the line's reason and whether it is fatal in every mode.
func TestCheckEntry(t *testing.T) {
	t.Parallel()
	const ts = `"timestamp":"2026-03-01T10:00:00.000Z"`
	u1 := `{"type":"message","id":"u1","parentId":null,` + ts + `,"message":{"role":"user","content":"a"}}`
	stored := map[string]string{"s1": `{"type":"message","id":"s1","parentId":null,` + ts + `,"message":{"role":"user","content":"s"}}`}
	raw := func(id string) (string, error) {
		if r, ok := stored[id]; ok {
			return r, nil
		}
		return "", sessiontree.ErrNotFound
	}
	tests := []struct {
		name, line, why string
		fatal           bool
	}{
		{"fine", `{"type":"message","id":"a1","parentId":"u1",` + ts + `,"message":{"role":"assistant","content":[]}}`, "", false},
		{"root", `{"type":"message","id":"r2","parentId":null,` + ts + `,"message":{"role":"user","content":"b"}}`, "", false},
		{"missing parent", `{"type":"message","id":"a1","parentId":"zz",` + ts + `,"message":{"role":"user","content":"b"}}`, "parent zz does not exist before this line", false},
		{"same line again", u1, "duplicate of an earlier line", false},
		{"id reused", `{"type":"message","id":"u1","parentId":null,` + ts + `,"message":{"role":"user","content":"other"}}`, "duplicate id with different content", true},
		{"stored line again", stored["s1"], "duplicate of an earlier line", false},
		{"stored id reused", `{"type":"message","id":"s1","parentId":null,` + ts + `,"message":{"role":"user","content":"x"}}`, "duplicate id with different content", true},
		{"label of a missing entry", `{"type":"label","id":"l1","parentId":"u1",` + ts + `,"targetId":"zz","label":"x"}`, "", false},
		{"label", `{"type":"label","id":"l1","parentId":"u1",` + ts + `,"targetId":"s1","label":"x"}`, "", false},
		{"leaf to a missing entry", `{"type":"leaf","id":"f1","parentId":"u1",` + ts + `,"targetId":"zz"}`, "targetId zz does not exist before this line", false},
		{"leaf to null", `{"type":"leaf","id":"f1","parentId":"u1",` + ts + `,"targetId":null}`, "", false},
		{"context edit of a missing entry", `{"type":"context_edit","id":"c1","parentId":"u1",` + ts + `,"targetId":"zz","replacement":null}`, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			known := knownIDs{"s1": 0}
			first, err := sessiontree.DecodeEntry([]byte(u1))
			if err != nil {
				t.Fatal(err)
			}
			known[first.ID] = rawHash(first.Raw)
			e, err := sessiontree.DecodeEntry([]byte(tc.line))
			if err != nil {
				t.Fatal(err)
			}
			why, fatal := checkEntry(e, rawHash(e.Raw), known, raw)
			if why != tc.why || fatal != tc.fatal {
				t.Errorf("checkEntry(%s) = %q, %v; want %q, %v", tc.name, why, fatal, tc.why, tc.fatal)
			}
		})
	}
}

// TestKnownIDsEarlier checks knownIDs as the root replay's Earlier.
func TestKnownIDsEarlier(t *testing.T) {
	t.Parallel()
	var earlier sessiontree.Earlier = knownIDs{"a": 0, "b": 7}
	for _, id := range []string{"a", "b"} {
		if ok, err := earlier.Exists(id); !ok || err != nil || !earlier.Taken(id) {
			t.Errorf("Exists(%s) = %v, %v, Taken %v; want true", id, ok, err, earlier.Taken(id))
		}
	}
	if ok, err := earlier.Exists("c"); ok || err != nil || earlier.Taken("c") {
		t.Errorf("Exists(c) = %v, %v; want false", ok, err)
	}
	err := sessiontree.CheckEntry(sessiontree.Entry{ID: "a"}, &sessiontree.Effects{}, earlier)
	var ce *sessiontree.CorruptError
	if !errors.As(err, &ce) || ce.EntryID != "a" {
		t.Errorf("CheckEntry(duplicate a) = %v; want a CorruptError naming a", err)
	}
}
