package engine_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// TestUsageDaysOfV8Times: migration 24 recomputes the usage days of the
// sessions with an entry timed in a form older engines read otherwise
// than ParseTime, which now reads it as V8's Date does. Each session's
// stored day is set back to the older engines' (year 50 and 10, not
// 1950 and none; the year 0001 a negative offset carried -000000 into;
// 24:00:00.0000001 as the next day), and the database opened
// again gives Check nothing to report and the usage report of the
// writes. Without the migration Check reports the four sessions.
func TestUsageDaysOfV8Times(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "u.db")
	db := openDB(t, path, engine.Options{})
	stamps := map[string][2]string{ // timestamp: the day now, the older engines' day
		"0050-12-01 10:00Z":            {"1950-12-01", "0050-12-01"},
		"0010-01-01 00:00Z":            {"", "0010-01-01"},
		"-000000-12-31T23:00:00-02:00": {"", "0001-01-01"},
		"2026-12-03T24:00:00.0000001Z": {"", "2026-12-04"},
	}
	var undo []string
	for ts, days := range stamps {
		st := newSession(t, db)
		if err := st.AppendBatch(ctx, []sessiontree.Entry{
			usageEntry(t, "e1", "", ts, "m", 5, 0.1), usageEntry(t, "e2", "e1", "2026-12-05T10:00:00.000Z", "m", 7, 0.2),
		}); err != nil {
			t.Fatal(err)
		}
		if got := sessiontree.UsageDay(ts); got != days[0] {
			t.Fatalf("UsageDay(%q) = %q; want %q", ts, got, days[0])
		}
		undo = append(undo, "UPDATE usage_days SET day = '"+days[1]+"' WHERE day = '"+days[0]+
			"' AND session = (SELECT session FROM entries WHERE timestamp = '"+ts+"')")
	}
	before := usageReport(t, db, sessiontree.UsageQuery{})
	db.Close()

	upgraded := reopenAfter(t, path, append(undo,
		`DELETE FROM schema_migrations WHERE version = 24`, `PRAGMA user_version = 23`)...)
	if err := upgraded.Check(ctx, ""); err != nil {
		t.Errorf("Check() after opening = %v", err)
	}
	if diff := cmp.Diff(before, usageReport(t, upgraded, sessiontree.UsageQuery{})); diff != "" {
		t.Errorf("Usage() after opening (-written +reopened):\n%s", diff)
	}
}
