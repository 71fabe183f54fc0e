package sessiontree_test

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
)

// TestParseTimeAgreesWithPi reads every timestamp of
// testdata/piedge/timestamps.json, recorded with the Date of the node
// that runs pi, and checks ParseTime gives the same millisecond, or an
// error where Date gives NaN.
func TestParseTimeAgreesWithPi(t *testing.T) {
	for _, c := range piTimestamps(t) {
		s, want := c.text, c.ms
		got, err := sessiontree.ParseTime(s)
		switch {
		case want == nil && err == nil:
			t.Errorf("ParseTime(%q) = %v; JavaScript's Date cannot read it", s, got)
		case want != nil && err != nil:
			t.Errorf("ParseTime(%q): %v; JavaScript's Date reads %d", s, err, *want)
		case want != nil && got.UnixMilli() != *want:
			t.Errorf("ParseTime(%q) = %d ms; JavaScript's Date reads %d", s, got.UnixMilli(), *want)
		}
	}
}

// piTimestamp is a case of testdata/piedge/timestamps.json: a text and
// the millisecond JavaScript's Date reads, nil for NaN.
type piTimestamp struct {
	text string
	ms   *int64
}

// piTimestamps reads testdata/piedge/timestamps.json.
func piTimestamps(tb testing.TB) []piTimestamp {
	tb.Helper()
	raw, err := os.ReadFile("testdata/piedge/timestamps.json")
	if err != nil {
		tb.Fatal(err)
	}
	var cases [][2]json.RawMessage
	if err := json.Unmarshal(raw, &cases); err != nil {
		tb.Fatal(err)
	}
	out := make([]piTimestamp, len(cases))
	for i, c := range cases {
		if json.Unmarshal(c[0], &out[i].text) != nil || json.Unmarshal(c[1], &out[i].ms) != nil {
			tb.Fatalf("bad case %s", c)
		}
	}
	return out
}

// TestParseTimeLocal checks a date and time without zone is local time,
// as in JavaScript, and a date alone UTC.
func TestParseTimeLocal(t *testing.T) {
	got, err := sessiontree.ParseTime("2026-12-01T10:30:15.25")
	if want := time.Date(2026, 12, 1, 10, 30, 15, 250e6, time.Local); err != nil || !got.Equal(want) {
		t.Errorf("ParseTime(zone-less) = %v, %v; want local %v", got, err, want)
	}
	got, err = sessiontree.ParseTime("2026-12-01")
	if want := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC); err != nil || !got.Equal(want) {
		t.Errorf("ParseTime(date) = %v, %v; want UTC %v", got, err, want)
	}
}

// TestCompareTimestampsAtMilliseconds: pi's tree compares entry times as
// Date values, in milliseconds, so two times within one millisecond tie
// (and keep file order), whatever their text, and so does a time that
// does not parse.
func TestCompareTimestampsAtMilliseconds(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"2026-12-01T10:00:05.1239Z", "2026-12-01T10:00:05.1231Z", 0},
		{"2026-12-01T10:00:05.124Z", "2026-12-01T10:00:05.1231Z", 1},
		{"2026-12-01T11:00:00+02:00", "2026-12-01T10:00:00Z", -1},
		{"2026-12-01", "2026-12-01T00:00:00.000Z", 0},
		// A time Date cannot read ties with any (pi: NaN, taken as 0).
		{"garbage", "2026-12-01T10:00:00Z", 0},
		{"2026-12-01T10:00:00Z", "not a time", 0},
	} {
		if got := sessiontree.CompareTimestamps(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareTimestamps(%q, %q) = %d; want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestParseTimeRefusesLegacyFieldOrder: with a space before the time,
// V8's legacy parser reads a year of 0 to 31 as a month or day and the
// fields after it for others ("0010-01-01 00:00Z" is 1 October 2001),
// which ParseTime does not follow: it refuses them, where it read year
// 10 before.
func TestParseTimeRefusesLegacyFieldOrder(t *testing.T) {
	for _, s := range []string{"0010-01-01 00:00Z", "0000 00:00", "0031-12 10:00:00.5"} {
		if got, err := sessiontree.ParseTime(s); err == nil {
			t.Errorf("ParseTime(%q) = %v; want an error", s, got)
		}
	}
}
