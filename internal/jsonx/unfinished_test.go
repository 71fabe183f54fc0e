package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
)

var unfinishedSeeds = []string{
	`{"type":"message","id":"a1","parentId":null,"n":-12.5e+3,"t":true,"f":false,"z":null,"s":"x\"\\\u00e9y","a":[1,{"b":[]}]}`,
	`[1, 2.0, -0, 1E5, "é", {"k": [true, false, null]}]`,
	`"a string with \n escapes \u12aB"`,
	`-1.5e-7`,
	`{"a":1}}`, `{"a" 1}`, `{"a":1,}`, `{,}`, `[1,]`, `{"a":tru}`, `{"a":nul `, `{"a":"\x"}`, `{"a":"\u12g4"}`,
	`{"a":01}`, `{"a":1.e5}`, `{"a":-}`, "{\"a\":\"\x01\"}", `<<<<<<< HEAD`, `{"a":"b"`, "\x00\x00", ` `, ``,
}

// TestUnfinishedPrefixes checks that every proper prefix of a valid JSON
// text is valid or Unfinished, and that input with an error before its
// end is not Unfinished.
func TestUnfinishedPrefixes(t *testing.T) {
	for _, doc := range unfinishedSeeds[:4] {
		for n := 1; n < len(doc); n++ {
			p := []byte(doc[:n])
			if Valid(p) != nil && !Unfinished(p) {
				t.Errorf("Unfinished(%q) = false; want true (a prefix of %q)", p, doc)
			}
		}
		if Unfinished([]byte(doc)) {
			t.Errorf("Unfinished(%q) = true for valid JSON", doc)
		}
	}
	for _, bad := range []string{`{"a":1}}`, `{"a" 1}`, `{"a":tru}`, `{"a":"\u12g`, `{"a":01`, `{"a":-}`, `<<<<<<< HEAD`, "\x00\x00", ` `, ``, "{\"a\":\"\x01"} {
		if Unfinished([]byte(bad)) {
			t.Errorf("Unfinished(%q) = true; want false", bad)
		}
	}
}

// FuzzUnfinished checks Unfinished against encoding/json, whose Decoder
// says io.ErrUnexpectedEOF for input that ends before its value does.
func FuzzUnfinished(f *testing.F) {
	for _, s := range unfinishedSeeds {
		f.Add([]byte(s))
		for n := 1; n < len(s); n += 3 {
			f.Add([]byte(s[:n]))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if bytes.Count(b, []byte("["))+bytes.Count(b, []byte("{")) > MaxDepth/2 {
			return // the depth limits differ
		}
		var v json.RawMessage
		err := json.NewDecoder(bytes.NewReader(b)).Decode(&v)
		want := errors.Is(err, io.ErrUnexpectedEOF)
		if got := Unfinished(b); got != want {
			t.Errorf("Unfinished(%q) = %v; encoding/json says %v", b, got, err)
		}
	})
}
