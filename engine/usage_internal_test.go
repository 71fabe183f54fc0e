package engine

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestUsageReadsNoEntries checks the usage report's statements by the
// b-trees they open (EXPLAIN's OpenRead, by root page): those of
// usage_days and sessions (tables or indexes), never those of entries, whatever the grouping.
func TestUsageReadsNoEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "u.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	queries := map[string]string{"sessions": qUsageSessions}
	for _, by := range sessiontree.UsageGroupings {
		queries[string(by)] = usageQuery(by)
	}
	err = db.view(ctx, func(r q) error {
		tables := map[int64]string{} // root page -> the table it stores or indexes
		rows, err := r.rows(`SELECT rootpage, tbl_name FROM sqlite_schema WHERE rootpage > 0`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var page int64
			var name string
			if err := rows.Scan(&page, &name); err != nil {
				return err
			}
			tables[page] = name
		}
		rows.Close()
		for what, query := range queries {
			opened := map[string]bool{}
			rows, err := r.rows(`EXPLAIN `+query, "2026-01-01", "2026-12-31")
			if err != nil {
				return err
			}
			for rows.Next() {
				vals := make([]any, len(rows.dest))
				ptrs := make([]any, len(vals))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					return err
				}
				// addr, opcode, p1, p2, ...: OpenRead's p2 is a root page.
				if op, _ := vals[1].(string); op == "OpenRead" {
					page, _ := vals[3].(int64)
					opened[tables[page]] = true
				}
			}
			rows.Close()
			if !opened["usage_days"] {
				t.Errorf("usage query %s opens %v; want usage_days", what, opened)
			}
			for name := range opened {
				if name != "usage_days" && name != "sessions" {
					t.Errorf("usage query %s opens %q; want only usage_days and sessions", what, name)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
