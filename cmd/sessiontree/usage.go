package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/cli"
	"github.com/sessiontree/sessiontree/internal/fsx"
	"github.com/sessiontree/sessiontree/view"
)

func newUsageCommand(a *app) *cobra.Command {
	var since, until, by, chart string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "usage [--since DATE] [--until DATE] [--by day|week|model|cwd|session] [--json] [--chart FILE.svg]",
		Short: "Show the tokens and cost of every session, by day, week, model, directory or session",
		Long: `Show the tokens (input, output, cache read, cache write) and cost of every
session in the database, counted as pi's /session breakdown counts them
(assistant and tool-result message usage, usage entries such as cache
warming, compaction and branch-summary usage) and summed over sessions, so
that the totals are those of "sessiontree info" added up.

--by groups the rows: day (the default) and week (ISO 8601, "2026-W49") in
time order; model (provider/model, and "Tools/summaries" for tool results
and summaries), cwd (the session's working directory) and session by cost,
highest first. A record counts on the UTC date of its entry's timestamp
(on the date as written for a time without zone, whatever the machine's);
records whose timestamp is not a time count on an unknown day, shown as
"(unknown)", and only when no bound is given. --since and --until bound
the days, both included, as YYYY-MM-DD (an RFC 3339 time stands for its UTC
date). Groups with neither tokens nor cost are left out.

With --json: an object {by, since, until, rows: [{key, name (by session,
omitted if none), sessions, tokens {input, output, cacheRead, cacheWrite,
total}, cost}], total: {key: "", sessions, tokens, cost}}; an unknown day's
key is "". With --chart, also draw the rows as bar charts of cost and
tokens into an SVG file.

The report reads the totals the database keeps per session and day, not
the sessions' entries: it takes milliseconds over thousands of sessions.`,
		Example: `  sessiontree usage
  sessiontree usage --since 2026-11-01 --by model
  sessiontree usage --by week --chart usage.svg
  sessiontree usage --by cwd --json | jq '.rows[] | {key, cost}'`,
		Args: args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			q := sessiontree.UsageQuery{By: sessiontree.UsageBy(by)}
			var err error
			if q.Since, err = cli.ParseDay(since); err != nil {
				return usagef("--since: %v", err)
			}
			if q.Until, err = cli.ParseDay(until); err != nil {
				return usagef("--until: %v", err)
			}
			if err := q.Validate(); err != nil {
				return usageError{err}
			}
			s, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			if err := a.checkOutput("--chart", chart); err != nil {
				return err
			}
			rep, err := s.Usage(ctx, q)
			if err != nil {
				return err
			}
			if chart != "" {
				err := fsx.WriteFile(chart, "chart file", 0o600, func(w io.Writer) error { return view.WriteUsageChart(w, rep) })
				if err != nil {
					return fmt.Errorf("usage chart %s: %w", chart, err)
				}
			}
			if asJSON {
				return view.WriteJSON(a.stdout, rep, a.jsonOpts())
			}
			return view.WriteUsage(a.stdout, rep)
		},
	}
	f := cmd.Flags()
	f.Var((*nonEmpty)(&since), "since", "count days from this one on, included (YYYY-MM-DD, UTC)")
	f.Var((*nonEmpty)(&until), "until", "count days up to this one, included (YYYY-MM-DD, UTC)")
	f.StringVar(&by, "by", string(sessiontree.UsageByDay), "group rows by day, week, model, cwd or session")
	f.BoolVar(&asJSON, "json", false, "print a JSON object")
	f.Var((*nonEmpty)(&chart), "chart", "also draw the report as bar charts into this SVG file")
	return cmd
}
