package view_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
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
// document with the rows' labels and a bar per row in each of its two
// charts, also when the report is empty and when there are more groups
// than bars.
func TestWriteUsageChart(t *testing.T) {
	t.Parallel()
	many := sessiontree.UsageReport{By: sessiontree.UsageByModel}
	for i := range 45 {
		many.Rows = append(many.Rows, usageRow(fmt.Sprintf("p/model-%02d", i), "", 1, int64(100-i), float64(100-i)))
	}
	for _, tt := range []struct {
		name   string
		rep    sessiontree.UsageReport
		labels []string
		bars   int
	}{
		{"days", sampleReport(sessiontree.UsageByDay), []string{"(unknown)", "2026-11-29", "2026-12-03", "Cost by day, since 2026-11-29"}, 3},
		{"sessions", sampleReport(sessiontree.UsageBySession), []string{"0198f2a4", "0198f2a5", "01a00000"}, 3},
		{"many", many, []string{"p/model-00", "p/model-28", "16 others"}, 30},
		{"empty", sessiontree.UsageReport{By: sessiontree.UsageByWeek}, []string{"Cost by week, all days"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := view.WriteUsageChart(&buf, tt.rep); err != nil {
				t.Fatal(err)
			}
			texts, root, bars := parseSVG(t, buf.Bytes())
			if root != "svg" {
				t.Fatalf("chart's root element is <%s>; want <svg>", root)
			}
			all := strings.Join(texts, "\n")
			for _, l := range tt.labels {
				if !strings.Contains(all, l) {
					t.Errorf("chart has no text %q; texts:\n%s", l, all)
				}
			}
			if bars != 2*tt.bars {
				t.Errorf("chart has %d bars; want %d in each of its two charts", bars, tt.bars)
			}
			if strings.Contains(all, "p/model-29") {
				t.Errorf("chart shows p/model-29; want it among the others")
			}
		})
	}
}

// parseSVG parses an SVG document to its end and returns its text
// content, the name of its root element and how many bars (shapes filled
// with the bars' colour) it draws.
func parseSVG(t *testing.T, doc []byte) (texts []string, root string, bars int) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	depth := 0
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
			if depth == 0 {
				root = tok.Name.Local
			}
			depth++
			for _, a := range tok.Attr {
				if a.Name.Local == "style" && strings.EqualFold(a.Value, "fill:#1f78b4") {
					bars++
				}
			}
		case xml.EndElement:
			depth--
		case xml.CharData:
			if s := strings.TrimSpace(string(tok)); s != "" {
				texts = append(texts, s)
			}
		}
	}
	if depth != 0 {
		t.Fatalf("chart's elements are not all closed (depth %d)", depth)
	}
	return texts, root, bars
}
