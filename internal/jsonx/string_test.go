package jsonx

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestStringsAroundWordBoundaries checks the eight-bytes-at-a-time string
// scan: quotes, escapes and control characters at every position of a
// word, escaped quotes right before the end, and long runs of escapes,
// against encoding/json.
func TestStringsAroundWordBoundaries(t *testing.T) {
	specials := []string{`"`, `\"`, `\\`, `\n`, `\u00e9`, "\x01", "\x1f", `\`, `\u12`, "é", "\x7f", " "}
	for n := 0; n < 20; n++ {
		for _, sp := range specials {
			for _, tail := range []string{`"`, `x"`, `"}`, ``} {
				in := `"` + strings.Repeat("a", n) + sp + tail
				got := Valid([]byte(in)) == nil
				if want := json.Valid([]byte(in)); got != want {
					t.Errorf("Valid(%q) = %v; want %v", in, got, want)
				}
				obj := `{"k":` + in + `,"z":1}`
				got = Valid([]byte(obj)) == nil
				if want := json.Valid([]byte(obj)); got != want {
					t.Errorf("Valid(%q) = %v; want %v", obj, got, want)
				}
			}
		}
	}
	long := `"` + strings.Repeat(`ab\"cd\\`, 20000) + `"`
	if err := Valid([]byte(long)); err != nil {
		t.Errorf("Valid(long string of escapes) = %v", err)
	}
	if err := Valid([]byte(long[:len(long)-1])); err == nil {
		t.Errorf("Valid(unterminated long string) = nil; want an error")
	}
}
