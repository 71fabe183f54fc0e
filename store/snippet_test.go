package store_test

import (
	"testing"
	"unicode/utf8"

	"github.com/sessiontree/sessiontree/store"
)

// TestSnippetKeepsCharactersWhole: a text whose lower-cased form has
// as many bytes as the text itself but not at the same places (İ
// shrinks from 2 bytes to 1 lower-cased, Ⱥ grows from 2 to 3) is marked
// at its characters' own places: a snippet never cuts a character in
// half.
func TestSnippetKeepsCharactersWhole(t *testing.T) { onEngines(t, testSnippetKeepsCharactersWhole) }

func testSnippetKeepsCharactersWhole(t *testing.T, open opener) {
	s := open(t)
	newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s"})).user("u", "İȺxyz tail")
	for _, tc := range []struct{ q, want string }{
		{"xyz", "İȺ<xyz> tail"},
		{"Ⱥxyz", "İ<Ⱥxyz> tail"},
		{"ⱥxyz tail", "İ<Ⱥxyz> <tail>"},
	} {
		hits := search(t, s, tc.q, store.SearchOptions{Literal: true, Marks: [2]string{"<", ">"}})
		if len(hits) != 1 {
			t.Errorf("Search(%q) = %d hits; want 1", tc.q, len(hits))
			continue
		}
		if got := hits[0].Snippet; got != tc.want || !utf8.ValidString(got) {
			t.Errorf("Search(%q) snippet %q (valid UTF-8: %v); want %q", tc.q, got, utf8.ValidString(got), tc.want)
		}
	}
}
