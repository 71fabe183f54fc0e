package store_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// TestSearchShortQuerySameOnEngines: a query of one or two characters
// takes the same path on every engine, so gives the same hits: expanded
// into the index's trigrams that start with it and ranked, or, when
// more than the store expands start with it, scanned for (newest first,
// rank 0) alone and refused inside a larger query. Before the fix
// PostgreSQL took every short phrase as its own term: "日本", followed
// by 300 characters, was ranked there (many, few, late) where SQLite
// scans (late, few, many), and "日本 late" found late where SQLite
// refuses the query; the refusal was a storage failure on PostgreSQL.
func TestSearchShortQuerySameOnEngines(t *testing.T) {
	t.Parallel()
	onEngines(t, testSearchShortQuerySameOnEngines)
}

func testSearchShortQuerySameOnEngines(t *testing.T, open opener) {
	s := open(t)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s"}))
	b.user("many", manyTerms())
	b.user("few", "日本語 日本語 日本語")
	b.user("cat", "猫がいる 猫")
	b.user("late", "日本 late")
	for _, tc := range []struct {
		q     string
		want  []string
		ranks bool // ranked: not scanned
	}{
		{"日本", []string{"s/late", "s/few", "s/many"}, false}, // newest first
		{"猫", []string{"s/cat"}, true},
		{"猫 いる", []string{"s/cat"}, true},
	} {
		hits := search(t, s, tc.q, store.SearchOptions{})
		var got []string // in order
		for _, h := range hits {
			got = append(got, h.SessionID+"/"+h.EntryID)
			if (h.Rank != 0) != tc.ranks {
				t.Errorf("Search(%q) hit %s ranks %v; want ranked: %v", tc.q, h.EntryID, h.Rank, tc.ranks)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Search(%q) = %v; want %v", tc.q, got, tc.want)
		}
	}
	_, err := s.Search(t.Context(), "日本 late", store.SearchOptions{})
	var qe *store.QueryError
	if !errors.As(err, &qe) || errors.Is(err, sessiontree.ErrStorage) {
		t.Errorf(`Search("日本 late") = %v; want a QueryError, "日本" too common, not a storage failure`, err)
	}
}

// manyTerms returns a text of 300 trigrams starting with 日本: more than
// the store expands a short phrase into.
func manyTerms() string {
	var many strings.Builder
	for i := range 300 {
		many.WriteString("日本" + string(rune(0x4e00+i)) + " ")
	}
	return many.String()
}

// TestSearchShortPhraseWithoutTerms: a phrase of one or two characters
// no indexed text holds matches nothing, wherever it is in the query.
// Before the fix it became a phrase of three U+FFFF, meant to be in no
// text, which the index reads as U+FFFD, the character of bytes that
// are not UTF-8: "qz" found the entry holding the output of a binary
// file, and "qz OR words" too, on both engines.
func TestSearchShortPhraseWithoutTerms(t *testing.T) {
	t.Parallel()
	onEngines(t, testSearchShortPhraseWithoutTerms)
}

func testSearchShortPhraseWithoutTerms(t *testing.T, open opener) {
	s := open(t)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s"}))
	b.user("bin", "cat of a binary: \ufffd\ufffd\ufffd\ufffd done")
	b.user("txt", "plain words")
	checkHits(t, s, map[string][]string{
		"qz":                   nil,
		"qz OR words":          {"s/txt"},
		"words NOT qz":         {"s/txt"},
		"qz NOT words":         nil,
		"(qz OR zq) AND words": nil,
		"(qz OR words) done":   nil,
		"(qz OR plain) words":  {"s/txt"},
	})
}

// checkHits holds the hits of each query, as hitKeys gives them, to
// the entries it wants.
func checkHits(t *testing.T, s *store.Store, want map[string][]string) {
	t.Helper()
	for q, w := range want {
		if got := hitKeys(search(t, s, q, store.SearchOptions{})); len(got) != len(w) || !slices.Equal(got, w) {
			t.Errorf("Search(%q) = %v; want %v", q, got, w)
		}
	}
}

// TestSearchShortQueryAfterDelete: a short query takes the same path on
// every engine once a session is deleted: the terms of its text go from
// the index's vocabulary with it, so they no longer count toward the
// terms a short phrase is expanded into. FTS5's vocabulary drops them;
// PostgreSQL's search_terms kept them, and "日本", which the session
// left holds in two entries, was still too common there: scanned (rank
// 0), and refused inside "日本 late", where SQLite ranks and answers.
func TestSearchShortQueryAfterDelete(t *testing.T) {
	t.Parallel()
	onEngines(t, testSearchShortQueryAfterDelete)
}

func testSearchShortQueryAfterDelete(t *testing.T, open opener) {
	s := open(t)
	gone := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "gone"}))
	gone.user("many", manyTerms())
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s"}))
	b.user("few", "日本語 日本語 日本語")
	b.user("late", "日本 late")
	search(t, s, "late", store.SearchOptions{}) // indexes them all
	if n, err := s.Delete(t.Context(), "gone"); err != nil || n != 1 {
		t.Fatalf("Delete = %d, %v", n, err)
	}
	for q, want := range map[string][]string{"日本": {"s/few", "s/late"}, "日本 late": {"s/late"}} {
		res, err := s.Search(t.Context(), q, store.SearchOptions{})
		if err != nil || len(res.Hits) == 0 {
			t.Errorf("Search(%q) = %v, %v; want it answered", q, res.Hits, err)
			continue
		}
		hits := res.Hits
		got := hitKeys(hits)
		slices.Sort(got)
		if !slices.Equal(got, want) || hits[0].Rank == 0 {
			t.Errorf("Search(%q) = %v, rank %v; want %v, ranked", q, got, hits[0].Rank, want)
		}
	}
}

// TestSearchScanNotInTheIndexedNewlines: a query of one newline, which
// is scanned for, finds the entries whose text holds one, not every
// entry: the indexed text ends in two newlines (so that each of its
// characters starts a trigram), which are not the entry's, and a phrase
// of fewer than three characters matches where a trigram starts with
// it, as inside a larger query, where it is expanded into those
// trigrams. Before the fix the scan looked for the newline anywhere in
// the indexed text, so "\n" alone found every entry, on both engines,
// and "\n" OR "zzz" none of those without a newline
// (TestSearchDifferential, seed 13).
func TestSearchScanNotInTheIndexedNewlines(t *testing.T) {
	t.Parallel()
	onEngines(t, testSearchScanNotInTheIndexedNewlines)
}

func testSearchScanNotInTheIndexedNewlines(t *testing.T, open opener) {
	s := open(t)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s"}))
	b.user("lines", "two\nlines")
	b.user("end", "ends in x")
	b.user("one", "one line")
	checkHits(t, s, map[string][]string{
		"\"\n\"":        {"s/lines"},
		"\"\n\" OR zzz": {"s/lines"},
		"\"\n\n\"":      nil,
		"\"x\n\"":       {"s/end"}, // a phrase may end in them
	})
}
