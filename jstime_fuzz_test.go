package sessiontree_test

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sessiontree/sessiontree"
)

// FuzzParseTime parses arbitrary timestamps. ParseTime never panics,
// and what it reads JavaScript's Date reads as the same millisecond
// (checked against node, when there is one on the PATH: Date.parse in
// a process that reads one JSON string a line). Date reads more than
// ParseTime (V8's legacy forms: "Dec 1 2026", "2026-12-1", "0010-01-01
// 00:00", which is 1 October 2001), which only
// a file pi did not write can hold: that difference is not checked.
func FuzzParseTime(f *testing.F) {
	for _, c := range piTimestamps(f) {
		f.Add(c.text)
	}
	for _, s := range []string{"+275760-09-13T00:00:00.000Z", "-271821-04-20T00:00:00.000Z", "-000000-01-01T00:00Z", "2026-12-01 10:00",
		"2026-02-30T10:00Z", "0000-01-01T00:00Z", "2026-12-01t10:00:00z", "2026-12-01T10:00:00.5+01:00"} {
		f.Add(s)
	}
	node := startNode(f)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := sessiontree.ParseTime(s)
		if err != nil || node == nil || !utf8.ValidString(s) {
			return
		}
		// Node runs in UTC: a time without zone is read as such there.
		if got.Location() == time.Local {
			y, mo, d := got.Date()
			got = time.Date(y, mo, d, got.Hour(), got.Minute(), got.Second(), got.Nanosecond(), time.UTC)
		}
		want, ok := node.parse(t, s)
		if !ok || got.UnixMilli() != want {
			t.Fatalf("ParseTime(%q) = %v (%d ms); Date.parse reads %d (NaN: %v)", s, got, got.UnixMilli(), want, !ok)
		}
	})
}

// dateParser is a node process answering Date.parse for each line.
type dateParser struct {
	in  io.Writer
	out *bufio.Scanner
}

func startNode(tb testing.TB) *dateParser {
	path, err := exec.LookPath("node")
	if err != nil {
		return nil
	}
	cmd := exec.Command(path, "-e", `require("readline").createInterface({input: process.stdin}).on("line",
		l => process.stdout.write(String(Date.parse(JSON.parse(l))) + "\n"))`)
	cmd.Env = append(os.Environ(), "TZ=UTC")
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = in.Close()
		_ = cmd.Wait()
	})
	return &dateParser{in: in, out: bufio.NewScanner(out)}
}

// parse returns Date.parse(s), false for NaN.
func (p *dateParser) parse(t *testing.T, s string) (int64, bool) {
	t.Helper()
	line, _ := json.Marshal(s)
	if _, err := p.in.Write(append(line, '\n')); err != nil || !p.out.Scan() {
		t.Fatalf("node: %v %v", err, p.out.Err())
	}
	v, err := strconv.ParseFloat(p.out.Text(), 64)
	if err != nil || math.IsNaN(v) {
		return 0, false
	}
	return int64(v), true
}
