package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"

	"modernc.org/sqlite"

	"github.com/sessiontree/sessiontree"
)

// Usage per session, day and bucket (migration 12, `sessiontree usage`).
//
// The usage_days table holds, per session, day (sessiontree.UsageDay of
// the entry's timestamp) and bucket (sessiontree.StatsOf's key), the
// tokens and cost of the usage records pi's /session breakdown counts.
// Every write adds its records in its own transaction (delta.count
// collects them, q.apply writes them), so a report over every session
// reads these rows, some per session and day, never the entries. Costs are
// added one record at a time in log order, as the session's total is, so
// that DB.Check compares them exactly with a replay of the log.
//
// An append without usage (a user message, a tool result without usage)
// writes no row: BenchmarkAppendUser is unchanged (80 µs a median append,
// 24 runs of each interleaved with the engine before this table). One
// with usage upserts one row, one more statement and one more page of
// the log: BenchmarkAppend (an assistant message with usage) went from
// 100 to 112 µs (CPU 104 to 121 µs, 63 to 82 allocations). Keeping the
// days in the sessions row instead, as the breakdown is (breakdown.go),
// would grow that row with every day a session lives and make a report
// parse every session's JSON.
//
// The table's key is day first, so a report by day is one scan in key
// order without a sort, and bounds on the days are a range of the key;
// an index by session serves deleting a session, Check and the report's
// count of sessions. BenchmarkUsage (10,000 sessions, 41,250 rows),
// CPU per report: by day 24 to 32 ms, by model 36 to 38, by directory
// 31 to 45, by week 50 (SQLite's strftime per row), by session 68 to 92
// (sorting 10,000 groups); the bench program's usage workload, by day
// over 10,000 sessions and 909,511 entries: 15.7 ms median.

// dayKey names a usage_days row of a session.
type dayKey struct{ day, bucket string }

// dayUsage is what a write adds to one usage_days row: the tokens, and
// each record's cost in log order (see delta): the first in cost, the
// others, rarer (a batch), in more.
type dayUsage struct {
	dayKey
	tokens sessiontree.TokenStats
	cost   float64
	more   []float64
}

// add adds one usage record.
func (d *dayUsage) add(u sessiontree.Usage, first bool) {
	d.tokens.Input += u.Input
	d.tokens.Output += u.Output
	d.tokens.CacheRead += u.CacheRead
	d.tokens.CacheWrite += u.CacheWrite
	if first {
		d.cost = u.Cost
	} else {
		d.more = append(d.more, u.Cost)
	}
}

// dayUsages collects a write's usage by day and bucket, in order of first
// use. The zero value is empty; it allocates nothing until a write adds
// usage of a second day or bucket (a single append adds one at most), so
// its first row lives in the value itself: do not copy one in use.
type dayUsages struct {
	one   [1]dayUsage
	rows  []dayUsage
	index map[dayKey]int // past a few rows
}

// add adds record u of an entry with timestamp ts in bucket key.
func (ds *dayUsages) add(ts, key string, u sessiontree.Usage) {
	k := dayKey{day: sessiontree.UsageDay(ts), bucket: key}
	i, ok := -1, false
	if ds.index != nil {
		i, ok = ds.index[k]
	} else {
		for j := range ds.rows {
			if ds.rows[j].dayKey == k {
				i, ok = j, true
				break
			}
		}
	}
	if !ok {
		if ds.rows == nil {
			ds.rows = ds.one[:0]
		}
		i = len(ds.rows)
		ds.rows = append(ds.rows, dayUsage{dayKey: k})
		if ds.index != nil || len(ds.rows) > 8 {
			if ds.index == nil {
				ds.index = make(map[dayKey]int, 16)
				for j := range ds.rows {
					ds.index[ds.rows[j].dayKey] = j
				}
			}
			ds.index[k] = i
		}
	}
	ds.rows[i].add(u, !ok)
}

