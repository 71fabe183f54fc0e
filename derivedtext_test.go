package sessiontree_test

import (
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestDerivedTextNUL: the texts derived from an entry have a space for a
// NUL, after the trim, so a name or label of a NUL alone is set (as
// pi's is), not cleared; the entry's JSON keeps the escape.
func TestDerivedTextNUL(t *testing.T) {
	decode := func(raw string) sessiontree.Entry {
		t.Helper()
		e, err := sessiontree.DecodeEntry([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	const head = `"id":"a","parentId":null,"timestamp":"2026-03-01T10:00:00.000Z"`
	name := decode(`{"type":"session_info",` + head + `,"name":"\u0000"}`)
	label := decode(`{"type":"label",` + head + `,"targetId":"b","label":"x\u0000"}`)
	user := decode(`{"type":"message",` + head + `,"message":{"role":"user","content":[{"type":"text","text":"a\u0000b"}]}}`)
	if got := sessiontree.NameOf(name); got != " " {
		t.Errorf("NameOf(a NUL) = %q; want a space", got)
	}
	if got := sessiontree.LabelOf(label); got != "x " {
		t.Errorf("LabelOf(x NUL) = %q; want %q", got, "x ")
	}
	if got, ok := sessiontree.UserText(user); !ok || got != "a b" {
		t.Errorf("UserText(a NUL b) = %q, %v; want %q", got, ok, "a b")
	}
	if got := sessiontree.DerivedText("no nul"); got != "no nul" {
		t.Errorf("DerivedText(no nul) = %q", got)
	}
}
