package sessiontree_test

import (
	"errors"
	"testing"

	"github.com/sessiontree/sessiontree"
)

func TestUsageDay(t *testing.T) {
	for _, tt := range []struct{ ts, want string }{
		{"2026-12-03T10:00:00.123Z", "2026-12-03"},
		{"2026-12-03T23:59:59.999Z", "2026-12-03"},
		{"2026-12-04T01:30:00.000+02:00", "2026-12-03"}, // UTC date, not the local one
		{"2026-12-03T22:30:00-05:00", "2026-12-04"},
		{"2026-12-03", "2026-12-03"}, // a date alone is UTC midnight, as JavaScript reads it
		{"2026-12-03T23:30Z", "2026-12-03"},
		{"+002026-12-03T10:00:00Z", "2026-12-03"},
		{"2026-12-03T23:30:00", "2026-12-03"}, // no zone: the date as written, in any zone
		{"2026-12-03 00:30", "2026-12-03"},
		{"2026-02-31T24:00", "2026-03-04"},         // Date's overflows, as written
		{"2026-02-31T10:00:00.000Z", "2026-03-03"}, // Date's overflows, in UTC too
		{"2026-12-03T24:00:00.000Z", "2026-12-04"},
		{"0001-01-01T00:00:00Z", "0001-01-01"},
		{"9999-12-31T23:59:59Z", "9999-12-31"},
		{"0000-12-31T23:59:59Z", ""}, // years the days cannot order
		{"9999-12-31T23:59:59-01:00", ""},
		{"+010000-01-01T00:00:00Z", ""},
		{"yesterday", ""},
		{"", ""},
	} {
		if got := sessiontree.UsageDay(tt.ts); got != tt.want {
			t.Errorf("UsageDay(%q) = %q; want %q", tt.ts, got, tt.want)
		}
	}
}

func TestUsageQueryValidate(t *testing.T) {
	for _, tt := range []struct {
		q  sessiontree.UsageQuery
		ok bool
	}{
		{sessiontree.UsageQuery{}, true},
		{sessiontree.UsageQuery{By: sessiontree.UsageByWeek, Since: "2026-12-01", Until: "2026-12-01"}, true},
		{sessiontree.UsageQuery{By: "month"}, false},
		{sessiontree.UsageQuery{Since: "2026-02-30"}, false},
		{sessiontree.UsageQuery{Until: "2026-12-03T00:00:00Z"}, false},
		{sessiontree.UsageQuery{Since: "2026-12-02", Until: "2026-12-01"}, false},
	} {
		err := tt.q.Validate()
		if tt.ok && err != nil || !tt.ok && !errors.Is(err, sessiontree.ErrBadUsageQuery) {
			t.Errorf("%+v.Validate() = %v; want ok %v", tt.q, err, tt.ok)
		}
	}
}