const (
	// qAddUsageDay adds a write's usage to a usage_days row: with ?9 the
	// cost ?8 is the row's new cost (the write summed several records
	// onto the stored one), otherwise one record's cost to add.
	qAddUsageDay = `INSERT INTO usage_days (session, day, bucket, input, output, cache_read, cache_write, cost)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
ON CONFLICT (day, session, bucket) DO UPDATE SET
    input = input + excluded.input, output = output + excluded.output,
    cache_read = cache_read + excluded.cache_read, cache_write = cache_write + excluded.cache_write,
    cost = CASE WHEN ?9 THEN excluded.cost ELSE cost + excluded.cost END`

	qUsageDayCost = `SELECT cost FROM usage_days WHERE session = ?1 AND day = ?2 AND bucket = ?3`

	qUsageDaysOf = `SELECT day, bucket, input, output, cache_read, cache_write, cost
FROM usage_days WHERE session = ?1`

	qDeleteUsageDays = `DELETE FROM usage_days WHERE session = ?1`
)

// applyDays writes a write's usage to the session's usage_days rows. A
// row that gains one record adds its cost in SQL; one that gains several
// reads the stored cost and adds them to it in order, as pi would have.
func (w q) applyDays(session int64, ds *dayUsages) error {
	for i := range ds.rows {
		d := &ds.rows[i]
		cost, set := d.cost, false
		if len(d.more) > 0 {
			var stored float64
			err := w.row(qUsageDayCost, args(session, d.day, d.bucket), &stored)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("read usage of %s %s: %w", d.day, d.bucket, err)
			}
			stored += d.cost
			for _, c := range d.more {
				stored += c
			}
			cost, set = stored, true
		}
		t := d.tokens
		if _, err := w.exec(qAddUsageDay, session, d.day, d.bucket, t.Input, t.Output, t.CacheRead, t.CacheWrite,
			cost, set); err != nil {
			return fmt.Errorf("add usage of %s %s: %w", d.day, d.bucket, err)
		}
	}
	return nil
}

// storedDays reads a session's usage_days rows.
func storedDays(r q, session int64) (sessiontree.UsageDays, error) {
	rows, err := r.rows(qUsageDaysOf, session)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := sessiontree.UsageDays{}
	for rows.Next() {
		var k sessiontree.UsageDayKey
		var u sessiontree.Usage
		if err := rows.Scan(&k.Day, &k.Bucket, &u.Input, &u.Output, &u.CacheRead, &u.CacheWrite, &u.Cost); err != nil {
			return nil, err
		}
		out[k] = u
	}
	return out, rows.Err()
}

// usageGroupColumns are, per grouping, the SQL of a row's key, its name,
// and the sessions it counts, over the rows named u (see usageQuery).
var usageGroupColumns = map[sessiontree.UsageBy][3]string{
	sessiontree.UsageByDay:     {`u.day`, `''`, `count(DISTINCT u.session)`},
	sessiontree.UsageByWeek:    {`coalesce(strftime('%G-W%V', u.day), '')`, `''`, `count(DISTINCT u.session)`},
	sessiontree.UsageByModel:   {`u.bucket`, `''`, `count(DISTINCT u.session)`},
	sessiontree.UsageByCwd:     {`s.cwd`, `''`, `count(*)`},
	sessiontree.UsageBySession: {`s.id`, `coalesce(s.name, '')`, `count(*)`},
}

// usageSessions sums the usage_days rows of days ?1 to ?2 per session,
// for a grouping by directory or session: it joins these rows, one per
// session, with the sessions table rather than every usage_days row, and
// sorts integers rather than ids (a third faster by session). It scans
// the table: the index by session holds only the key, so reading it in
// session order costs a lookup of the table per row, which is slower
// than the sort.
const usageSessions = `(SELECT session, sum(input) AS input, sum(output) AS output,
        sum(cache_read) AS cache_read, sum(cache_write) AS cache_write, sum(cost) AS cost
    FROM usage_days NOT INDEXED WHERE day BETWEEN ?1 AND ?2 GROUP BY session)`

