package sessiontree_test

import (
	"testing"

	"github.com/sessiontree/sessiontree"
)

func TestLastChange(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ created, last, want string }{
		{"2026-12-07T10:00:00.000Z", "2026-03-01T10:00:00.000Z", "2026-12-07T10:00:00.000Z"}, // a fork
		{"2026-03-01T10:00:00.000Z", "2026-12-07T10:00:00.000Z", "2026-12-07T10:00:00.000Z"},
		{"2026-03-01T10:00:00.000Z", "", "2026-03-01T10:00:00.000Z"},
		{"2026-12-07T10:00:00.000Z", "2026-03-01T12:00:00+02:00", "2026-12-07T10:00:00.000Z"},
		{"2026-03-01T10:00:00.000Z", "2026-03-01T12:00:00+01:00", "2026-03-01T12:00:00+01:00"},
		{"2026-03-01T12:00:00+05:00", "2026-03-01T08:00:00.000Z", "2026-03-01T08:00:00.000Z"},
		{"2026-12-07T10:00:00.000Z", "not a time", "not a time"},
		{"", "2026-03-01T10:00:00.000Z", "2026-03-01T10:00:00.000Z"},
	} {
		if got := sessiontree.LastChange(c.created, c.last); got != c.want {
			t.Errorf("LastChange(%q, %q) = %q; want %q", c.created, c.last, got, c.want)
		}
	}
}
