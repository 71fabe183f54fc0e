package pgengine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/pgengine"
)

// olderUsage is a database with one session per timestamp, each with two
// usage records at that time and one at a time every reader agrees on,
// and the usage report by day it gives.
type olderUsage struct {
	db     *pgengine.DB
	url    string
	ids    []string
	before sessiontree.UsageReport
}

// newOlderUsage writes olderUsage's sessions.
func newOlderUsage(t *testing.T, stamps ...string) olderUsage {
	t.Helper()
	ctx := context.Background()
	db, url := openDB(t)
	o := olderUsage{db: db, url: url}
	for _, ts := range stamps {
		st := newSession(t, db)
		var log []sessiontree.Entry
		for i, at := range []string{ts, ts, "2026-12-06T10:00:00.000Z"} {
			d := usageAtDraft(t, 5+i)
			parent := ""
			if i > 0 {
				parent = log[i-1].ID
			}
			e, err := sessiontree.BuildEntry(d, fmt.Sprintf("e%d", i), parent, at)
			if err != nil {
				t.Fatal(err)
			}
			log = append(log, e)
		}
		if err := st.AppendBatch(ctx, log); err != nil {
			t.Fatal(err)
		}
		o.ids = append(o.ids, st.ID())
	}
	var err error
	if o.before, err = db.Usage(ctx, sessiontree.UsageQuery{}); err != nil {
		t.Fatal(err)
	}
	return o
}

// usageAtDraft is an assistant message with usage: input tokens, 1 output
// token, $0.1 (a cost whose sums show the order they were added in).
func usageAtDraft(t *testing.T, input int) sessiontree.Draft {
	t.Helper()
	f, err := sessiontree.Fields("message", map[string]any{"role": "assistant", "content": []any{},
		"provider": "p", "model": "m", "usage": map[string]any{"input": input, "output": 1, "cost": map[string]any{"total": 0.1}}})
	if err != nil {
		t.Fatal(err)
	}
	return sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: f}
}