// usageQuery is the report's SQL for a grouping: the usage_days rows of
// days ?1 to ?2, a range of the table's key (day first, so a report by
// day needs no sort), grouped; by directory or session the sums per
// session (usageSessions) with their sessions' rows; never entries.
// Groups without tokens or cost are left out (sessiontree.SortBreakdown's
// rule). (Tried and slower: computing each day's ISO week once, through a
// join with the distinct days, which sorts as much.)
func usageQuery(by sessiontree.UsageBy) string {
	g := usageGroupColumns[by]
	from := `usage_days u WHERE u.day BETWEEN ?1 AND ?2`
	if by == sessiontree.UsageByCwd || by == sessiontree.UsageBySession {
		from = usageSessions + ` AS u JOIN sessions s ON s.pk = u.session`
	}
	order := `grp_cost DESC, grp_tokens DESC, grp_key`
	if by == sessiontree.UsageByDay || by == sessiontree.UsageByWeek {
		order = `grp_key`
	}
	return `SELECT ` + g[0] + ` AS grp_key, ` + g[1] + `, ` + g[2] + `,
       sum(u.input), sum(u.output), sum(u.cache_read), sum(u.cache_write),
       sum(u.input + u.output + u.cache_read + u.cache_write) AS grp_tokens, sum(u.cost) AS grp_cost
FROM ` + from + `
GROUP BY grp_key
HAVING grp_tokens > 0 OR grp_cost > 0
ORDER BY ` + order
}

// qUsageSessions counts the sessions with usage in days ?1 to ?2 for the
// report's total, whose sums are the groups'. It reads the index by
// session, which holds the key's other columns: counting distinct
// sessions in its order needs no temporary table, and it is about half
// the cost of the same count over the table in day order (41,250 rows:
// 11 ms against 19 ms on a loaded machine).
const qUsageSessions = `SELECT count(DISTINCT session) FROM usage_days INDEXED BY usage_days_by_session
WHERE day BETWEEN ?1 AND ?2`

// Usage reports the tokens and cost of every session's usage records
// (pi's /session breakdown rules, summed over sessions), grouped as uq
// says, from the usage_days rows every write keeps: it reads no entry.
// A group's cost is SQLite's sum of its rows' costs and the total's the
// groups' added up, so they may differ in the last bits from a sum in
// another order (the sessions' Stats summed). A query
// [sessiontree.UsageQuery.Validate] refuses is an error matching
// sessiontree.ErrBadUsageQuery.
func (db *DB) Usage(ctx context.Context, uq sessiontree.UsageQuery) (sessiontree.UsageReport, error) {
	if err := uq.Validate(); err != nil {
		return sessiontree.UsageReport{}, fmt.Errorf("usage report: %w", err)
	}
	if uq.By == "" {
		uq.By = sessiontree.UsageByDay
	}
	rep := sessiontree.UsageReport{By: uq.By, Since: uq.Since, Until: uq.Until, Rows: []sessiontree.UsageRow{}}
	lo, hi := uq.DayRange()
	err := db.view(ctx, func(r q) error {
		rep.Rows = rep.Rows[:0]
		rows, err := r.rows(usageQuery(uq.By), lo, hi)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var row sessiontree.UsageRow
			var tokens int64
			t := &row.Tokens
			if err := rows.Scan(&row.Key, &row.Name, &row.Sessions, &t.Input, &t.Output, &t.CacheRead, &t.CacheWrite,
				&tokens, &row.Cost); err != nil {
				return err
			}
			t.Total = tokens
			rep.Rows = append(rep.Rows, row)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		return r.row(qUsageSessions, args(lo, hi), &rep.Total.Sessions)
	})
	if err != nil {
		return sessiontree.UsageReport{}, fmt.Errorf("usage report: %w", translate(err))
	}
	rep.SumRows()
	return rep, nil
}

