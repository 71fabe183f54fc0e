package store

import (
	"slices"
	"strings"
	"testing"
)

// TestMatchSpans holds the spans of matches to whole characters of the
// text whatever case folding does to their lengths: the Kelvin sign
// (3 bytes, k folded), Ⱥ (2, 3) and an invalid byte (1, U+FFFD); İ,
// which the index keeps apart from i, is no match of i.
func TestMatchSpans(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body    string
		needles []string
		want    []span
	}{
		{"\u212Aelvin", []string{"kelvin"}, []span{{0, 8}}},
		{"a\u212Ab", []string{"b"}, []span{{4, 5}}},
		{"\u212AȺxyz", []string{"ⱥx"}, []span{{3, 6}}},
		{"\u212AȺxyz", []string{"k"}, []span{{0, 3}}},
		{"\xff\u212A\xffz", []string{"z"}, []span{{5, 6}}},
		{"\xff\u212A\xffz", []string{"k"}, []span{{1, 4}}},
		{"İx", []string{"i"}, nil},
		{"abcabc", []string{"bc"}, []span{{1, 3}, {4, 6}}},
		{"abcd", []string{"abc", "bcd"}, []span{{0, 4}}}, // merged
	} {
		if got := matchSpans(tc.body, tc.needles); !slices.Equal(got, tc.want) {
			t.Errorf("matchSpans(%q, %q) = %v; want %v", tc.body, tc.needles, got, tc.want)
		}
	}
}

// TestSnippetKeepsGraphemesWhole: a snippet starts and ends, and marks
// a match, between the characters a reader sees, never inside one made
// of several code points (a letter and its combining accent, an emoji
// joined by ZWJ, a flag's two regional indicators).
func TestSnippetKeepsGraphemesWhole(t *testing.T) {
	t.Parallel()
	y29, z114 := strings.Repeat("y", 29), strings.Repeat("z", 114)
	marks := [2]string{"[", "]"}
	for _, tc := range []struct {
		body, needle, want string
	}{
		// 30 characters before the match start at the accent: the
		// snippet starts at its letter.
		{"e\u0301" + y29 + "match", "match", "e\u0301" + y29 + "[match]"},
		{"xe\u0301" + y29 + "match", "match", "…e\u0301" + y29 + "[match]"},
		// A match ending in a letter takes its accent along.
		{"cafe\u0301 x", "cafe", "[cafe\u0301] x"},
		{"cafe\u0301 x", "e", "caf[e\u0301] x"},
		// 120 characters end inside a ZWJ sequence or a flag: the
		// snippet ends after it.
		{"match" + z114 + "👨\u200d👩 tail", "match", "[match]" + z114 + "👨\u200d👩…"},
		{"match" + z114 + "🇯🇵 tail", "match", "[match]" + z114 + "🇯🇵…"},
		{"match" + strings.Repeat("z", 113) + "🇯🇵🇫🇷 tail", "match", "[match]" + strings.Repeat("z", 113) + "🇯🇵…"},
		{"match" + strings.Repeat("z", 112) + "🇯🇵🇫🇷 tail", "match", "[match]" + strings.Repeat("z", 112) + "🇯🇵🇫🇷…"},
		// A letter under a thousand accents is cut after a few of them.
		{"match" + z114 + "a" + strings.Repeat("\u0301", 1000), "match", "[match]" + z114 + "a" + strings.Repeat("\u0301", maxGraphemeExtend) + "…"},
	} {
		if got := snippet(tc.body, []string{tc.needle}, marks); got != tc.want {
			t.Errorf("snippet(%q, %q) =\n%q; want\n%q", tc.body, tc.needle, got, tc.want)
		}
	}
}
