package view

import (
	"time"

	"github.com/dustin/go-humanize"
)

// RelativeTime says how long before now t was, in words, by
// github.com/dustin/go-humanize: "just now", "45 seconds ago",
// "1 minute ago", "3 hours ago", "1 week ago", "5 months ago",
// "2 years ago", and "a long while ago" past 37 years (a far date is a
// wrong one, and a count of years would only hide that). A time in the
// future reads "3 minutes from now".
func RelativeTime(t, now time.Time) string {
	// Kept from our own wording: humanize says a bare "now" under a
	// second, which in the UPDATED column of ls and after a timestamp in
	// info ("(now)") reads as a state rather than a time.
	if d := now.Sub(t); d > -time.Second && d < time.Second {
		return "just now"
	}
	return humanize.RelTime(t, now, "ago", "from now")
}
