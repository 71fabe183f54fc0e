package view_test

import (
	"bytes"
	"testing"

	"github.com/sessiontree/sessiontree/view"
)

func TestStringWidth(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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

func TestCount(t *testing.T) {
	t.Parallel()
	tests := map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4200: "-4,200"}
	for n, want := range tests {
		if got := view.Count(n); got != want {
			t.Errorf("Count(%d) = %q; want %q", n, got, want)
		}
	}
}

func TestUniquePrefixLen(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
