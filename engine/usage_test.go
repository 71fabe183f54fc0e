package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// usageReport runs db.Usage and fails the test on error.
func usageReport(t testing.TB, db *engine.DB, q sessiontree.UsageQuery) sessiontree.UsageReport {
	t.Helper()
	rep, err := db.Usage(context.Background(), q)
	if err != nil {
		t.Fatalf("Usage(%+v) = %v", q, err)
	}
	return rep
}

// closeTo tells costs summed in different orders apart from costs that
// differ.
func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b)) }

// TestUsageAgreesWithStats imports pi's fixtures (both releases) and the
// stats log, written by appends and by batches: the usage report's total
// is the sum of every session's Stats (what `info` shows), tokens
// exactly and cost up to the order of the additions; by model, each row
// is the sum of that bucket of the sessions' breakdowns; every grouping's
// rows add up to the total.
func TestUsageAgreesWithStats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	ids := importFixtures(t, db)
	batched := newSession(t, db)
	if err := batched.AppendBatch(ctx, statsEntries(t, "", "")); err != nil {
		t.Fatal(err)
	}
	appended := newSession(t, db)
	for _, e := range statsEntries(t, "", "") {
		d := sessiontree.Draft{Type: e.Type, ID: e.ID, Timestamp: e.Timestamp, Fields: fieldsOf(t, e)}
		if _, err := appended.Append(ctx, d, sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ids = append(ids, batched.ID(), appended.ID())

	var want sessiontree.Stats
	var withUsage int64
	byModel := map[string]sessiontree.UsageBucket{}
	for _, id := range ids {
		st, err := db.OpenSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		s, err := st.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want.AddUsage(sessiontree.Usage{Input: s.Tokens.Input, Output: s.Tokens.Output,
			CacheRead: s.Tokens.CacheRead, CacheWrite: s.Tokens.CacheWrite, Cost: s.Cost})
		if len(s.Breakdown) > 0 {
			withUsage++
		}
		for _, b := range s.Breakdown {
			sum := byModel[b.Key]
			sum.Key, sum.Tokens, sum.Cost = b.Key, sum.Tokens+b.Tokens, sum.Cost+b.Cost
			byModel[b.Key] = sum
		}
	}
	if want.Tokens.Total == 0 || len(byModel) < 3 {
		t.Fatalf("the fixtures have %d tokens in %d buckets; want usage to compare", want.Tokens.Total, len(byModel))
	}

	for _, by := range sessiontree.UsageGroupings {
		rep := usageReport(t, db, sessiontree.UsageQuery{By: by})
		if rep.Total.Tokens != want.Tokens || !closeTo(rep.Total.Cost, want.Cost) || rep.Total.Sessions != withUsage {
			t.Errorf("Usage(by %s).Total = %+v; want tokens %+v, cost %v, %d sessions (Stats summed)",
				by, rep.Total, want.Tokens, want.Cost, withUsage)
		}
		var sum sessiontree.Stats
		for _, r := range rep.Rows {
			sum.AddUsage(sessiontree.Usage{Input: r.Tokens.Input, Output: r.Tokens.Output,
				CacheRead: r.Tokens.CacheRead, CacheWrite: r.Tokens.CacheWrite, Cost: r.Cost})
		}
		if sum.Tokens != want.Tokens || !closeTo(sum.Cost, want.Cost) {
			t.Errorf("Usage(by %s) rows add up to %+v, $%v; want %+v, $%v", by, sum.Tokens, sum.Cost, want.Tokens, want.Cost)
		}
	}

	rep := usageReport(t, db, sessiontree.UsageQuery{By: sessiontree.UsageByModel})
	if len(rep.Rows) != len(byModel) {
		t.Errorf("Usage(by model) has %d rows; want %d (the breakdowns' buckets)", len(rep.Rows), len(byModel))
	}
	for i, r := range rep.Rows {
		b := byModel[r.Key]
		if r.Tokens.Total != b.Tokens || !closeTo(r.Cost, b.Cost) {
			t.Errorf("Usage(by model) row %q = %d tokens, $%v; want %d, $%v", r.Key, r.Tokens.Total, r.Cost, b.Tokens, b.Cost)
		}
		if i > 0 && r.Cost > rep.Rows[i-1].Cost {
			t.Errorf("Usage(by model) row %q costs more than the row before it", r.Key)
		}
	}
}

// usageEntry is an assistant message with usage, at ts, by model.
func usageEntry(t testing.TB, id, parent, ts, model string, input int64, cost float64) sessiontree.Entry {
	t.Helper()
	fields := fmt.Sprintf(`{"message":{"role":"assistant","content":[],"provider":"p","model":%q,`+
		`"usage":{"input":%d,"output":1,"cacheRead":10,"cacheWrite":100,"cost":{"total":%v}}}}`, model, input, cost)
	e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: []byte(fields)}, id, parent, ts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestUsageGroupsAndDays writes usage on known days into sessions of two
// working directories and checks every grouping and the day bounds: days
// are the UTC dates of the entries' timestamps (an offset moves a record
// to its UTC day), weeks ISO 8601 weeks, bounds inclusive, and records
// whose timestamp is not RFC 3339 count on the unknown day "", only when
// no bound is given.
func TestUsageGroupsAndDays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	create := func(cwd, name string) *engine.Storage {
		st, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: cwd})
		if err != nil {
			t.Fatal(err)
		}
		if name != "" {
			if _, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).SetName(ctx, name); err != nil {
				t.Fatal(err)
			}
		}
		return st
	}
	a, b, c := create("/work/a", "alpha"), create("/work/a", ""), create("/work/b", "gamma")
	// Input tokens are powers of ten, so each total tells which records
	// it holds.
	write := func(st *engine.Storage, recs ...sessiontree.Entry) {
		if err := st.AppendBatch(ctx, recs); err != nil {
			t.Fatal(err)
		}
	}
	leaf := func(st *engine.Storage) string {
		l, err := st.Leaf(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	write(a,
		usageEntry(t, "a1", leaf(a), "2026-11-29T23:59:59.999Z", "m1", 1, 0.5), // Sunday: ISO week 48
		usageEntry(t, "a2", "a1", "2026-11-30T00:00:00.000Z", "m1", 10, 0.25),  // Monday: week 49
		usageEntry(t, "a3", "a2", "2026-12-04T01:00:00.000+02:00", "m2", 100, 1))
	write(b, usageEntry(t, "b1", "", "2026-12-03T12:00:00.000Z", "m1", 1000, 2))
	write(c,
		usageEntry(t, "c1", leaf(c), "2026-12-05T08:00:00.000Z", "m2", 10000, 4),
		usageEntry(t, "c2", "c1", "yesterday", "m2", 100000, 8))

	type row struct {
		key, name string
		sessions  int64
		input     int64
	}
	rowsOf := func(rep sessiontree.UsageReport) []row {
		var out []row
		for _, r := range rep.Rows {
			out = append(out, row{r.Key, r.Name, r.Sessions, r.Tokens.Input})
		}
		return out
	}
	for _, tt := range []struct {
		q    sessiontree.UsageQuery
		want []row
	}{
		{sessiontree.UsageQuery{}, []row{{"", "", 1, 100000}, {"2026-11-29", "", 1, 1}, {"2026-11-30", "", 1, 10},
			{"2026-12-03", "", 2, 1100}, {"2026-12-05", "", 1, 10000}}},
		{sessiontree.UsageQuery{By: sessiontree.UsageByWeek}, []row{{"", "", 1, 100000}, {"2026-W48", "", 1, 1},
			{"2026-W49", "", 3, 11110}}},
		{sessiontree.UsageQuery{By: sessiontree.UsageByModel}, []row{{"p/m2", "", 2, 110100}, {"p/m1", "", 2, 1011}}},
		{sessiontree.UsageQuery{By: sessiontree.UsageByCwd}, []row{{"/work/b", "", 1, 110000}, {"/work/a", "", 2, 1111}}},
		{sessiontree.UsageQuery{By: sessiontree.UsageBySession}, []row{{c.ID(), "gamma", 1, 110000}, {b.ID(), "", 1, 1000},
			{a.ID(), "alpha", 1, 111}}},
		{sessiontree.UsageQuery{Since: "2026-11-30", Until: "2026-12-03"}, []row{{"2026-11-30", "", 1, 10},
			{"2026-12-03", "", 2, 1100}}},
		{sessiontree.UsageQuery{Since: "2026-12-03"}, []row{{"2026-12-03", "", 2, 1100}, {"2026-12-05", "", 1, 10000}}},
		{sessiontree.UsageQuery{Until: "2026-11-29"}, []row{{"2026-11-29", "", 1, 1}}},
		{sessiontree.UsageQuery{Since: "2026-12-03", Until: "2026-12-03", By: sessiontree.UsageByCwd}, []row{{"/work/a", "", 2, 1100}}},
		{sessiontree.UsageQuery{Since: "2027-01-01"}, nil},
	} {
		rep := usageReport(t, db, tt.q)
		if diff := cmp.Diff(tt.want, rowsOf(rep), cmp.AllowUnexported(row{})); diff != "" {
			t.Errorf("Usage(%+v) rows (-want +got):\n%s", tt.q, diff)
		}
		var input int64
		for _, r := range rep.Rows {
			input += r.Tokens.Input
		}
		if rep.Total.Tokens.Input != input {
			t.Errorf("Usage(%+v).Total = %+v; want the rows' input %d", tt.q, rep.Total, input)
		}
		if rep.Rows == nil {
			t.Errorf("Usage(%+v).Rows is nil; want an empty list", tt.q)
		}
	}
	rep := usageReport(t, db, sessiontree.UsageQuery{Since: "2026-11-30", Until: "2026-12-03"})
	if want := (sessiontree.TokenStats{Input: 1110, Output: 3, CacheRead: 30, CacheWrite: 300, Total: 1443}); rep.Total.Tokens != want ||
		rep.Total.Cost != 3.25 || rep.Total.Sessions != 2 {
		t.Errorf("Usage(2026-11-30..2026-12-03).Total = %+v; want %+v, $3.25, 2 sessions", rep.Total, want)
	}

	// A deleted session's usage goes with it.
	if err := db.DeleteSession(ctx, c.ID(), sessiontree.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	rep = usageReport(t, db, sessiontree.UsageQuery{By: sessiontree.UsageByCwd})
	if got := rowsOf(rep); len(got) != 1 || got[0].key != "/work/a" || rep.Total.Tokens.Input != 1111 {
		t.Errorf("Usage(by cwd) after deleting %s = %+v; want /work/a alone", c.ID(), got)
	}
}

// TestUsageQueryRefused checks that a query with a bad grouping or date
// is refused with ErrBadUsageQuery.
func TestUsageQueryRefused(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	for _, q := range []sessiontree.UsageQuery{
		{By: "month"}, {Since: "2026-13-01"}, {Until: "03.12.2026"}, {Since: "2026-12-04", Until: "2026-12-03"},
	} {
		if _, err := db.Usage(context.Background(), q); !errors.Is(err, sessiontree.ErrBadUsageQuery) {
			t.Errorf("Usage(%+v) = %v; want ErrBadUsageQuery", q, err)
		}
	}
}

// TestUsageBatchesContinueRows writes records of one day and bucket by
// single appends, batches of several records and batches in a caller's
// transaction, on top of each other: Check (at cleanup, and here)
// compares the stored rows with a replay exactly, so each write must add
// its costs to the stored ones one at a time, in log order.
func TestUsageBatchesContinueRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	st := newSession(t, db)
	const ts = "2026-12-03T10:00:00.000Z"
	var log []sessiontree.Entry
	parent := ""
	for i := range 40 {
		// Costs whose sum depends on the order of the additions.
		e := usageEntry(t, fmt.Sprintf("e%02d", i), parent, ts, "m", 1, []float64{0.1, 0.2, 0.3, 1e-17}[i%4])
		log = append(log, e)
		parent = e.ID
	}
	for _, e := range log[:5] {
		if _, err := st.Append(ctx, sessiontree.Draft{Type: e.Type, ID: e.ID, Timestamp: e.Timestamp, Fields: fieldsOf(t, e)},
			sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.AppendBatch(ctx, log[5:20]); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, func(tx *engine.Tx) error { return tx.AppendBatch(st, log[20:]) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Check(ctx, ""); err != nil {
		t.Fatalf("Check() = %v", err)
	}
	var want float64
	for _, e := range log {
		want += sessiontree.StatsOf(e).Usage.Cost
	}
	rep := usageReport(t, db, sessiontree.UsageQuery{})
	if len(rep.Rows) != 1 || rep.Rows[0].Cost != want || rep.Rows[0].Tokens.Input != 40 {
		t.Errorf("Usage() rows = %+v; want one row of 40 records costing %v (summed in log order)", rep.Rows, want)
	}
}

// TestCheckFindsUsageDamage changes, adds and removes usage_days rows
// behind the engine's back: Check reports each as corrupt.
func TestCheckFindsUsageDamage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tt := range []struct{ name, stmt string }{
		{"cost", `UPDATE usage_days SET cost = cost + 1e-12`},
		{"tokens", `UPDATE usage_days SET cache_read = cache_read + 1`},
		{"day", `UPDATE usage_days SET day = '2026-12-04'`},
		{"missing", `DELETE FROM usage_days`},
		{"extra", `INSERT INTO usage_days SELECT session, day, 'x/y', 1, 1, 1, 1, 1 FROM usage_days`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "u.db")
			emptyDB.CopyTo(t, path)
			db, err := engine.Open(ctx, path, engine.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			st := newSession(t, db)
			if err := st.AppendBatch(ctx, []sessiontree.Entry{usageEntry(t, "e1", "", "2026-12-03T10:00:00.000Z", "m", 5, 0.5)}); err != nil {
				t.Fatal(err)
			}
			if _, err := rawDB(t, path).ExecContext(ctx, tt.stmt); err != nil {
				t.Fatal(err)
			}
			if err := db.Check(ctx, ""); !errors.Is(err, sessiontree.ErrCorrupt) {
				t.Errorf("Check() after %s = %v; want ErrCorrupt", tt.stmt, err)
			}
		})
	}
}

// TestUsageBackfill takes a database written by this engine back to
// before migration 12 (the table and its record gone) and opens it again:
// the migration computes every session's rows from the stored entries
// (pi's fixtures, the stats log) exactly as the writes had kept them, so
// the reports are equal to the last bit and Check agrees.
func TestUsageBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "u.db")
	emptyDB.CopyTo(t, path)
	db, err := engine.Open(ctx, path, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	importFixtures(t, db)
	st := newSession(t, db)
	if err := st.AppendBatch(ctx, statsEntries(t, "", "")); err != nil {
		t.Fatal(err)
	}
	var before []sessiontree.UsageReport
	for _, by := range sessiontree.UsageGroupings {
		before = append(before, usageReport(t, db, sessiontree.UsageQuery{By: by}))
	}
	if before[0].Total.Tokens.Total == 0 {
		t.Fatal("no usage to backfill")
	}
	db.Close()

	upgraded := reopenAfter(t, path,
		`DROP TABLE usage_days`, `DELETE FROM schema_migrations WHERE version = 12`, `PRAGMA user_version = 11`)
	for i, by := range sessiontree.UsageGroupings {
		got := usageReport(t, upgraded, sessiontree.UsageQuery{By: by})
		if diff := cmp.Diff(before[i], got); diff != "" {
			t.Errorf("Usage(by %s) after migration 12 (-written +migrated):\n%s", by, diff)
		}
	}
	if err := upgraded.Check(ctx, ""); err != nil {
		t.Errorf("Check() after migration 12 = %v", err)
	}
}

// TestUsageDayAnyZone writes usage at a time without zone (JavaScript's
// Date reads it as local time) with the process in New York's zone and
// checks the database and reports it from Tokyo's: the day a record counts
// on must not depend on the zone of the machine that reads it, or Check
// reports the rows every write kept as damaged and two machines report the
// same log on different days. (Not parallel: it sets time.Local.)
func TestUsageDayAnyZone(t *testing.T) {
	ctx := context.Background()
	local := time.Local
	t.Cleanup(func() { time.Local = local })
	time.Local = time.FixedZone("New York", -5*3600)
	db := newDB(t)
	st := newSession(t, db)
	if err := st.AppendBatch(ctx, []sessiontree.Entry{usageEntry(t, "e1", "", "2026-12-03T22:30:00", "m", 5, 0.5)}); err != nil {
		t.Fatal(err)
	}
	time.Local = time.FixedZone("Tokyo", 9*3600)
	if err := db.Check(ctx, ""); err != nil {
		t.Errorf("Check() in another zone = %v", err)
	}
	rep := usageReport(t, db, sessiontree.UsageQuery{})
	if len(rep.Rows) != 1 || rep.Rows[0].Key != "2026-12-03" {
		t.Errorf("Usage() rows = %+v; want one on 2026-12-03, the date as written", rep.Rows)
	}
}

// TestUsageDaysOfOlderReaders takes a database back to the rows an older
// engine kept for times it could not read or read differently from
// JavaScript's Date (before ParseTime read them as Date does): a time
// without seconds on the unknown day "", a day past the month's end or
// of year 0000 kept as written. Opening it recomputes those sessions'
// rows from their entries, so Check agrees with the log and the report
// counts each record on its day; a session whose rows were right keeps
// them.
func TestUsageDaysOfOlderReaders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "u.db")
	emptyDB.CopyTo(t, path)
	db := openDB(t, path, engine.Options{})
	var sessions []string
	for _, ts := range []string{"2026-12-03T23:30Z", "2026-02-31T10:00:00.000Z", "0000-06-01T10:00:00.000Z",
		"2026-12-05T10:00:00.000Z"} {
		st := newSession(t, db)
		if err := st.AppendBatch(ctx, []sessiontree.Entry{
			usageEntry(t, "e1", "", ts, "m", 5, 0.1), usageEntry(t, "e2", "e1", ts, "m", 7, 0.2),
		}); err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, st.ID())
	}
	before := usageReport(t, db, sessiontree.UsageQuery{})
	db.Close()

	upgraded := reopenAfter(t, path,
		`UPDATE usage_days SET day = '' WHERE day = '2026-12-03'`,
		`UPDATE usage_days SET day = '2026-02-31' WHERE day = '2026-03-03'`,
		`UPDATE usage_days SET day = '0000-06-01' WHERE session = (SELECT pk FROM sessions WHERE id = '`+sessions[2]+`')`,
		`DELETE FROM schema_migrations WHERE version = 20`, `PRAGMA user_version = 19`)
	if err := upgraded.Check(ctx, ""); err != nil {
		t.Errorf("Check() after opening = %v", err)
	}
	if diff := cmp.Diff(before, usageReport(t, upgraded, sessiontree.UsageQuery{})); diff != "" {
		t.Errorf("Usage() after opening (-written +reopened):\n%s", diff)
	}
	if len(before.Rows) != 4 {
		t.Errorf("Usage() rows = %+v; want three days and the unknown one", before.Rows)
	}
}

