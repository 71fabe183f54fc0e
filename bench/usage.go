package main

import (
	"context"
	"fmt"

	"github.com/sessiontree/sessiontree"
)

// usageCases time the usage report over the whole corpus (store.Usage by
// day, what `sessiontree usage` prints by default), and read every file
// as the bare-file floor: what a tool summing pi's files must read at
// least. Each report's total is checked against the corpus's entries
// counted by the root package's rules (sessiontree.Tally).
func usageCases(r *runner, _ *dataset) []benchCase {
	c := r.corpus
	var want sessiontree.Tally
	days := map[string]bool{}
	for _, entries := range c.entries {
		for _, e := range entries {
			want.Add(e)
			if sessiontree.StatsOf(e).HasUsage {
				days[sessiontree.UsageDay(e.Timestamp)] = true
			}
		}
	}
	wantTokens := want.Stats().Tokens
	return []benchCase{
		{backend: backendStore, setup: func(ctx context.Context) (*prepared, error) {
			s := r.corpusStore
			if s == nil {
				return nil, errUnsupported
			}
			note := fmt.Sprintf("store.Usage by day over %d sessions, %d days", len(c.sessions), len(days))
			return &prepared{rows: len(days), note: note, op: func(ctx context.Context) error {
				rep, err := s.Usage(ctx, sessiontree.UsageQuery{By: sessiontree.UsageByDay})
				if err == nil && (len(rep.Rows) != len(days) || rep.Total.Tokens != wantTokens) {
					err = fmt.Errorf("usage: %d days, tokens %+v; want %d days, tokens %+v (the entries tallied)",
						len(rep.Rows), rep.Total.Tokens, len(days), wantTokens)
				}
				return err
			}}, nil
		}},
		readAllCase(r, nil),
	}
}
