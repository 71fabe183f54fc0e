package pgengine

import (
	"cmp"
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
)

// Usage per session, day and bucket (migration 2, the SQLite engine's
// usage_days): every write adds each usage record it stores to its
// session's row of the record's day (sessiontree.UsageDay) and bucket
// (sessiontree.StatsOf), one statement per record in log order, in the
// write's transaction; a report reads these rows, never the entries.

// addUsage adds the usage record es of entry e (if it has one) to the
// session's usage_days row.
func (st *session) addUsage(ctx context.Context, tx *sqlx.Tx, e sessiontree.Entry, es sessiontree.EntryStats) error {
	if !es.HasUsage {
		return nil
	}
	u := es.Usage
	_, err := tx.ExecContext(ctx, `INSERT INTO usage_days (day, session, bucket, input, output, cache_read, cache_write, cost)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (day, session, bucket) DO UPDATE SET input = usage_days.input + EXCLUDED.input,
			output = usage_days.output + EXCLUDED.output, cache_read = usage_days.cache_read + EXCLUDED.cache_read,
			cache_write = usage_days.cache_write + EXCLUDED.cache_write, cost = usage_days.cost + EXCLUDED.cost`,
		sessiontree.UsageDay(e.Timestamp), st.pk, es.Bucket, u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Cost)
	return err
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
// tokens or cost are left out (sessiontree.SortBreakdown's rule).
func usageQuery(by sessiontree.UsageBy) string {
	g := usageGroupColumns[by]
	from := `usage_days u WHERE u.day COLLATE "C" BETWEEN $1 AND $2`
	if by == sessiontree.UsageByCwd || by == sessiontree.UsageBySession {
		from = `(SELECT session, sum(input) AS input, sum(output) AS output, sum(cache_read) AS cache_read,
			sum(cache_write) AS cache_write, sum(cost) AS cost
			FROM usage_days WHERE day COLLATE "C" BETWEEN $1 AND $2 GROUP BY session) AS u
			JOIN sessions s ON s.pk = u.session`
	}
	order := `grp_cost DESC, grp_tokens DESC, grp_key`
	if by == sessiontree.UsageByDay || by == sessiontree.UsageByWeek {
		order = `grp_key`
	}
	return `SELECT ` + g[0] + ` AS grp_key, ` + g[1] + ` AS grp_name, ` + g[2] + ` AS grp_sessions,
		sum(u.input)::bigint, sum(u.output)::bigint, sum(u.cache_read)::bigint, sum(u.cache_write)::bigint,
		sum(u.input + u.output + u.cache_read + u.cache_write)::bigint AS grp_tokens, sum(u.cost) AS grp_cost
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
