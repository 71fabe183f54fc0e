package cli_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree/internal/cli"
	"github.com/sessiontree/sessiontree/jsonl"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int
		err  bool
	}{
		{"1", 1, false},
		{"268435456", 256 << 20, false},
		{"256MiB", 256 << 20, false},
		{"256m", 256 << 20, false},
		{"64 KiB", 64 << 10, false},
		{"1G", 1 << 30, false},
		{"100b", 100, false},
		{"", 0, true},
		{"0", 0, true},
		{"-1", 0, true},
		{"1.5M", 0, true},
		{"MiB", 0, true},
		{"1TiB", 0, true},
		{"99999999999999999999", 0, true},
		{"9223372036854775807G", 0, true},
	}
	for _, tt := range tests {
		got, err := cli.ParseSize(tt.in)
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("ParseSize(%q) = %d, %v; want %d (error %v)", tt.in, got, err, tt.want, tt.err)
		}
		if err != nil && !errors.Is(err, cli.ErrBadArgument) {
			t.Errorf("ParseSize(%q) error %v does not match ErrBadArgument", tt.in, err)
		}
	}
}

func TestMaxLine(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == cli.MaxLineEnv {
				return v
			}
			return ""
		}
	}
	tests := []struct {
		flag, env string
		want      int
		err       bool
	}{
		{"", "", 0, false},
		{"", "1MiB", 1 << 20, false},
		{"2MiB", "1MiB", 2 << 20, false},
		{"", "lots", 0, true},
		{"x", "", 0, true},
	}
	for _, tt := range tests {
		got, err := cli.MaxLine(tt.flag, env(tt.env))
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("MaxLine(%q, env %q) = %d, %v; want %d (error %v)", tt.flag, tt.env, got, err, tt.want, tt.err)
		}
	}
}

func TestReadDraftsLineLimit(t *testing.T) {
	line := `{"type":"message","message":{"role":"user","content":"hi"}}` + "\n"
	in := line + strings.Repeat("x", 5000)
	var n int
	var err error
	for _, e := range cli.ReadDrafts(context.Background(), strings.NewReader(in), 1000) {
		if e != nil {
			err = e
			break
		}
		n++
	}
	var ie *cli.InputError
	var tl *jsonl.LineTooLongError
	if n != 1 || !errors.As(err, &ie) || ie.Line != 2 || !errors.As(err, &tl) || tl.Limit != 1000 || !errors.Is(err, jsonl.ErrLineTooLong) {
		t.Errorf("ReadDrafts over the limit: %d drafts, error %v; want 1 draft, then line 2 too long (limit 1000)", n, err)
	}
	// A line exactly at the limit passes.
	exact := strings.Repeat(" ", 1000-len(line)+1) + line
	for _, e := range cli.ReadDrafts(context.Background(), strings.NewReader(exact), 1000) {
		if e != nil {
			t.Errorf("ReadDrafts at the limit: %v", e)
		}
	}
}
