package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// BenchmarkSearchEngines runs the same searches over the same corpus
// (searchEngineSessions sessions of searchEnginePerSession generated
// entries, indexed) on each engine, side by side: sub-benchmarks
// engine/query, so that benchstat's medians compare the two in one run.
// The corpus is a tenth of BenchmarkSearch's million entries, which
// takes too long to build on PostgreSQL for every run.
func BenchmarkSearchEngines(b *testing.B) {
	const sessions, perSession = 100, 1000
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			s := e.open(b)
			ctx := context.Background()
			g := newPiGen(11)
			for i := range sessions {
				meta, entries, err := genEntries(g, fmt.Sprintf("/home/dev/project-%02d", i%20), perSession, 0.15)
				if err != nil {
					b.Fatal(err)
				}
				err = s.Database().Update(ctx, func(tx sessiontree.DatabaseTx) error {
					st, err := tx.NewSession(meta, nil)
					if err != nil {
						return err
					}
					return tx.AppendEntries(st, entries)
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			if _, err := s.Index(ctx, store.IndexOptions{}); err != nil {
				b.Fatal(err)
			}
			for _, bc := range []struct{ name, query string }{
				{"rare", "zanzibar"},
				{"rare-cjk", "量子計算"},
				{"identifier", "AppendBatch"},
				{"common", "session"},
				{"phrase", `"error value"`},
				{"two-words", "sqlite migration"},
				{"japanese", "データベース"},
				{"cjk-2-chars", "東京"},
				{"one-char", "e"},
			} {
				b.Run(bc.name, func(b *testing.B) {
					res, err := s.Search(ctx, bc.query, store.SearchOptions{})
					if err != nil || len(res.Hits) == 0 {
						b.Fatalf("Search(%q): %d hits, %v", bc.query, len(res.Hits), err)
					}
					measure(b, func() {
						if _, err := s.Search(ctx, bc.query, store.SearchOptions{}); err != nil {
							b.Fatal(err)
						}
					})
				})
			}
		})
	}
}
