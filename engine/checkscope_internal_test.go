package engine

import (
	"strings"
	"testing"
)

// TestSessionCheckPlans locks in what a session's check costs: every
// statement it runs reads the session's rows by key (a range of entries
// keys, the session's key, or a search of an index by it), never a scan
// of a table, so its cost follows the session's size, not the
// database.s.
func TestSessionCheckPlans(t *testing.T) {
	db := planDB(t)
	lo, hi := pkRange(1)
	type stmt struct {
		name, query string
		args        []any
		want        string // a step of the plan, "" for none required
	}
	stmts := []stmt{
		{"entries", qCheckEntries, args(lo, hi), "SEARCH entries USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"},
		{"session row", qCheckSession, args("s"), "USING INDEX sqlite_autoindex_sessions_1 (id=?)"},
		{"branch", qCheckBranch, args(1), "SEARCH branch USING PRIMARY KEY (session=?)"},
		{"labels", qLabels, args(1), "SEARCH labels USING PRIMARY KEY (session=?)"},
		{"stats", qSessionStats, args(1), "SEARCH sessions USING INTEGER PRIMARY KEY (rowid=?)"},
		{"summary", qSessionSummary, args(1), "SEARCH sessions USING INTEGER PRIMARY KEY (rowid=?)"},
		{"usage days", qUsageDaysOf, args(1), "USING INDEX usage_days_by_session (session=?)"},
		{"usage day by key", qUsageDayByKey, args("2026-12-06", 1, "p/m"), "SEARCH usage_days USING PRIMARY KEY (day=? AND session=? AND bucket=?)"},
		{"marks", qCheckMarks, args(1, 1), "SEARCH sessions USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"},
		{"documents", qCheckDocs, args(lo, hi), "SEARCH entries_fts_docsize USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"},
		{"text", qCheckText, args(lo), "SEARCH e USING INTEGER PRIMARY KEY (rowid=?)"},
		{"document size", qCheckDocSize, args(lo), "SEARCH entries_fts_docsize USING INTEGER PRIMARY KEY (rowid=?)"},
		{"pending", qCheckPending, args(1, 1), "SEARCH s USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"},
	}
	for _, x := range entryIndexes {
		stmts = append(stmts, stmt{x.name, x.through, args(lo, hi, 1), "INDEX " + x.name + " ("})
	}
	for _, p := range sessionIndexes {
		stmts = append(stmts,
			stmt{p.index + " (table)", p.table, args(lo, hi, 1), "SEARCH sessions USING INTEGER PRIMARY KEY (rowid=?)"},
			stmt{p.index, p.through, args(lo, hi, 1), "INDEX " + p.index + " ("})
	}
	for _, s := range stmts {
		plan := queryPlan(t, db, s.query, s.args...)
		found := false
		for _, step := range plan {
			if strings.HasPrefix(step, "SCAN ") && !strings.Contains(step, "VIRTUAL TABLE") && !strings.HasPrefix(step, "SCAN CONSTANT ROW") {
				t.Errorf("%s: plan %q scans a table", s.name, plan)
			}
			found = found || strings.Contains(step, s.want)
		}
		if !found {
			t.Errorf("%s: plan %q; want a step %q", s.name, plan, s.want)
		}
	}
}
