package sessiontree

import (
	"fmt"
	"testing"
	"unicode"
)

// TestMemberOfAgreesWithNames checks that memberOf's switch finds every
// name of memberNames at its index, written plainly or with an escape,
// and nothing else.
func TestMemberOfAgreesWithNames(t *testing.T) {
	if len(memberNames) != int(nMembers) {
		t.Fatalf("%d member names for %d members", len(memberNames), nMembers)
	}
	for i, n := range memberNames {
		plain := `"` + n + `"`
		escaped := fmt.Sprintf(`"\u%04x%s"`, n[0], n[1:])
		for _, key := range []string{plain, escaped} {
			if got := memberOf([]byte(key)); got != i {
				t.Errorf("memberOf(%s) = %d; want %d", key, got, i)
			}
		}
		if got := memberOf([]byte(`"` + n + `x"`)); got != -1 {
			t.Errorf("memberOf(%q) = %d; want -1", n+"x", got)
		}
	}
}

// TestJSText checks jsText against JavaScript's String() of each JSON
// value (node 20 wrote the right column): how pi's tree shows a label
// that is not a string.
func TestJSText(t *testing.T) {
	for _, tc := range [][2]string{
		{"5", "5"}, {"-5", "-5"}, {"1.5e300", "1.5e+300"}, {"1e21", "1e+21"}, {"1e-7", "1e-7"},
		{"9.99e-8", "9.99e-8"}, {"123456789012345678901", "123456789012345680000"}, {"0.1", "0.1"},
		{"1.0", "1"}, {"100", "100"}, {"-0.000001", "-0.000001"}, {"1e400", "Infinity"}, {"-1e400", "-Infinity"},
		{"true", "true"}, {`{"a":1}`, "[object Object]"}, {`[1,"a",null,[2,[3]],{},true]`, "1,a,,2,3,[object Object],true"},
		{"[]", ""}, {"[null]", ""}, {`"x"`, "x"},
	} {
		if got := jsText([]byte(tc[0])); got != tc[1] {
			t.Errorf("jsText(%s) = %q; want %q", tc[0], got, tc[1])
		}
	}
}

// TestJSTrimIsJavaScripts holds isJSSpace to the code points JavaScript's
// String.prototype.trim removes: node 20 listed them, trying every code
// point c with (String.fromCodePoint(c) + "x").trim() === "x".
func TestJSTrimIsJavaScripts(t *testing.T) {
	want := map[rune]bool{}
	for _, r := range []rune{0x9, 0xA, 0xB, 0xC, 0xD, 0x20, 0xA0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004,
		0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF} {
		want[r] = true
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if isJSSpace(r) != want[r] {
			t.Errorf("isJSSpace(%U) = %v; want %v", r, !want[r], want[r])
		}
	}
	if got := NameOf(Entry{Type: TypeSessionInfo, Raw: []byte(`{"name":"\ufeff\u0085 x \u0085\ufeff"}`)}); got != "\u0085 x \u0085" {
		t.Errorf("NameOf = %q; want U+0085 kept, U+FEFF trimmed", got)
	}
}
