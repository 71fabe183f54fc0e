package store_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree/store"
)

// TestSearchSameOnEngines imports the pi fixtures into a store on each
// engine and holds PostgreSQL's answers to SQLite's: the same hits, in
// the same order, with the same ranks, snippets and active-branch flags,
// for words, phrases, operators, prefixes, short and CJK phrases, and
// scans; first with everything indexed, then with the newest entries
// pending (read by the search itself).
func TestSearchSameOnEngines(t *testing.T) {
	t.Parallel()
	pg := openPostgresStore(t) // skips without a server
	lite := openStore(t)
	paths := fixturePaths(piFixtures(t))
	queries := []string{"sqlite", "SQLite", "römisch", "日本語", "日本", "語", "本語", "テキスト", "🙂", "e", "sqlite beta",
		`"tab	here"`, "sqlite OR beta", "sqlite NOT beta", "(sqlite OR 日本) AND the", "sql*", "th", "zz",
		"NEAR(sqlite beta)", "NEAR(sqlite beta, 0)", "NEAR(sqlite beta 日本語, 30)", "NEAR(beta sqlite, 3)"}
	compare := func(t *testing.T, stage string) {
		t.Helper()
		for _, q := range queries {
			for _, opts := range []store.SearchOptions{{Limit: store.MaxSearchLimit}, {Limit: 5}, {Literal: true}} {
				want := search(t, lite, q, opts)
				got := search(t, pg, q, opts)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: Search(%q, %+v) on PostgreSQL (-SQLite +PostgreSQL):\n%s", stage, q, opts, diff)
				}
			}
		}
	}
	for _, s := range []*store.Store{lite, pg} {
		mustImport(t, s, paths, store.ImportOptions{})
	}
	compare(t, "indexed")

	// More entries, on two branches: a search catches the index up
	// first, on both engines.
	for _, s := range []*store.Store{lite, pg} {
		b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "late", Cwd: "/late"}))
		b.user("l1", "sqlite beta 日本語 late")
		b.assistant("l2", "the römisch answer")
		b.user("l3", "old branch sqlite")
		b.moveTo("l2")
		b.user("l4", "new branch sqlite sqlite")
	}
	compare(t, "pending")
}
