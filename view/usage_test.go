package view_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/view"
)

// usageRow is a report row with tokens t of each kind.
func usageRow(key, name string, sessions, t int64, cost float64) sessiontree.UsageRow {
	return sessiontree.UsageRow{Key: key, Name: name, Sessions: sessions, Cost: cost,
		Tokens: sessiontree.TokenStats{Input: t, Output: 2 * t, CacheRead: 3 * t, CacheWrite: 4 * t, Total: 10 * t}}
}

func sampleReport(by sessiontree.UsageBy) sessiontree.UsageReport {
	rep := sessiontree.UsageReport{By: by, Since: "2026-11-29", Total: usageRow("", "", 3, 1111, 7.75)}
	switch by {
	case sessiontree.UsageBySession:
		rep.Rows = []sessiontree.UsageRow{
			usageRow("0198f2a4-aaaa-7000-8000-000000000001", "refactor", 1, 1000, 4),
			usageRow("0198f2a5-aaab-7000-8000-000000000002", "", 1, 100, 2.5),
			usageRow("01a00000-0000-7000-8000-000000000003", "tests", 1, 11, 1.25),
		}
	default:
		rep.Rows = []sessiontree.UsageRow{
			usageRow("", "", 1, 1, 0.5),
			usageRow("2026-11-29", "", 2, 110, 1.25),
			usageRow("2026-12-03", "", 1, 1000, 6),
		}
	}
	return rep
}

// TestWriteUsage checks the table: a column per token kind, the cost in
// dollars, a total row, session ids cut to the prefix that tells them
// apart with the name beside them, and the unknown day spelled out.
func TestWriteUsage(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		by   sessiontree.UsageBy
		want string
	}{
		{sessiontree.UsageByDay, `
DAY         SESSIONS  INPUT  OUTPUT  CACHE READ  CACHE WRITE  TOKENS     COST
(unknown)          1      1       2           3            4      10  $0.5000
2026-11-29         2    110     220         330          440   1,100  $1.2500
2026-12-03         1  1,000   2,000       3,000        4,000  10,000  $6.0000
total              3  1,111   2,222       3,333        4,444  11,110  $7.7500
`},
		{sessiontree.UsageBySession, `
SESSION   NAME      SESSIONS  INPUT  OUTPUT  CACHE READ  CACHE WRITE  TOKENS     COST
0198f2a4  refactor         1  1,000   2,000       3,000        4,000  10,000  $4.0000
0198f2a5                   1    100     200         300          400   1,000  $2.5000
01a00000  tests            1     11      22          33           44     110  $1.2500
total                      3  1,111   2,222       3,333        4,444  11,110  $7.7500
`},
	} {
		var buf bytes.Buffer
		if err := view.WriteUsage(&buf, sampleReport(tt.by)); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(strings.TrimPrefix(tt.want, "\n"), buf.String()); diff != "" {
			t.Errorf("WriteUsage(by %s) (-want +got):\n%s", tt.by, diff)
		}
	}
	var buf bytes.Buffer
	if err := view.WriteUsage(&buf, sessiontree.UsageReport{By: sessiontree.UsageByModel, Until: "2026-12-03"}); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "no usage recorded (until 2026-12-03)\n"; got != want {
		t.Errorf("WriteUsage(no rows) = %q; want %q", got, want)
	}
}