// The SQL functions migration 12 computes the rows of existing sessions
// with, so that it applies the Go rules themselves (see the migration).
const (
	sqlUsageDayFunc   = "usage_day"
	sqlEntryUsage     = "entry_usage"
	sqlEntryUsageCost = "entry_usage_cost"
	sqlLogSum         = "log_sum"
)

// entryUsageFunc is an SQL function of an entries row's JSON (a blob,
// CAST(raw AS BLOB)) that gives what result makes of its usage record and
// bucket; NULL for NULL, and for JSON that is not an entry or has no
// usage record.
func entryUsageFunc(name string, result func(u sessiontree.Usage, bucket string) (driver.Value, error)) *sqlite.FunctionImpl {
	return &sqlite.FunctionImpl{NArgs: 1, Deterministic: true,
		Scalar: func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
			var raw []byte
			switch v := a[0].(type) {
			case nil:
				return nil, nil
			case []byte:
				raw = v
			default:
				return nil, fmt.Errorf("%s: want a blob, got %T", name, a[0])
			}
			e, err := sessiontree.DecodeEntry(raw)
			if err != nil {
				return nil, nil
			}
			es := sessiontree.StatsOf(e)
			if !es.HasUsage {
				return nil, nil
			}
			return result(es.Usage, es.Bucket)
		}}
}

// registerUsageFuncs gives d's connections the SQL functions of migration
// 12.
func registerUsageFuncs(d *sqlite.Driver) error {
	funcs := []struct {
		name string
		impl *sqlite.FunctionImpl
	}{
		{sqlUsageDayFunc, &sqlite.FunctionImpl{NArgs: 1, Deterministic: true,
			Scalar: func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
				s, ok := a[0].(string)
				if !ok {
					return "", nil
				}
				return sessiontree.UsageDay(s), nil
			}}},
		{sqlEntryUsage, entryUsageFunc(sqlEntryUsage, func(u sessiontree.Usage, bucket string) (driver.Value, error) {
			b, err := json.Marshal(map[string]any{"bucket": bucket, "input": u.Input, "output": u.Output,
				"cacheRead": u.CacheRead, "cacheWrite": u.CacheWrite})
			return string(b), err
		})},
		{sqlEntryUsageCost, entryUsageFunc(sqlEntryUsageCost, func(u sessiontree.Usage, _ string) (driver.Value, error) {
			return u.Cost, nil
		})},
		{sqlLogSum, &sqlite.FunctionImpl{NArgs: 1, Deterministic: true,
			MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) { return &logSum{}, nil }}},
	}
	for _, f := range funcs {
		if err := d.RegisterFunction(f.name, f.impl); err != nil {
			return fmt.Errorf("register %s: %w", f.name, err)
		}
	}
	return nil
}

// logSum is the log_sum aggregate: numbers added one at a time in the
// order SQLite steps through them, from 0.0, without compensation.
type logSum struct{ sum float64 }

// Step adds a number; NULL adds nothing.
func (s *logSum) Step(_ *sqlite.FunctionContext, a []driver.Value) error {
	switch v := a[0].(type) {
	case nil:
	case float64:
		s.sum += v
	case int64:
		s.sum += float64(v)
	default:
		return fmt.Errorf("%s: want a number, got %T", sqlLogSum, a[0])
	}
	return nil
}

// WindowInverse is not supported: log_sum is no window function.
func (s *logSum) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return fmt.Errorf("%s is not a window function", sqlLogSum)
}

// WindowValue returns the sum so far.
func (s *logSum) WindowValue(*sqlite.FunctionContext) (driver.Value, error) { return s.sum, nil }

// Final does nothing: WindowValue gives the result.
func (s *logSum) Final(*sqlite.FunctionContext) {}
