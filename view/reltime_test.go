package view_test

import (
	"testing"
	"time"

	"github.com/sessiontree/sessiontree/view"
)

func TestRelativeTime(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const day = 24 * time.Hour
	tests := []struct {
		ago  time.Duration
		want string
	}{
		{0, "just now"},
		{500 * time.Millisecond, "just now"},
		{-500 * time.Millisecond, "just now"},
		{time.Second, "1 second ago"},
		{45 * time.Second, "45 seconds ago"},
		{time.Minute, "1 minute ago"},
		{3*time.Minute + 59*time.Second, "3 minutes ago"},
		{time.Hour, "1 hour ago"},
		{23 * time.Hour, "23 hours ago"},
		{day, "1 day ago"},
		{3 * day, "3 days ago"},
		{13 * day, "1 week ago"},
		{21 * day, "3 weeks ago"},
		{59 * day, "1 month ago"},
		{150 * day, "5 months ago"},
		{400 * day, "1 year ago"},
		{3 * 365 * day, "3 years ago"},
		{40 * 365 * day, "a long while ago"},
		{-3 * time.Minute, "3 minutes from now"},
		{-2 * day, "2 days from now"},
	}
	for _, tt := range tests {
		if got := view.RelativeTime(base.Add(-tt.ago), base); got != tt.want {
			t.Errorf("RelativeTime(now-%v) = %q; want %q", tt.ago, got, tt.want)
		}
	}
	// A date so old that the difference overflows a time.Duration.
	if got, want := view.RelativeTime(time.Date(1, 1, 2, 0, 0, 0, 0, time.UTC), base), "a long while ago"; got != want {
		t.Errorf("RelativeTime(year 1) = %q; want %q", got, want)
	}
}