// execAll runs statements on a connection of the test's own.
func execAll(t *testing.T, url string, stmts ...string) {
	t.Helper()
	conn := connect(t, url)
	for _, stmt := range stmts {
		if _, err := conn.Exec(context.Background(), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
}

// olderDays are the statements taking session ids[i]'s rows of day
// from[i] to the day an engine before ParseTime read times as Date does
// kept them on.
func olderDays(ids []string, moves ...[2]string) []string {
	var stmts []string
	for i, m := range moves {
		stmts = append(stmts, fmt.Sprintf(`UPDATE usage_days SET day = '%s' WHERE day = '%s'
			AND session = (SELECT pk FROM sessions WHERE id = '%s')`, m[1], m[0], ids[i]))
	}
	return stmts
}

// xmins are the transactions that wrote each session's usage_days rows.
func xmins(t *testing.T, url string) map[string]string {
	t.Helper()
	rows, err := connect(t, url).Query(context.Background(), `SELECT s.id, string_agg(u.xmin::text, ',' ORDER BY u.day, u.bucket)
		FROM usage_days u JOIN sessions s ON s.pk = u.session GROUP BY s.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, x string
		if err := rows.Scan(&id, &x); err != nil {
			t.Fatal(err)
		}
		out[id] = x
	}
	return out
}

// TestUsageDaysOfOlderReaders takes a database back to the usage_days
// rows an engine kept before ParseTime read times as JavaScript's Date
// does (d757bb1, c924469): a time without seconds on the unknown day "",
// a day past the month's end and one of year 0000 kept as written, a
// comma before the fraction (Go's parser read it, Date does not) on its
// date where UsageDay now gives "". Check then reports the intact
// database corrupt. Opening it, from three processes at once, computes
// those sessions' rows again, so that Check agrees with the log and the
// report counts each record on its day as a new database does, as soon
// as any Open returns; a session whose rows were right is not written
// (its rows' xmin).
func TestUsageDaysOfOlderReaders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := newOlderUsage(t, "2026-12-03T23:30Z", "2026-02-31T10:00:00.000Z", "2026-12-03T10:00:00,5Z", "0000-06-01T10:00:00.000Z",
		"2026-12-05T10:00:00.000Z")
	execAll(t, o.url, append(olderDays(o.ids, [2]string{"2026-12-03", ""}, [2]string{"2026-03-03", "2026-02-31"},
		[2]string{"", "2026-12-03"}, [2]string{"", "0000-06-01"}),
		`DROP TABLE derived_redo`, `DELETE FROM schema_migrations WHERE version = 14 OR name LIKE '%\_derived\_redo.sql'`)...)
	if err := o.db.Check(ctx, ""); !errors.Is(err, sessiontree.ErrCorrupt) {
		t.Fatalf("Check() of the older rows = %v; want ErrCorrupt (the rows differ from a replay)", err)
	}
	untouched := xmins(t, o.url)[o.ids[4]]

	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := pgengine.Open(ctx, o.url, pgengine.Options{})
			if err != nil {
				t.Error(err)
				return
			}
			defer db.Close()
			if err := db.Check(ctx, ""); err != nil {
				t.Errorf("Check() after Open = %v", err)
			}
		}()
	}
	wg.Wait()
	if got, err := o.db.Usage(ctx, sessiontree.UsageQuery{}); err != nil || !cmp.Equal(got, o.before) {
		t.Errorf("Usage() after opening = %v (-written +reopened):\n%s", err, cmp.Diff(o.before, got))
	}
	if got := xmins(t, o.url)[o.ids[4]]; got != untouched {
		t.Errorf("rows of a session that was right written again: xmin %s, was %s", got, untouched)
	}
}

// TestUsageDaysRedoResumes: a recompute interrupted after some sessions
// (migration 14 recorded, sessions still listed in derived_redo) goes
// on at the next Open, and empties the list.
func TestUsageDaysRedoResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := newOlderUsage(t, "2026-12-03T1:00:00Z")
	execAll(t, o.url, append(olderDays(o.ids, [2]string{"", "2026-12-03"}),
		`INSERT INTO derived_redo SELECT pk FROM sessions`)...)
	if err := o.db.Check(ctx, ""); !errors.Is(err, sessiontree.ErrCorrupt) {
		t.Fatalf("Check() of the older rows = %v; want ErrCorrupt", err)
	}
	db := openURL(t, o.url)
	if err := db.Check(ctx, ""); err != nil {
		t.Errorf("Check() after Open = %v", err)
	}
	var left int
	if err := connect(t, o.url).QueryRow(ctx, `SELECT count(*) FROM derived_redo`).Scan(&left); err != nil || left != 0 {
		t.Errorf("derived_redo after Open holds %d rows (%v); want none", left, err)
	}
}

// TestUsageSumsInKeyOrder: a report adds its rows' costs in the order of
// their keys, not in the order the server keeps the rows, which an update
// of a row changes (it moves to the end of the table): before, costs of
// 0.1, 0.2 and 0.3 on three days summed to 0.6000000000000001 by model,
// and to 0.6 once the first day's row was rewritten.
func TestUsageSumsInKeyOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := openDB(t)
	st := newSession(t, db)
	var log []sessiontree.Entry
	for i, cost := range []float64{0.1, 0.2, 0.3} {
		f, err := sessiontree.Fields("message", map[string]any{"role": "assistant", "content": []any{},
			"provider": "p", "model": "m", "usage": map[string]any{"input": 1, "output": 1, "cost": map[string]any{"total": cost}}})
		if err != nil {
			t.Fatal(err)
		}
		parent := ""
		if i > 0 {
			parent = log[i-1].ID
		}
		e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: f},
			fmt.Sprintf("e%d", i), parent, fmt.Sprintf("2026-12-0%dT10:00:00.000Z", i+1))
		if err != nil {
			t.Fatal(err)
		}
		log = append(log, e)
	}
	if err := st.AppendBatch(ctx, log); err != nil {
		t.Fatal(err)
	}
	reports := func() []sessiontree.UsageReport {
		var out []sessiontree.UsageReport
		for _, by := range []sessiontree.UsageBy{sessiontree.UsageByModel, sessiontree.UsageByWeek,
			sessiontree.UsageByCwd, sessiontree.UsageBySession} {
			rep, err := db.Usage(ctx, sessiontree.UsageQuery{By: by})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, rep)
		}
		return out
	}
	before := reports()
	execAll(t, url, `UPDATE usage_days SET cost = cost WHERE day = '2026-12-01'`)
	if diff := cmp.Diff(before, reports()); diff != "" {
		t.Errorf("usage reports after the first day's row was rewritten (-before +after):\n%s", diff)
	}
}
