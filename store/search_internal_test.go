package store

import (
	"slices"
	"testing"
)

// TestMatchSpans holds the spans of matches to whole characters of the
// text whatever lower-casing does to their lengths: the Kelvin sign
// (3 bytes, k lower-cased), İ (2, i), Ⱥ (2, 3) and an invalid byte (1,
// U+FFFD).
func TestMatchSpans(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body    string
		needles []string
		want    []span
	}{
		{"\u212Aelvin", []string{"kelvin"}, []span{{0, 8}}},
		{"a\u212Ab", []string{"b"}, []span{{4, 5}}},
		{"İȺxyz", []string{"ⱥx"}, []span{{2, 5}}},
		{"İȺxyz", []string{"i"}, []span{{0, 2}}},
		{"\xffİ\xffz", []string{"z"}, []span{{4, 5}}},
		{"\xffİ\xffz", []string{"i"}, []span{{1, 3}}},
		{"abcabc", []string{"bc"}, []span{{1, 3}, {4, 6}}},
		{"abcd", []string{"abc", "bcd"}, []span{{0, 4}}}, // merged
	} {
		if got := matchSpans(tc.body, tc.needles); !slices.Equal(got, tc.want) {
			t.Errorf("matchSpans(%q, %q) = %v; want %v", tc.body, tc.needles, got, tc.want)
		}
	}
}
