package sessiontree

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Usage reports: the tokens and cost of pi's /session breakdown summed
// over many sessions, by day, week, model, working directory or session
// (`sessiontree usage`; the SQLite engine answers them from aggregates it
// keeps per session and day).

// UsageDayLayout is the layout of a usage day: an ISO-8601 date.
const UsageDayLayout = "2006-01-02"

// UsageDay is the day a usage record counts on in usage reports: the UTC
// date of its entry's timestamp (the entry's, not the message's inner
// time), as "2026-12-03". A date and time without zone, which [ParseTime]
// (as JavaScript's Date) reads as local time, counts on the date as
// written, so that the day does not depend on the zone of the machine
// that writes, checks or reports it. A timestamp [ParseTime] cannot read
// (pi writes every timestamp in UTC with milliseconds; only a hand-edited
// file has another) gives "", the day of records whose day is unknown, and
// so does a day of a year before 0001 or after 9999 (Date reads years up
// to ±275760): days are compared and sorted as text, where "10000-01-01"
// comes before "2026-12-03", and the engines' weeks of other years differ.
func UsageDay(timestamp string) string {
	t, err := ParseTime(timestamp)
	if err == nil && t.Location() == time.Local {
		t, err = ParseTime(timestamp + "Z") // the same fields, read in UTC
	}
	if err != nil {
		return ""
	}
	if t.Location() == time.UTC && len(timestamp) > len(UsageDayLayout) && timestamp[len(UsageDayLayout)] == 'T' &&
		timestamp[:4] != "0000" && int(timestamp[8]-'0')*10+int(timestamp[9]-'0') == t.Day() {
		// A time in UTC (ending in Z, as pi writes them all) starts
		// with its date, unless Date carried it over ("2026-02-31T10:00Z"
		// is March 3, 24:00 the next day), which changes the day of
		// the month: no need to format one.
		return timestamp[:len(UsageDayLayout)]
	}
	t = t.UTC()
	if y := t.Year(); y < 1 || y > 9999 {
		return "" // see the doc: a day the report could not order
	}
	return t.Format(UsageDayLayout)
}

// UsageDayKey names a row of a session's usage by day: the [UsageDay]
// of its records and their bucket (provider/model).
type UsageDayKey struct{ Day, Bucket string }

// UsageDays is a session's usage by day and bucket, as an engine keeps it
// (its usage_days rows) or as a replay of the log gives it ([UsageDays.Add]
// in log order): what every engine's Check compares.
type UsageDays map[UsageDayKey]Usage

// Add adds the usage record u of an entry with timestamp ts in bucket,
// the records taken in log order (so that costs sum as the writes sum
// them).
func (d UsageDays) Add(ts, bucket string, u Usage) {
	k := UsageDayKey{Day: UsageDay(ts), Bucket: bucket}
	sum := d[k]
	sum.Input += u.Input
	sum.Output += u.Output
	sum.CacheRead += u.CacheRead
	sum.CacheWrite += u.CacheWrite
	sum.Cost += u.Cost
	d[k] = sum
}

// Diff describes how d, the stored usage, differs from want, the log's,
// "" when it does not (at most five rows named). Costs are compared
// exactly: both are summed in log order.
func (d UsageDays) Diff(want UsageDays) string {
	var diffs []string
	for k, w := range want {
		if s, ok := d[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s %s missing, log gives %+v", k.Day, k.Bucket, w))
		} else if s != w {
			diffs = append(diffs, fmt.Sprintf("%s %s stored %+v, log gives %+v", k.Day, k.Bucket, s, w))
		}
	}
	for k, s := range d {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s %s stored %+v, the log has no such usage", k.Day, k.Bucket, s))
		}
	}
	slices.Sort(diffs)
	if len(diffs) > 5 {
		diffs = append(diffs[:5], fmt.Sprintf("and %d more", len(diffs)-5))
	}
	return strings.Join(diffs, "; ")
}

// UsageBy is how a usage report groups its rows.
type UsageBy string

// The groupings of a usage report.
const (
	// UsageByDay groups by UTC day ("2026-12-03").
	UsageByDay UsageBy = "day"
	// UsageByWeek groups by ISO 8601 week of the UTC day ("2026-W49").
	UsageByWeek UsageBy = "week"
	// UsageByModel groups by bucket: "provider/model", or
	// [ToolsBucket].
	UsageByModel UsageBy = "model"
	// UsageByCwd groups by the session's working directory.
	UsageByCwd UsageBy = "cwd"
	// UsageBySession groups by session.
	UsageBySession UsageBy = "session"
)

