package view_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree/view"
)

func TestStringWidth(t *testing.T) {
	tests := []struct {
		s    string
		want int
	}{
		{"", 0}, {"abc", 3}, {"日本語", 6}, {"römisch", 7}, {"emoji🙂", 7}, {"a\tb", 2},
	}
	for _, tt := range tests {
		if got := view.StringWidth(tt.s); got != tt.want {
			t.Errorf("StringWidth(%q) = %d; want %d", tt.s, got, tt.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		s    string
		cols int
		want string
	}{
		{"hello world", 0, "hello world"},
		{"hello world", 11, "hello world"},
		{"hello world", 8, "hello w…"},
		{"日本語のテキスト", 7, "日本語…"},
		{"日本語", 5, "日本…"},
		{"ab", 1, "…"},
	}
	for _, tt := range tests {
		got := view.Truncate(tt.s, tt.cols)
		if got != tt.want {
			t.Errorf("Truncate(%q, %d) = %q; want %q", tt.s, tt.cols, got, tt.want)
		}
		if tt.cols > 0 && view.StringWidth(got) > tt.cols {
			t.Errorf("Truncate(%q, %d) = %q is %d columns wide", tt.s, tt.cols, got, view.StringWidth(got))
		}
	}
	if got := view.TruncateLeft("/home/me/project/src", 10); got != "…oject/src" {
		t.Errorf("TruncateLeft = %q; want %q", got, "…oject/src")
	}
}

func TestOneLine(t *testing.T) {
	tests := map[string]string{
		"":                     "",
		"  a \n\n b\tc  ":      "a b c",
		"new\r\nline\x1b[31m":  "new line[31m",
		"tab\there römisch 日本": "tab here römisch 日本",
	}
	for in, want := range tests {
		if got := view.OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestRelativeTime(t *testing.T) {
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		ago  time.Duration
		want string
	}{
		{0, "just now"},
		{500 * time.Millisecond, "just now"},
		{time.Second, "1 second ago"},
		{45 * time.Second, "45 seconds ago"},
		{time.Minute, "1 minute ago"},
		{3*time.Minute + 59*time.Second, "3 minutes ago"},
		{time.Hour, "1 hour ago"},
		{23 * time.Hour, "23 hours ago"},
		{24 * time.Hour, "1 day ago"},
		{13 * 24 * time.Hour, "13 days ago"},
		{14 * 24 * time.Hour, "2 weeks ago"},
		{59 * 24 * time.Hour, "8 weeks ago"},
		{60 * 24 * time.Hour, "2 months ago"},
		{364 * 24 * time.Hour, "12 months ago"},
		{365 * 24 * time.Hour, "1 year ago"},
		{3 * 365 * 24 * time.Hour, "3 years ago"},
		{-3 * time.Minute, "in 3 minutes"},
	}
	for _, tt := range tests {
		if got := view.RelativeTime(base.Add(-tt.ago), base); got != tt.want {
			t.Errorf("RelativeTime(now-%v) = %q; want %q", tt.ago, got, tt.want)
		}
	}
}

func TestCount(t *testing.T) {
	tests := map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4200: "-4,200"}
	for n, want := range tests {
		if got := view.Count(n); got != want {
			t.Errorf("Count(%d) = %q; want %q", n, got, want)
		}
	}
}

func TestUniquePrefixLen(t *testing.T) {
	tests := []struct {
		ids  []string
		want int
	}{
		{nil, 8},
		{[]string{"0198f2a4-5c1e"}, 8},
		{[]string{"0198f2a4-5c1e", "0198f2a4-5c1e"}, 8},
		{[]string{"0198f2a4-5c1e", "0198f2a4-7e00", "01a237bc-c4aa"}, 10},
		{[]string{"abc", "abd"}, 8},
	}
	for _, tt := range tests {
		if got := view.UniquePrefixLen(tt.ids, 8); got != tt.want {
			t.Errorf("UniquePrefixLen(%q, 8) = %d; want %d", tt.ids, got, tt.want)
		}
	}
}

func TestTable(t *testing.T) {
	tb := view.NewTable(view.Column{Header: "name"}, view.Column{Header: "n", Right: true}, view.Column{Header: "note"})
	tb.Add("alpha", "1", "")
	tb.Add("日本語", "1000", "two\nlines")
	tb.Add("x")
	var buf bytes.Buffer
	if err := tb.Write(&buf); err != nil {
		t.Fatal(err)
	}
	want := "NAME       N  NOTE\n" +
		"alpha      1\n" +
		"日本語  1000  two lines\n" +
		"x\n"
	if buf.String() != want {
		t.Errorf("Table.Write() =\n%s\nwant\n%s", buf.String(), want)
	}
	if tb.Len() != 3 {
		t.Errorf("Table.Len() = %d; want 3", tb.Len())
	}
}

func TestProgressPiped(t *testing.T) {
	var buf bytes.Buffer
	p := view.NewProgress(&buf, view.ProgressOptions{})
	for i := range 100 {
		p.Update(view.ProgressStatus{FilesDone: i, FilesTotal: 100, BytesDone: int64(i) << 20, BytesTotal: 100 << 20, Entries: int64(i) * 1000})
	}
	if err := p.Done(); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Errorf("piped progress wrote %q; want nothing", buf.String())
	}
}

func TestProgressEntries(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p := view.NewProgress(&buf, view.ProgressOptions{Terminal: true, Width: 100, Now: func() time.Time { return clock }})
	clock = clock.Add(2 * time.Second)
	p.Update(view.ProgressStatus{Entries: 1_200, EntriesTotal: 4_800})
	if err := p.Done(); err != nil {
		t.Fatal(err)
	}
	want := "\r[======>                 ] 1,200/4,800 entries  600 entries/s\x1b[K\r\x1b[K"
	if buf.String() != want {
		t.Errorf("entries progress wrote\n%q\nwant\n%q", buf.String(), want)
	}
}

func TestProgressTerminal(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p := view.NewProgress(&buf, view.ProgressOptions{Terminal: true, Width: 100, Now: func() time.Time { return clock }})
	clock = clock.Add(2 * time.Second)
	p.Update(view.ProgressStatus{FilesDone: 12, FilesTotal: 40, BytesDone: 3_200_000, BytesTotal: 10_000_000, Entries: 90_000})
	p.Update(view.ProgressStatus{FilesDone: 13, FilesTotal: 40}) // within the interval: dropped
	clock = clock.Add(time.Second)
	p.Update(view.ProgressStatus{FilesDone: 40, FilesTotal: 40, BytesDone: 10_000_000, BytesTotal: 10_000_000, Entries: 300_000})
	if err := p.Done(); err != nil {
		t.Fatal(err)
	}
	want := "\r[=======>                ] 12/40 files  3.2/10.0 MB  45,000 entries/s\x1b[K" +
		"\r[========================] 40/40 files  10.0/10.0 MB  100,000 entries/s\x1b[K" +
		"\r\x1b[K"
	if buf.String() != want {
		t.Errorf("terminal progress wrote\n%q\nwant\n%q", buf.String(), want)
	}
	if strings.Contains(buf.String(), "13/40") {
		t.Errorf("an update inside the interval was drawn")
	}
}
