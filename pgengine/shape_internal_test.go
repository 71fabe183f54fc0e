package pgengine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// binaryTree is a log of n entries, entry i (from 1) under entry i/2: a
// bushy tree, half of it tips.
func binaryTree(t testing.TB, prefix string, n int) []sessiontree.Entry {
	t.Helper()
	out := make([]sessiontree.Entry, n)
	for i := range out {
		parent := ""
		if i > 0 {
			parent = out[(i+1)/2-1].ID
		}
		e, err := sessiontree.BuildEntry(customDraft(i), fmt.Sprintf("%s%07d", prefix, i+1), parent, "2026-01-01T00:00:00.000Z")
		if err != nil {
			t.Fatal(err)
		}
		out[i] = e
	}
	return out
}

// rowsTouched is the number of rows the scans of an EXPLAIN (ANALYZE,
// FORMAT JSON) plan read: those they returned and those their filters
// removed, every loop.
func rowsTouched(v any) float64 {
	var n float64
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			n += rowsTouched(x)
		}
	case map[string]any:
		if node, _ := v["Node Type"].(string); strings.Contains(node, "Scan") {
			rows, _ := v["Actual Rows"].(float64)
			removed, _ := v["Rows Removed by Filter"].(float64)
			loops, _ := v["Actual Loops"].(float64)
			n += (rows + removed) * loops
		}
		for _, k := range []string{"Plan", "Plans"} {
			n += rowsTouched(v[k])
		}
	}
	return n
}

// TestSummaryReadsConstantRows checks, by the rows PostgreSQL's scans
// read (EXPLAIN ANALYZE, never a clock), that what info reads of a
// session's tree costs the same whatever the session's size: the summary
// is one sessions row, and a write's look-up of a parent's earlier
// children (an entry not under the entry stored last) reads only those
// children, in a bushy session of 1,000 entries as in one of 20.
func TestSummaryReadsConstantRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTestDB(t, Options{})
	touched := func(query string, args ...any) float64 {
		t.Helper()
		tx, err := db.db.BeginTxx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		// Tables this small are scanned whole by choice: without that
		// choice, the plan shows whether an index serves the query.
		if _, err := tx.ExecContext(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
			t.Fatal(err)
		}
		var plan string
		if err := tx.GetContext(ctx, &plan, `EXPLAIN (ANALYZE, FORMAT JSON) `+query, args...); err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal([]byte(plan), &v); err != nil {
			t.Fatal(err)
		}
		return rowsTouched(v)
	}
	var got [2][2]float64
	for i, n := range []int{20, 1000} {
		st := newStorage(t, db)
		if err := st.AppendBatch(ctx, binaryTree(t, "t", n)); err != nil {
			t.Fatal(err)
		}
		sum, err := st.Summary(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := (sessiontree.Shape{Branches: int64(n - n/2), Roots: 1}); sum.Shape != want {
			t.Errorf("%d entries: Summary().Shape = %+v; want %+v", n, sum.Shape, want)
		}
		// Entry 5 has children 10 and 11.
		got[i] = [2]float64{touched(qSummary, st.pk), touched(qHadChild, st.pk, 5)}
	}
	if got[0] != got[1] || got[1][0] != 1 || got[1][1] > 2 {
		t.Errorf("rows read by the summary and a parent's children's look-up: %v with 20 entries, %v with 1,000; want 1 and at most 2 for both", got[0], got[1])
	}
}
