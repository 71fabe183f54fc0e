package jsonx

import (
	"encoding/json"
	"strings"
	"testing"
)

var grammarCases = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e-3`, `1E+9`, `"a\u00e9\n"`,
	`{"a":[1,{"b":null}],"c":"d"}`, ` { "a" : 1 } `,
	``, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `01`, `1.`, `.5`, `-`, `1e`, `+1`,
	`"\x"`, `"\u12"`, "\"tab\there\"", `"unterminated`, `nul`, `tru`, `{"a":1}x`, `[1 2]`,
	`{"a":1 "b":2}`, "\"\x00\"", `"\/"`, `{"":0}`,
}

func TestValidAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range grammarCases {
		got := Valid([]byte(in)) == nil
		if want := json.Valid([]byte(in)); got != want {
			t.Errorf("Valid(%q) = %v; want %v", in, got, want)
		}
	}
}

func TestObjectMembers(t *testing.T) {
	var keys, vals []string
	err := ObjectMembers([]byte(`{"type":"x", "i\u0064":"1","n":[1,{"a":2}] }`), func(k, v []byte) error {
		keys = append(keys, string(k))
		vals = append(vals, string(v))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(vals, "|") != `"x"|"1"|[1,{"a":2}]` {
		t.Errorf("ObjectMembers values = %q", vals)
	}
	if !KeyEquals([]byte(keys[1]), "id") {
		t.Errorf("KeyEquals(%s, id) = false; want true (escaped key)", keys[1])
	}
	for _, bad := range []string{`[]`, `{"a":1}{}`, `"s"`, ``} {
		if err := ObjectMembers([]byte(bad), nil); err == nil {
			t.Errorf("ObjectMembers(%q) = nil; want an error", bad)
		}
	}
}

func TestDeepNestingIsRefused(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	if err := Valid([]byte(deep)); err == nil {
		t.Errorf("Valid(%d nested arrays) = nil; want a depth error", MaxDepth+1)
	}
	ok := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	if err := Valid([]byte(ok)); err != nil {
		t.Errorf("Valid(100 nested arrays) = %v", err)
	}
}

func TestFieldLastWins(t *testing.T) {
	v, ok := Field([]byte(`{"a":1,"a":2}`), "a")
	if !ok || string(v) != "2" {
		t.Errorf("Field(dup a) = %s, %v; want 2", v, ok)
	}
	if _, ok := Field([]byte(`{"a":1}`), "b"); ok {
		t.Errorf("Field(missing) found something")
	}
}

func FuzzValid(f *testing.F) {
	for _, c := range grammarCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := Valid(b)
		if err != nil && strings.Contains(err.Error(), "nesting deeper than") {
			return // encoding/json allows 10000 levels, SQLite and so Valid 1000
		}
		got := err == nil
		if want := json.Valid(b); got != want {
			t.Errorf("Valid(%q) = %v; encoding/json says %v", b, got, want)
		}
	})
}

func TestFieldAgreesWithEncodingJSON(t *testing.T) {
	docs := []string{
		`{"a":"x\"y","b":[1,{"c":"}"}],"c":{"d":"\\"},"e":-1.5e3,"f":null,"g":true}`,
		` { "a" : "q" , "a" : [ ] } `,
		`{"k\u0065y":"escaped key","s":"\u00e9\"","t":"ends with \\","u":"\\\"q"}`,
	}
	for _, d := range docs {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(d), &m); err != nil {
			t.Fatal(err)
		}
		for k, want := range m {
			got, ok := Field([]byte(d), k)
			if !ok || string(got) != string(want) {
				t.Errorf("Field(%s, %q) = %s, %v; want %s", d, k, got, ok, want)
			}
		}
	}
}

func FuzzField(f *testing.F) {
	f.Add([]byte(`{"a":"x\"y","b":[1,{"c":"}"}]}`), "b")
	f.Add([]byte(`{"a":1}`), "a")
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		got, ok := Field(b, name) // must return on any input
		if ObjectMembers(b, nil) != nil {
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil {
			return
		}
		want, has := m[name]
		if ok != has || (ok && string(bytesTrim(got)) != string(bytesTrim(want))) {
			t.Errorf("Field(%q, %q) = %s, %v; want %s, %v", b, name, got, ok, want, has)
		}
	})
}

func bytesTrim(b []byte) string { return strings.TrimSpace(string(b)) }

// TestFalsy: the JSON values JavaScript takes for false.
func TestFalsy(t *testing.T) {
	for v, want := range map[string]bool{
		`null`: true, `false`: true, `0`: true, `-0`: true, `0.0`: true, `0e5`: true, `""`: true,
		`true`: false, `1`: false, `-0.1`: false, `" "`: false, `"0"`: false, `[]`: false, `{}`: false,
	} {
		if got := Falsy([]byte(v)); got != want {
			t.Errorf("Falsy(%s) = %v; want %v", v, got, want)
		}
	}
}
