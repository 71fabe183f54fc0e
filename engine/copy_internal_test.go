package engine

import (
	"strings"
	"testing"
)

// TestCopyLogSeeks checks that every statement of Tx.CopyLog reads only
// the source session's rows, through a key range or a key (no scan of a
// table, which would read every session's rows), in key order without a
// sort: a whole-tree fork costs what it copies.
func TestCopyLogSeeks(t *testing.T) {
	t.Parallel()
	db := planDB(t)
	for _, query := range []string{qCopyEntries, qCopyBranch, qCopyLabels, qCopyUsageDays, qCopyCounters} {
		plan := queryPlan(t, db, query, 1, 2, 3<<32, 1<<32|1, 1<<32|0xffffffff)
		if len(plan) == 0 {
			t.Errorf("plan of %q is empty", query)
		}
		for _, step := range plan {
			if strings.HasPrefix(step, "SCAN") || strings.Contains(step, "TEMP B-TREE") {
				t.Errorf("plan of %q = %q; want searches by key only, no scan or sort", query, plan)
				break
			}
		}
	}
}