// TestUsageJSON checks the report's JSON shape, which scripts read.
func TestUsageJSON(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := view.WriteJSON(&buf, sampleReport(sessiontree.UsageBySession), view.JSONOptions{}); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	rows := got["rows"].([]any)
	want := map[string]any{
		"by": "session", "since": "2026-11-29", "until": "",
		"total": map[string]any{"key": "", "sessions": 3.0, "cost": 7.75, "tokens": map[string]any{
			"input": 1111.0, "output": 2222.0, "cacheRead": 3333.0, "cacheWrite": 4444.0, "total": 11110.0}},
		"rows": []any{
			map[string]any{"key": "0198f2a4-aaaa-7000-8000-000000000001", "name": "refactor", "sessions": 1.0, "cost": 4.0,
				"tokens": map[string]any{"input": 1000.0, "output": 2000.0, "cacheRead": 3000.0, "cacheWrite": 4000.0, "total": 10000.0}},
			rows[1], rows[2],
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("usage JSON (-want +got):\n%s", diff)
	}
	if _, named := rows[1].(map[string]any)["name"]; named {
		t.Errorf("usage JSON row without a name has a name key: %v", rows[1])
	}
}

// TestWriteUsageChart checks that the chart is a well-formed SVG
// document with the report's titles and two bar charts, cost and tokens,
// each with one bar per row in the report's order, its tooltip naming
// the row and its height proportional to the row's figure; also when the
// report is empty, when there are more groups than bars and when a
// directory is too long to write under its bar.
func TestWriteUsageChart(t *testing.T) {
	t.Parallel()
	many := sessiontree.UsageReport{By: sessiontree.UsageByModel}
	for i := range 45 {
		many.Rows = append(many.Rows, usageRow(fmt.Sprintf("p/model-%02d", i), "", 1, int64(100-i), float64(100-i)))
	}
	others := usageRow("16 others", "", 0, 0, 0)
	for _, r := range many.Rows[29:] {
		others.Cost += r.Cost
		others.Tokens.Total += r.Tokens.Total
	}
	cwd := sessiontree.UsageReport{By: sessiontree.UsageByCwd, Rows: []sessiontree.UsageRow{
		usageRow("/home/someone/src/github.com/sessiontree/sessiontree/cmd", "", 1, 5, 2),
		usageRow("/tmp", "", 1, 10, 1),
	}}
	// A session file may put anything in a model's or a directory's name;
	// XML allows no control character but tab and line breaks, no byte
	// that is not UTF-8, no U+FFFE.
	hostile := sessiontree.UsageReport{By: sessiontree.UsageByModel, Rows: []sessiontree.UsageRow{
		usageRow("p/m\x1b[2J\x01", "", 1, 3, 3), usageRow("p/\xff\xfe", "", 1, 2, 2), usageRow("p/\ufffe", "", 1, 1, 1),
	}}
	for _, tt := range []struct {
		name   string
		rep    sessiontree.UsageReport
		texts  []string // among the texts, the labels under the bars
		keys   []string // the bars' rows, by key
		rows   []sessiontree.UsageRow
		absent string
	}{
		{name: "days", rep: sampleReport(sessiontree.UsageByDay),
			texts: []string{"Cost by day, since 2026-11-29: $7.75", "Tokens by day: 11,110", "cost ($)", "tokens (millions)",
				"(unknown)", "2026-11-29", "2026-12-03"},
			keys: []string{"(unknown)", "2026-11-29", "2026-12-03"}, rows: sampleReport(sessiontree.UsageByDay).Rows},
		{name: "sessions", rep: sampleReport(sessiontree.UsageBySession), texts: []string{"0198f2a4", "0198f2a5", "01a00000"},
			keys: []string{"0198f2a4", "0198f2a5", "01a00000"}, rows: sampleReport(sessiontree.UsageBySession).Rows},
		{name: "many", rep: many, texts: []string{"p/model-00", "p/model-28", "16 others"}, keys: append(chartKeys(many.Rows[:29]), "16 others"),
			rows: append(many.Rows[:29:29], others), absent: "p/model-29"},
		{name: "cwd", rep: cwd, texts: []string{"…com/sessiontree/sessiontree/cmd", "/tmp"},
			keys: chartKeys(cwd.Rows), rows: cwd.Rows, absent: "/home/someone/src"},
		{name: "hostile", rep: hostile, texts: []string{"p/m\uFFFD[2J\uFFFD", "p/\uFFFD\uFFFD", "p/\uFFFD"},
			keys: []string{"p/m\uFFFD[2J\uFFFD", "p/\uFFFD\uFFFD", "p/\uFFFD"}, rows: hostile.Rows},
		{name: "empty", rep: sessiontree.UsageReport{By: sessiontree.UsageByWeek},
			texts: []string{"Cost by week, all days: $0.00", "Tokens by week: 0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := view.WriteUsageChart(&buf, tt.rep); err != nil {
				t.Fatal(err)
			}
			c := parseSVG(t, buf.Bytes())
			all := strings.Join(c.texts, "\n")
			for _, l := range tt.texts {
				if !slices.Contains(c.texts, l) {
					t.Errorf("chart has no text %q; texts:\n%s", l, all)
				}
			}
			if tt.absent != "" && strings.Contains(all, tt.absent) {
				t.Errorf("chart shows %q; want it cut or among the others", tt.absent)
			}
			if len(c.bars) != 2*len(tt.rows) {
				t.Fatalf("chart has %d bars; want %d in each of its two charts", len(c.bars), len(tt.rows))
			}
			n := len(tt.rows)
			checkBars(t, "cost", c.bars[:n], tt.keys, tt.rows, func(r sessiontree.UsageRow) float64 { return r.Cost })
			checkBars(t, "tokens", c.bars[n:], tt.keys, tt.rows, func(r sessiontree.UsageRow) float64 { return float64(r.Tokens.Total) })
		})
	}
}

