package main

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/sessiontree/sessiontree"
)

// corpusFloorUsage is the usage report on the floor: the sums per day of
// a table that holds each session's usage per day, summed already (the
// floor keeps no models).
const corpusFloorUsage = `SELECT day, sum(input), sum(output), sum(cache_read), sum(cache_write), sum(cost)
FROM usage GROUP BY day`

// floorInsertUsage fills the floor's usage table: per session and UTC day
// of the entries' timestamps, the usage records sessiontree.StatsOf
// counts, summed.
func floorInsertUsage(ctx context.Context, tx *sql.Tx, c *corpus) error {
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO usage VALUES(?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for i, entries := range c.entries {
		days := map[string]*sessiontree.Usage{}
		var order []string
		for _, e := range entries {
			es := sessiontree.StatsOf(e)
			if !es.HasUsage {
				continue
			}
			day := sessiontree.UsageDay(e.Timestamp)
			u := days[day]
			if u == nil {
				u = &sessiontree.Usage{}
				days[day] = u
				order = append(order, day)
			}
			u.Input, u.Output, u.CacheRead, u.CacheWrite = u.Input+es.Usage.Input, u.Output+es.Usage.Output,
				u.CacheRead+es.Usage.CacheRead, u.CacheWrite+es.Usage.CacheWrite
			u.Cost += es.Usage.Cost
		}
		for _, day := range order {
			u := days[day]
			if _, err := stmt.ExecContext(ctx, day, i+1, u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Cost); err != nil {
				return err
			}
		}
	}
	return nil
}

// usageCases time the usage report over the whole corpus (store.Usage by
// day, what `sessiontree usage` prints by default); the floor sums a bare
// table of usage per session and day, and the bare-file floor reads every
// file, what a tool summing pi's files must read at least. Each report's total is checked against the corpus's entries
// counted by the root package's rules (sessiontree.Tally).
func usageCases(r *runner, _ *dataset) []benchCase {
	c := r.corpus
	var want sessiontree.Tally
	days := map[string]bool{}
	for _, entries := range c.entries {
		for _, e := range entries {
			es := sessiontree.StatsOf(e)
			want.AddEntryStats(es)
			if es.HasUsage {
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
		corpusFloorCase(r, len(days), func(ctx context.Context, stmt *sql.Stmt) error {
			rows, err := stmt.QueryContext(ctx)
			if err != nil {
				return err
			}
			defer rows.Close()
			n := 0
			for rows.Next() {
				var day string
				var u sessiontree.Usage
				if err := rows.Scan(&day, &u.Input, &u.Output, &u.CacheRead, &u.CacheWrite, &u.Cost); err != nil {
					return err
				}
				n++
			}
			if err := rows.Err(); err != nil {
				return err
			}
			return checkLen("floor usage", n, len(days))
		}, corpusFloorUsage),
		readAllCase(r, nil),
	}
}
