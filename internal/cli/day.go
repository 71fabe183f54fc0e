package cli

import (
	"fmt"
	"time"

	"github.com/sessiontree/sessiontree"
)

// ParseDay reads a day argument of a usage report (--since, --until): a
// date, "2026-12-03", or an RFC 3339 time, which stands for its UTC date
// (sessiontree.UsageDay), as the report's days are UTC dates. It returns
// the date as "2026-12-03"; "" stays "" (no bound).
func ParseDay(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	_, err := time.Parse(sessiontree.UsageDayLayout, s)
	if err == nil {
		return s, nil
	}
	// A date that is not one (2026-02-30), which JavaScript's Date, and
	// so UsageDay, would carry into the next month.
	if day := sessiontree.UsageDay(s); day != "" && len(s) != len(sessiontree.UsageDayLayout) {
		return day, nil
	}
	return "", fmt.Errorf("%q is not a date: want YYYY-MM-DD (or an RFC 3339 time)", s)
}