// chartKeys returns the rows' keys.
func chartKeys(rows []sessiontree.UsageRow) []string {
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = r.Key
	}
	return keys
}

// checkBars checks that one chart's bars are the rows in order: each
// bar's tooltip starts with its row's key, and the bars' heights are in
// the proportions of the rows' figures.
func checkBars(t *testing.T, chart string, bars []svgBar, keys []string, rows []sessiontree.UsageRow, figure func(sessiontree.UsageRow) float64) {
	t.Helper()
	top := 0
	for i, r := range rows {
		if figure(r) > figure(rows[top]) {
			top = i
		}
	}
	for i, b := range bars {
		if !strings.HasPrefix(b.tip, keys[i]+": ") {
			t.Errorf("%s chart's bar %d is %q; want the row %q", chart, i, b.tip, keys[i])
		}
		want := figure(rows[i]) / figure(rows[top]) * bars[top].height
		if math.Abs(b.height-want) > 0.02 {
			t.Errorf("%s chart's bar %d (%s) is %.2f high; want %.2f, in proportion to the highest", chart, i, keys[i], b.height, want)
		}
	}
}

// An svgChart is what parseSVG reads of a chart.
type svgChart struct {
	texts []string // the <text> elements' content
	bars  []svgBar // the rectangles filled with the bars' colour, in order
}

// An svgBar is a bar of a chart: its height and its tooltip.
type svgBar struct {
	height float64
	tip    string
}

// parseSVG parses an SVG document to its end, checks that its root is
// <svg> and that its elements nest, and returns its texts and bars.
func parseSVG(t *testing.T, doc []byte) svgChart {
	t.Helper()
	var c svgChart
	dec := xml.NewDecoder(bytes.NewReader(doc))
	var stack []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("chart is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if len(stack) == 0 && tok.Name.Local != "svg" {
				t.Fatalf("chart's root element is <%s>; want <svg>", tok.Name.Local)
			}
			stack = append(stack, tok.Name.Local)
			if tok.Name.Local == "rect" && attr(tok, "fill") == "#1f78b4" {
				h, err := strconv.ParseFloat(attr(tok, "height"), 64)
				if err != nil {
					t.Fatalf("bar's height: %v", err)
				}
				c.bars = append(c.bars, svgBar{height: h})
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			s := strings.TrimSpace(string(tok))
			switch {
			case s == "" || len(stack) == 0:
			case stack[len(stack)-1] == "text":
				c.texts = append(c.texts, s)
			case stack[len(stack)-1] == "title" && len(c.bars) > 0:
				c.bars[len(c.bars)-1].tip = s
			}
		}
	}
	if len(stack) != 0 {
		t.Fatalf("chart's elements are not all closed: %v", stack)
	}
	return c
}

// attr returns the value of an element's attribute, "" if it has none.
func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}