// UsageGroupings lists the groupings in the order help texts name them.
var UsageGroupings = []UsageBy{UsageByDay, UsageByWeek, UsageByModel, UsageByCwd, UsageBySession}

// UsageQuery selects and groups a usage report. The zero value reports
// every record by day.
type UsageQuery struct {
	// Since and Until bound the days counted, both included, as UTC dates
	// ("2026-12-03"); "" leaves that side open. Records whose day is
	// unknown (a timestamp that is not RFC 3339) count only when both are
	// "".
	Since, Until string
	// By is the grouping; "" means [UsageByDay].
	By UsageBy
}

// Validate checks the query: a known grouping, dates in the
// [UsageDayLayout], Since not after Until. Its error matches
// [ErrBadUsageQuery] and says which field is wrong.
func (uq UsageQuery) Validate() error {
	if uq.By != "" && !slices.Contains(UsageGroupings, uq.By) {
		return fmt.Errorf("grouping %q: want one of %s: %w", uq.By, groupingList(), ErrBadUsageQuery)
	}
	for _, d := range []struct{ name, value string }{{"since", uq.Since}, {"until", uq.Until}} {
		if d.value == "" {
			continue
		}
		if _, err := time.Parse(UsageDayLayout, d.value); err != nil {
			return fmt.Errorf("%s date %q: want YYYY-MM-DD: %w", d.name, d.value, ErrBadUsageQuery)
		}
	}
	if uq.Since != "" && uq.Until != "" && uq.Since > uq.Until {
		return fmt.Errorf("since %s is after until %s: %w", uq.Since, uq.Until, ErrBadUsageQuery)
	}
	return nil
}

// DayRange is the range of usage days (as [UsageDay] writes them) the
// query counts, both included, for an engine's table of usage by day:
// every day, the unknown one ("") included, when it has no bound;
// otherwise only known days within the bounds ("0" and "9" sort after ""
// and before or after every date).
func (uq UsageQuery) DayRange() (lo, hi string) {
	if uq.Since == "" && uq.Until == "" {
		return "", "9"
	}
	return cmp.Or(uq.Since, "0"), cmp.Or(uq.Until, "9")
}

func groupingList() string {
	names := make([]string, len(UsageGroupings))
	for i, g := range UsageGroupings {
		names[i] = string(g)
	}
	return strings.Join(names, ", ")
}

// UsageRow is one row of a usage report: a group's sessions, tokens and
// cost.
type UsageRow struct {
	// Key is the group: a day, an ISO week, a bucket, a working directory
	// or a session id. A day or week is "" for records whose day is
	// unknown.
	Key string `json:"key"`
	// Name is the session's name when grouping by session ("" for none,
	// left out of the JSON).
	Name string `json:"name,omitempty"`
	// Sessions counts the sessions with usage in the group.
	Sessions int64 `json:"sessions"`
	// Tokens are the group's token totals.
	Tokens TokenStats `json:"tokens"`
	// Cost is the group's cost total: its records' costs are summed per
	// session and day in log order, as pi sums them, but those sums are
	// added up by the engine in an order of its own (SQLite compensates
	// rounding, PostgreSQL does not), so the last bits may differ between
	// engines, and from the sessions' Stats added up. Round it to show
	// it.
	Cost float64 `json:"cost"`
}

// UsageReport is the answer to a [UsageQuery].
type UsageReport struct {
	// By is the grouping.
	By UsageBy `json:"by"`
	// Since and Until are the query's bounds ("" open).
	Since string `json:"since"`
	Until string `json:"until"`
	// Rows are the groups with tokens or cost (groups with neither are
	// left out, as pi's breakdown leaves out such buckets): by day and by
	// week in time order, the others by cost, highest first, then key.
	Rows []UsageRow `json:"rows"`
	// Total is the rows added up, Key "", with the number of sessions
	// that have usage records within the bounds.
	Total UsageRow `json:"total"`
}

// SumRows sets Total's tokens and cost to the rows added up; Total's
// Sessions, which rows cannot give (a session may be in several), is the
// engine's to count. Every engine's report ends with it.
func (r *UsageReport) SumRows() {
	for _, row := range r.Rows {
		t := &r.Total.Tokens
		t.Input += row.Tokens.Input
		t.Output += row.Tokens.Output
		t.CacheRead += row.Tokens.CacheRead
		t.CacheWrite += row.Tokens.CacheWrite
		t.Total += row.Tokens.Total
		r.Total.Cost += row.Cost
	}
}