// TestUsageDaysOfGoOnlyTimes: times Go's RFC 3339 parser read and
// JavaScript's Date does not (a comma before the fraction, a one-digit
// hour, an offset of 24 hours or of 60 minutes), which an older engine
// counted on their date and UsageDay now on the unknown day "", are on a
// real date in an older database, where migration 20 (which looks at the
// stored day) does not see them: Check reported the intact database
// corrupt. Opening it computes those sessions' rows again.
func TestUsageDaysOfGoOnlyTimes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "u.db")
	emptyDB.CopyTo(t, path)
	db := openDB(t, path, engine.Options{})
	stamps := []string{"2026-12-03T10:00:00,5Z", "2026-12-03T1:00:00Z", "2026-12-03T10:00:00+24:00", "2026-12-03T10:00:00+05:60"}
	for _, ts := range stamps {
		st := newSession(t, db)
		if err := st.AppendBatch(ctx, []sessiontree.Entry{
			usageEntry(t, "e1", "", ts, "m", 5, 0.1), usageEntry(t, "e2", "e1", "2026-12-05T10:00:00.000Z", "m", 7, 0.2),
		}); err != nil {
			t.Fatal(err)
		}
	}
	before := usageReport(t, db, sessiontree.UsageQuery{})
	db.Close()

	upgraded := reopenAfter(t, path, `UPDATE usage_days SET day = '2026-12-03' WHERE day = ''`,
		`DELETE FROM schema_migrations WHERE version BETWEEN 20 AND 24`, `PRAGMA user_version = 19`)
	if err := upgraded.Check(ctx, ""); err != nil {
		t.Errorf("Check() after opening = %v", err)
	}
	if diff := cmp.Diff(before, usageReport(t, upgraded, sessiontree.UsageQuery{})); diff != "" {
		t.Errorf("Usage() after opening (-written +reopened):\n%s", diff)
	}
	if len(before.Rows) != 2 || before.Rows[0].Key != "" || before.Rows[0].Sessions != int64(len(stamps)) {
		t.Errorf("Usage() rows = %+v; want the unknown day of every session, and 2026-12-05", before.Rows)
	}
}

// reopenAfter runs statements on the closed database at path, as an older
// engine would have left it, and opens it again.
func reopenAfter(t *testing.T, path string, stmts ...string) *engine.DB {
	t.Helper()
	raw := rawDB(t, path)
	for _, stmt := range stmts {
		if _, err := raw.ExecContext(context.Background(), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	raw.Close()
	return openDB(t, path, engine.Options{})
}
