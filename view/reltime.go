package view

import (
	"fmt"
	"time"
)

// RelativeTime says how long before now t was, in the largest whole unit:
// "just now", "45 seconds ago", "1 minute ago", "3 hours ago",
// "2 days ago", "3 weeks ago", "5 months ago", "2 years ago". A time in the
// future reads "in 3 minutes".
func RelativeTime(t, now time.Time) string {
	d := now.Sub(t)
	future := d < 0
	if future {
		d = -d
	}
	if d < time.Second {
		return "just now"
	}
	const day = 24 * time.Hour
	var n int64
	var unit string
	switch {
	case d < time.Minute:
		n, unit = int64(d/time.Second), "second"
	case d < time.Hour:
		n, unit = int64(d/time.Minute), "minute"
	case d < day:
		n, unit = int64(d/time.Hour), "hour"
	case d < 14*day:
		n, unit = int64(d/day), "day"
	case d < 60*day:
		n, unit = int64(d/(7*day)), "week"
	case d < 365*day:
		n, unit = int64(d/(30*day)), "month"
	default:
		n, unit = int64(d/(365*day)), "year"
	}
	s := fmt.Sprintf("%d %s", n, unit)
	if n != 1 {
		s += "s"
	}
	if future {
		return "in " + s
	}
	return s + " ago"
}
