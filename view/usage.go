package view

import (
	"fmt"
	"io"
	"math"

	"github.com/sessiontree/sessiontree"
)

// unknownDay is how a report shows the group of records whose day is
// unknown (a timestamp that is not RFC 3339).
const unknownDay = "(unknown)"

// usageKeys returns the labels of a report's rows: by session the
// shortest id prefix that tells them apart (at least 8 characters), an
// unknown day or week as unknownDay, other keys as they are.
func usageKeys(rep sessiontree.UsageReport) []string {
	keys := make([]string, len(rep.Rows))
	for i, r := range rep.Rows {
		keys[i] = r.Key
	}
	switch rep.By {
	case sessiontree.UsageBySession:
		n := UniquePrefixLen(keys, 8)
		for i, k := range keys {
			keys[i] = k[:min(n, len(k))]
		}
	case sessiontree.UsageByDay, sessiontree.UsageByWeek:
		for i, k := range keys {
			if k == "" {
				keys[i] = unknownDay
			}
		}
	}
	return keys
}

// usageBy names a report's grouping: its By, or "day" for "" (the
// default).
func usageBy(rep sessiontree.UsageReport) string {
	if rep.By == "" {
		return string(sessiontree.UsageByDay)
	}
	return string(rep.By)
}

// usageRange says which days a report covers: "all days", "since D",
// "until D" or "D1 to D2".
func usageRange(rep sessiontree.UsageReport) string {
	switch {
	case rep.Since == "" && rep.Until == "":
		return "all days"
	case rep.Until == "":
		return "since " + rep.Since
	case rep.Since == "":
		return "until " + rep.Until
	}
	return rep.Since + " to " + rep.Until
}

// WriteUsage writes a usage report as a table: one row per group (its
// key, by session also the name), the sessions with usage in it, input,
// output, cache read, cache write and total tokens, and the cost in
// dollars; then a total row. A report without usage prints one line
// saying so.
func WriteUsage(w io.Writer, rep sessiontree.UsageReport) error {
	if len(rep.Rows) == 0 {
		if _, err := fmt.Fprintf(w, "no usage recorded (%s)\n", usageRange(rep)); err != nil {
			return fmt.Errorf("write usage: %w", err)
		}
		return nil
	}
	by := usageBy(rep)
	cols := []Column{{Header: by, Max: 48, CutLeft: rep.By == sessiontree.UsageByCwd}}
	bySession := rep.By == sessiontree.UsageBySession
	if bySession {
		cols = append(cols, Column{Header: "name", Max: 40})
	}
	for _, h := range []string{"sessions", "input", "output", "cache read", "cache write", "tokens", "cost"} {
		cols = append(cols, Column{Header: h, Right: true})
	}
	t := NewTable(cols...)
	add := func(key, name string, r sessiontree.UsageRow) {
		cells := []string{key}
		if bySession {
			cells = append(cells, name)
		}
		tk := r.Tokens
		cells = append(cells, Count(r.Sessions), Count(tk.Input), Count(tk.Output), Count(tk.CacheRead),
			Count(tk.CacheWrite), Count(tk.Total), fmt.Sprintf("$%.4f", r.Cost))
		t.Add(cells...)
	}
	for i, key := range usageKeys(rep) {
		add(key, rep.Rows[i].Name, rep.Rows[i])
	}
	add("total", "", rep.Total)
	return t.Write(w)
}

// barColor is the colour of a usage chart's bars.
const barColor = "#1f78b4"

// maxChartBars is how many groups a chart of models, directories or
// sessions shows; the rest are one bar, "others". Days and weeks are all
// shown.
const maxChartBars = 30

// WriteUsageChart draws a usage report as an SVG image: two bar charts,
// cost in dollars above and tokens in millions below, one bar per group
// in the report's order (the most expensive groups first when not by day
// or week, at most maxChartBars of them), each bar's exact figure in its
// tooltip.
func WriteUsageChart(w io.Writer, rep sessiontree.UsageReport) error {
	keys, rows := usageKeys(rep), rep.Rows
	timeline := rep.By == "" || rep.By == sessiontree.UsageByDay || rep.By == sessiontree.UsageByWeek
	if !timeline && len(rows) > maxChartBars {
		others := sessiontree.UsageRow{}
		for _, r := range rows[maxChartBars-1:] {
			others.Cost += r.Cost
			others.Tokens.Total += r.Tokens.Total
		}
		keys = append(keys[:maxChartBars-1:maxChartBars-1], fmt.Sprintf("%d others", len(rows)-maxChartBars+1))
		rows = append(rows[:maxChartBars-1:maxChartBars-1], others)
	}
	by := usageBy(rep)
	cost := barPanel{title: fmt.Sprintf("Cost by %s, %s: $%.2f", by, usageRange(rep), rep.Total.Cost), yLabel: "cost ($)", keys: keys}
	tokens := barPanel{title: fmt.Sprintf("Tokens by %s: %s", by, Count(rep.Total.Tokens.Total)), yLabel: "tokens (millions)", keys: keys}
	for i, r := range rows {
		cost.values = append(cost.values, r.Cost)
		cost.tips = append(cost.tips, fmt.Sprintf("%s: $%.4f", keys[i], r.Cost))
		tokens.values = append(tokens.values, float64(r.Tokens.Total)/1e6)
		tokens.tips = append(tokens.tips, fmt.Sprintf("%s: %s tokens", keys[i], Count(r.Tokens.Total)))
	}
	// 0.3 inch a bar, within 7 to 40 inches: a year of days gets
	// narrower bars.
	width := 72 * math.Max(7, math.Min(40, 1.5+0.3*float64(len(rows))))
	if err := writeBarCharts(w, width, 8*72, cost, tokens); err != nil {
		return fmt.Errorf("usage %w", err)
	}
	return nil
}
