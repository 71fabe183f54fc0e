package pgengine

import (
	"cmp"
	"context"
	"fmt"
	"strconv"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
)

// Usage per session, day and bucket (migration 2, the SQLite engine's
// usage_days): every write adds each usage record it stores to its
// session's row of the record's day (sessiontree.UsageDay) and bucket
// (sessiontree.StatsOf), in the write's transaction; a report reads these
// rows, never the entries. A write collects its records (usageAdds) and
// writes them when it saves the session's row, one statement for all its
// rows: a batch of 10,000 entries, a third of them with usage, made a
// statement per record before (3,000 round trips, most of its time).
// Costs are added one record at a time in log order, as the session's
// total is: a row that gains one record adds it in SQL, and a write that
// gives a row several reads the stored costs first and adds them in Go.

// usageKey names a usage_days row of a session.
type usageKey struct{ day, bucket string }

// usageAdd is what a write adds to one usage_days row: the tokens, and
// each record's cost in log order.
type usageAdd struct {
	usageKey
	tokens sessiontree.Usage // Cost unused: costs holds them
	costs  []float64
}

// usageAdds collects a write's usage records by row, in order of first
// use. The zero value is empty.
type usageAdds struct {
	rows  []usageAdd
	index map[usageKey]int
}

// add adds the usage record es of entry e, if it has one.
func (a *usageAdds) add(e sessiontree.Entry, es sessiontree.EntryStats) {
	if !es.HasUsage {
		return
	}
	k := usageKey{day: sessiontree.UsageDay(e.Timestamp), bucket: es.Bucket}
	i, ok := a.index[k]
	if !ok {
		if a.index == nil {
			a.index = map[usageKey]int{}
		}
		i = len(a.rows)
		a.index[k] = i
		a.rows = append(a.rows, usageAdd{usageKey: k})
	}
	r, u := &a.rows[i], es.Usage
	r.tokens.Input += u.Input
	r.tokens.Output += u.Output
	r.tokens.CacheRead += u.CacheRead
	r.tokens.CacheWrite += u.CacheWrite
	r.costs = append(r.costs, u.Cost)
}

// several reports whether some row gains more than one record.
func (a *usageAdds) several() bool {
	for _, r := range a.rows {
		if len(r.costs) > 1 {
			return true
		}
	}
	return false
}

// usageUpsert adds rows given as one array per column, parameters
// $first to $first+6, to session $1's usage_days; the cost is added to
// the stored one, or set when set is true.
func usageUpsert(first int, set bool) string {
	p := func(i int) string { return "$" + strconv.Itoa(first+i) }
	cost := `usage_days.cost + EXCLUDED.cost`
	if set {
		cost = `EXCLUDED.cost`
	}
	return `INSERT INTO usage_days (day, session, bucket, input, output, cache_read, cache_write, cost)
	SELECT t.day, $1, t.bucket, t.i, t.o, t.cr, t.cw, t.c
	FROM unnest(` + p(0) + `::text[], ` + p(1) + `::text[], ` + p(2) + `::bigint[], ` + p(3) + `::bigint[], ` +
		p(4) + `::bigint[], ` + p(5) + `::bigint[], ` + p(6) + `::double precision[]) AS t (day, bucket, i, o, cr, cw, c)
	ON CONFLICT (day, session, bucket) DO UPDATE SET input = usage_days.input + EXCLUDED.input,
		output = usage_days.output + EXCLUDED.output, cache_read = usage_days.cache_read + EXCLUDED.cache_read,
		cache_write = usage_days.cache_write + EXCLUDED.cache_write, cost = ` + cost
}

// arrays are the collected rows as usageUpsert's seven arrays, each
// row's cost its first record's.
func (a *usageAdds) arrays() []any {
	n := len(a.rows)
	days, buckets := make([]string, n), make([]string, n)
	in, out, cr, cw := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	costs := make([]float64, n)
	for i, r := range a.rows {
		days[i], buckets[i] = r.day, r.bucket
		in[i], out[i], cr[i], cw[i] = r.tokens.Input, r.tokens.Output, r.tokens.CacheRead, r.tokens.CacheWrite
		costs[i] = r.costs[0]
	}
	return []any{days, buckets, in, out, cr, cw, costs}
}

// flush writes the collected records of a write to session's rows when
// some row gains several (reading the stored costs first, then one
// statement setting them) and returns false. Otherwise it returns
// whether there are records for the caller to add with its own
// statement (usageUpsert, its arrays from arrays).
func (a *usageAdds) flush(ctx context.Context, tx *sqlx.Tx, session int64) (bool, error) {
	if len(a.rows) == 0 {
		return false, nil
	}
	if !a.several() {
		return true, nil
	}
	arrays := a.arrays()
	if err := a.sumStored(ctx, tx, session, arrays[0].([]string), arrays[1].([]string), arrays[6].([]float64)); err != nil {
		return false, err
	}
	_, err := tx.ExecContext(ctx, usageUpsert(2, true), append([]any{session}, arrays...)...)
	*a = usageAdds{}
	return false, err
}

