package store_test

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sessiontree/sessiontree/store"
)

// TestSearchScanIgnoresCase: a query of one or two characters too
// common to expand into the index's trigrams is scanned for (its hits
// rank 0, on every engine), and the scan
// ignores case as the index does, for letters beyond ASCII too: "éx"
// and "ÉX" find "Éxplain" and "éx" alike. Before the fix the SQLite
// engine's scan (LIKE) ignored the case of ASCII letters only, so each
// query found one of the two entries, while PostgreSQL found both.
func TestSearchScanIgnoresCase(t *testing.T) {
	t.Parallel()
	onEngines(t, testSearchScanIgnoresCase)
}

func testSearchScanIgnoresCase(t *testing.T, open opener) {
	s := open(t)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s"}))
	var common strings.Builder // "éx" followed by 300 characters: 300 trigrams
	for i := range 300 {
		common.WriteString("éx" + string(rune(0x4e00+i)) + " ")
	}
	b.user("lower", common.String())
	b.user("upper", "Éxplain")
	b.user("like", `a%b c_d e\f`)
	for _, q := range []string{"éx", "ÉX", "Éx", "éX"} {
		hits := search(t, s, q, store.SearchOptions{})
		if got := hitKeys(hits); !slices.Equal(got, []string{"s/lower", "s/upper"}) {
			t.Errorf("Search(%q) = %v; want s/lower and s/upper", q, got)
		}
		for _, h := range hits {
			if h.Rank != 0 {
				t.Errorf("Search(%q) hit %s ranks %v; want 0, scanned", q, h.EntryID, h.Rank)
			}
		}
	}
	// LIKE's own characters, scanned for, stand for themselves.
	for _, q := range []string{`"%"`, `"_"`, `"\"`, `"%b"`, `"e\"`} {
		if got := hitKeys(search(t, s, q, store.SearchOptions{})); !slices.Equal(got, []string{"s/like"}) {
			t.Errorf("Search(%s) = %v; want s/like", q, got)
		}
	}
}

// TestSearchShortQueryFoldsAsIndex: a query of one or two characters,
// expanded into the trigrams of the index that start with it, finds the
// entries holding it, whatever case folding the index applies: FTS5
// folds µ (the micro sign Go writes in durations) to μ and ς to σ, and
// keeps İ, where Go's lower-casing keeps µ and ς and makes İ an i.
// Before the fix, on SQLite, "µs" found no "12.5µs", "ας" no "σας" and
// "İs" no "İstanbul".
func TestSearchShortQueryFoldsAsIndex(t *testing.T) {
	t.Parallel()
	onEngines(t, testSearchShortQueryFoldsAsIndex)
}

func testSearchShortQueryFoldsAsIndex(t *testing.T, open opener) {
	s := open(t)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s"}))
	b.user("micro", "took 12.5µs per op")
	b.user("greek", "ΣΑΣ σας")
	b.user("turkish", "İstanbul")
	for _, tc := range []struct{ q, want string }{
		{"µs", "s/micro"}, {"µ", "s/micro"}, {"ας", "s/greek"}, {"Σ", "s/greek"}, {"İs", "s/turkish"}, {"İ", "s/turkish"},
	} {
		if got := hitKeys(search(t, s, tc.q, store.SearchOptions{})); !slices.Equal(got, []string{tc.want}) {
			t.Errorf("Search(%q) = %v; want %s", tc.q, got, tc.want)
		}
	}
}

// TestSnippetKeepsCharactersWhole: a text whose lower-cased form has
// as many bytes as the text itself but not at the same places (İ
// shrinks from 2 bytes to 1 lower-cased, Ⱥ grows from 2 to 3) is marked
// at its characters' own places: a snippet never cuts a character in
// half.
func TestSnippetKeepsCharactersWhole(t *testing.T) {
	t.Parallel()
	onEngines(t, testSnippetKeepsCharactersWhole)
}

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

// TestSnippetMarksWhatTheIndexFolds: a hit the index finds through its
// own case folding (µ and μ are one letter to FTS5, and to the
// expansion of short queries) has the match marked in its snippet, and
// the snippet around it: before the fix lower-casing (which keeps µ and
// μ apart) found no match, so the snippet was the text's first 120
// characters, without the match.
func TestSnippetMarksWhatTheIndexFolds(t *testing.T) {
	t.Parallel()
	onEngines(t, testSnippetMarksWhatTheIndexFolds)
}

func testSnippetMarksWhatTheIndexFolds(t *testing.T, open opener) {
	s := open(t)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s"}))
	b.user("u", strings.Repeat("x ", 100)+"took 12.5µs per op")
	for _, q := range []string{"μs", "µs"} {
		hits := search(t, s, q, store.SearchOptions{})
		if len(hits) != 1 || !strings.Contains(hits[0].Snippet, "12.5[µs] per op") {
			t.Errorf("Search(%q) = %+v; want the entry, its snippet marking 12.5[µs]", q, hits)
		}
	}
}

// TestSearchFoldsAsOneRule: a query of three characters or more finds
// the text that the SQLite engine's index (FTS5) folds alike, on every
// engine, and no other: ς and σ, the micro sign and μ are one letter,
// İ and i, Georgian's Mtavruli and Mkhedruli are not. Before the fix
// PostgreSQL matched text lower-cased by Go (strings.ToLower), so
// "σασ" and "5μs" found nothing there, and "ist" and "ᲐᲑᲒ" found what
// SQLite does not.
func TestSearchFoldsAsOneRule(t *testing.T) {
	t.Parallel()
	onEngines(t, testSearchFoldsAsOneRule)
}

func testSearchFoldsAsOneRule(t *testing.T, open opener) {
	s := open(t)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s"}))
	b.user("greek", "σας")
	b.user("micro", "took 12.5µs per op")
	b.user("turkish", "İstanbul")
	b.user("georgian", "აბგ")
	b.user("kelvin", "300\u212A hot")
	checkHits(t, s, map[string][]string{
		"σασ": {"s/greek"}, "ΣΑς": {"s/greek"},
		"5μs": {"s/micro"}, "5Μs": {"s/micro"},
		"İst": {"s/turkish"}, "ist": nil, "ıst": nil,
		"აბგ": {"s/georgian"}, "ᲐᲑᲒ": nil,
		"300k": {"s/kelvin"},
	})
}

// TestSearchScanFindsKelvinAndLongS: a one-letter ASCII query, which
// is scanned for, finds the characters beyond ASCII that fold as the
// letter, as the index and the PostgreSQL engine do: the Kelvin sign
// (K) for k and the long s (ſ) for s. Before the fix the SQLite engine's
// scan (LIKE, which ignores ASCII case only) spelled an ASCII letter
// one way, so "k" and "S" missed "\u212a" and "ſ" there and found them on
// PostgreSQL (TestSearchDifferential, seed 3).
func TestSearchScanFindsKelvinAndLongS(t *testing.T) {
	t.Parallel()
	onEngines(t, testSearchScanFindsKelvinAndLongS)
}

func testSearchScanFindsKelvinAndLongS(t *testing.T, open opener) {
	s := open(t)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s"}))
	b.user("kelvin", "300 \u212a")
	b.user("long", "ſ")
	checkHits(t, s, map[string][]string{"k": {"s/kelvin"}, "K": {"s/kelvin"}, "s": {"s/long"}, "S": {"s/long"}})
}
