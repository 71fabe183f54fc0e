package engine

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// planDB opens a new database for queryPlan, closed when the test ends.
func planDB(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "s.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// queryPlan returns the details of EXPLAIN QUERY PLAN for query, one per
// step.
func queryPlan(t *testing.T, db *DB, query string, a ...any) []string {
	t.Helper()
	var plan []string
	err := db.view(context.Background(), func(r q) error {
		rows, err := r.rows(`EXPLAIN QUERY PLAN `+query, a...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, parent, notused int64
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				return err
			}
			plan = append(plan, detail)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// TestSummaryReadsOneRow checks that what info reads of a session is one
// primary-key lookup of its sessions row: a constant number of rows,
// whatever the session's size.
func TestSummaryReadsOneRow(t *testing.T) {
	t.Parallel()
	db := planDB(t)
	for _, query := range []string{qSessionSummary, qSessionStats, qSessionLeaf, qSessionName} {
		plan := queryPlan(t, db, query, 1)
		if len(plan) != 1 || !strings.HasPrefix(plan[0], "SEARCH sessions USING INTEGER PRIMARY KEY") {
			t.Errorf("plan of %q = %q; want one SEARCH sessions USING INTEGER PRIMARY KEY", query, plan)
		}
	}
}

// TestShapeTriggerSeeks checks that the queries migration 15's trigger
// runs when an entry does not hang under the entry before it are seeks:
// the parent's earlier children are found through the primary key and
// entries_by_parent, never by scanning a session's entries.
func TestShapeTriggerSeeks(t *testing.T) {
	t.Parallel()
	db := planDB(t)
	for _, query := range []string{
		`SELECT type FROM entries WHERE pk = ?1`,
		`SELECT 1 FROM entries AS c WHERE c.pk = ?1 + 1 AND c.pk < ?2 AND c.parent_pk = ?1 AND c.type <> 'leaf'`,
		`SELECT 1 FROM entries AS c WHERE c.parent_pk = ?1 AND c.parent_pk <> c.pk - 1 AND c.pk < ?2 AND c.type <> 'leaf'`,
	} {
		plan := queryPlan(t, db, query, 1, 2)
		if len(plan) != 1 || !strings.HasPrefix(plan[0], "SEARCH c USING INDEX entries_by_parent") &&
			!strings.HasPrefix(plan[0], "SEARCH entries USING INTEGER PRIMARY KEY") &&
			!strings.HasPrefix(plan[0], "SEARCH c USING INTEGER PRIMARY KEY") {
			t.Errorf("plan of %q = %q; want one primary-key or entries_by_parent search", query, plan)
		}
	}
}

// TestOutlineSeeks checks that every query of the folded tree's outline
// searches an index (no SCAN): what it reads is proportional to what the
// tree shows, whatever the session's size.
func TestOutlineSeeks(t *testing.T) {
	t.Parallel()
	db := planDB(t)
	for _, tc := range []struct {
		query string
		args  []any
	}{
		{qOutlineSession, args(1)},
		{qOutlineLinks, args(1<<32, 2<<32)},
		{qOutlineRoots, args(1)},
		{qOutlineTypes, args(1)},
		{qOutlineLabelled, args(1)},
		{qOutlineByID, args(1, `["a"]`)},
		{qOutlineEntries, args(`[4294967297]`)},
	} {
		for _, step := range queryPlan(t, db, tc.query, tc.args...) {
			// json_each scans the list of keys or ids the query is given.
			if strings.HasPrefix(step, "SCAN ") && !strings.HasPrefix(step, "SCAN j ") && !strings.HasPrefix(step, "SCAN json_each ") {
				t.Errorf("plan of %q has %q; want only searches", tc.query, step)
			}
		}
	}
}