// sumStored sets costs[i] to row i's stored cost (0 for a new row) plus
// each of its records' costs, one at a time in log order.
func (a *usageAdds) sumStored(ctx context.Context, tx *sqlx.Tx, session int64, days, buckets []string, costs []float64) error {
	var stored []struct {
		N    int     `db:"n"`
		Cost float64 `db:"cost"`
	}
	err := tx.SelectContext(ctx, &stored, `SELECT t.n, u.cost FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS t (day, bucket, n)
		JOIN usage_days u ON u.session = $1 AND u.day = t.day AND u.bucket = t.bucket`, session, days, buckets)
	if err != nil {
		return err
	}
	for i := range costs {
		costs[i] = 0
	}
	for _, s := range stored {
		costs[s.N-1] = s.Cost
	}
	for i, r := range a.rows {
		for _, c := range r.costs {
			costs[i] += c
		}
	}
	return nil
}

// usageGroupColumns are, per grouping, the SQL of a row's key (in byte
// order), its name, and the sessions it counts, over the rows named u.
var usageGroupColumns = map[sessiontree.UsageBy][3]string{
	sessiontree.UsageByDay: {`u.day COLLATE "C"`, `''`, `count(DISTINCT u.session)`},
	sessiontree.UsageByWeek: {`(CASE WHEN u.day = '' THEN '' ELSE to_char(to_date(u.day, 'YYYY-MM-DD'), 'IYYY-"W"IW') END) COLLATE "C"`,
		`''`, `count(DISTINCT u.session)`},
	sessiontree.UsageByModel:   {`u.bucket COLLATE "C"`, `''`, `count(DISTINCT u.session)`},
	sessiontree.UsageByCwd:     {`s.cwd COLLATE "C"`, `''`, `count(*)`},
	sessiontree.UsageBySession: {`s.id COLLATE "C"`, `coalesce(s.name, '')`, `count(*)`},
}

// usageQuery is the report's SQL for a grouping: the usage_days rows of
// days $1 to $2 (a range of the key), grouped; by directory or session,
// the sums per session joined with their sessions' rows. Groups without
// tokens or cost are left out (sessiontree.SortBreakdown's rule). Costs
// are added in the order of the rows' keys: a sum of floating-point
// numbers depends on its order, and the order the server keeps rows in
// changes with every update of a row (a derived-values migration wrote
// 1.9480969499999996 where the appends had given 1.94809695).
func usageQuery(by sessiontree.UsageBy) string {
	g := usageGroupColumns[by]
	from := `usage_days u WHERE u.day COLLATE "C" BETWEEN $1 AND $2`
	costOrder := `u.day COLLATE "C", u.session, u.bucket COLLATE "C"`
	if by == sessiontree.UsageByCwd || by == sessiontree.UsageBySession {
		from = `(SELECT session, sum(input) AS input, sum(output) AS output, sum(cache_read) AS cache_read,
			sum(cache_write) AS cache_write, sum(cost ORDER BY day COLLATE "C", bucket COLLATE "C") AS cost
			FROM usage_days WHERE day COLLATE "C" BETWEEN $1 AND $2 GROUP BY session) AS u
			JOIN sessions s ON s.pk = u.session`
		costOrder = `u.session`
	}
	order := `grp_cost DESC, grp_tokens DESC, grp_key`
	if by == sessiontree.UsageByDay || by == sessiontree.UsageByWeek {
		order = `grp_key`
	}
	return `SELECT ` + g[0] + ` AS grp_key, ` + g[1] + ` AS grp_name, ` + g[2] + ` AS grp_sessions,
		sum(u.input)::bigint, sum(u.output)::bigint, sum(u.cache_read)::bigint, sum(u.cache_write)::bigint,
		sum(u.input + u.output + u.cache_read + u.cache_write)::bigint AS grp_tokens, sum(u.cost ORDER BY ` + costOrder + `) AS grp_cost
		FROM ` + from + `
		GROUP BY 1, 2
		HAVING sum(u.input + u.output + u.cache_read + u.cache_write) > 0 OR sum(u.cost) > 0
		ORDER BY ` + order
}

// Usage implements [sessiontree.Database.Usage] from the usage_days rows
// every write keeps, in one snapshot: it reads no entry. A query
// [sessiontree.UsageQuery.Validate] refuses matches
// sessiontree.ErrBadUsageQuery.
func (db *DB) Usage(ctx context.Context, uq sessiontree.UsageQuery) (sessiontree.UsageReport, error) {
	if err := uq.Validate(); err != nil {
		return sessiontree.UsageReport{}, fmt.Errorf("usage report: %w", err)
	}
	uq.By = cmp.Or(uq.By, sessiontree.UsageByDay)
	rep := sessiontree.UsageReport{By: uq.By, Since: uq.Since, Until: uq.Until}
	lo, hi := uq.DayRange()
	err := db.view(ctx, "usage report", func(tx *sqlx.Tx) error {
		rep.Rows = []sessiontree.UsageRow{}
		rows, err := tx.QueryContext(ctx, usageQuery(uq.By), lo, hi)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var row sessiontree.UsageRow
			t := &row.Tokens
			if err := rows.Scan(&row.Key, &row.Name, &row.Sessions, &t.Input, &t.Output, &t.CacheRead, &t.CacheWrite,
				&t.Total, &row.Cost); err != nil {
				return err
			}
			rep.Rows = append(rep.Rows, row)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return tx.GetContext(ctx, &rep.Total.Sessions,
			`SELECT count(DISTINCT session) FROM usage_days WHERE day COLLATE "C" BETWEEN $1 AND $2`, lo, hi)
	})
	if err != nil {
		return sessiontree.UsageReport{}, err
	}
	rep.SumRows()
	return rep, nil
}
