package pgengine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/pgtest"
)

// TestPlansAfterBulkImport: after the statistics were taken with one small
// session in the table, a bulk import of another (the case where every
// session known is in the statistics and a new one is estimated at one
// row) leaves a resume's queries reading by key: every scan of entries or
// branch is an index scan on the session and another column, never one
// on the session alone, filtering the rest (EXPLAIN (FORMAT JSON) of
// State, the path off the branch, the branch range, and the row lock of
// a write with its leaf and last seq).
func TestPlansAfterBulkImport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTestDB(t, Options{})
	small := customChain(t, "s", 20)
	if err := newStorage(t, db).AppendBatch(ctx, small); err != nil {
		t.Fatal(err)
	}
	if _, err := db.db.ExecContext(ctx, `ANALYZE entries, branch`); err != nil {
		t.Fatal(err)
	}
	const n = 3000
	big := customChain(t, "b", n)
	st := newStorage(t, db)
	if err := st.AppendBatch(ctx, big); err != nil {
		t.Fatal(err)
	}
	leaf := big[n-1].ID
	for _, q := range []struct {
		name string
		sql  string
		args []any
	}{
		{"state", stateQuery, []any{st.pk, leaf}},
		{"path off the branch", upQuery, []any{st.pk, int64(n), 1}},
		{"branch range", branchRange, []any{st.pk, n - 100, n}},
		{"a write's row lock", lockQuery, []any{st.pk}},
	} {
		var plan string
		if err := db.db.GetContext(ctx, &plan, `EXPLAIN (FORMAT JSON) `+q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal([]byte(plan), &v); err != nil {
			t.Fatal(err)
		}
		if bad := sessionOnlyScans(v, nil); len(bad) > 0 {
			t.Errorf("%s: scans a session's rows to filter them: %s\n%s", q.name, strings.Join(bad, "; "), plan)
		}
	}
}

// customChain is n custom entries, each the child of the one before, with
// ids prefix-numbered.
func customChain(t testing.TB, prefix string, n int) []sessiontree.Entry {
	t.Helper()
	out := make([]sessiontree.Entry, n)
	parent := ""
	for i := range out {
		e, err := sessiontree.BuildEntry(customDraft(i), fmt.Sprintf("%s%07d", prefix, i+1), parent, "2026-01-01T00:00:00.000Z")
		if err != nil {
			t.Fatal(err)
		}
		out[i], parent = e, e.ID
	}
	return out
}

// openTestDB opens a fresh database of pgtest's migrated template with
// opts, closed when t ends.
func openTestDB(t testing.TB, opts Options) *DB {
	t.Helper()
	return openTestURL(t, pgtest.Migrated.Database(t), opts)
}

// openTestURL opens the database at url for t with opts, closed when t
// ends.
func openTestURL(t testing.TB, url string, opts Options) *DB {
	t.Helper()
	db, err := Open(context.Background(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newStorage creates an empty session in db.
func newStorage(t testing.TB, db *DB) *Storage {
	t.Helper()
	st, err := db.CreateSession(context.Background(), sessiontree.SessionMeta{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// sessionOnlyScans lists the plan's scans of entries or branch that are
// not by an index condition on more than one column (a sequential scan,
// or an index scan on the session alone).
func sessionOnlyScans(v any, out []string) []string {
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			out = sessionOnlyScans(x, out)
		}
	case map[string]any:
		node, _ := v["Node Type"].(string)
		rel, _ := v["Relation Name"].(string)
		index, _ := v["Index Name"].(string)
		cond, _ := v["Index Cond"].(string)
		ours := func(name string) bool { return strings.HasPrefix(name, "entries") || strings.HasPrefix(name, "branch") }
		switch {
		case node == "Seq Scan" && ours(rel):
			out = append(out, node+" on "+rel)
		case ours(index) && !strings.Contains(cond, " AND "):
			out = append(out, fmt.Sprintf("%s on %s by %q", node, index, cond))
		}
		for _, k := range []string{"Plan", "Plans"} {
			out = sessionOnlyScans(v[k], out)
		}
	}
	return out
}

// TestBulkLoadAnalyzesOnce: a session loaded in batches (a push or an
// import of a long session, 4,096 entries a batch) into a database whose
// statistics know every session needs them taken again once, when its
// first batch is stored, not after every batch: once the statistics know
// the session, the planner scales its share with the table. With two
// sessions in the table every batch used to analyze (ANALYZE was 56% of
// the server's time in a push of 100,000 entries).
func TestBulkLoadAnalyzesOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTestDB(t, Options{})
	if err := newStorage(t, db).AppendBatch(ctx, customChain(t, "s", 20)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.db.ExecContext(ctx, `ANALYZE entries, branch`); err != nil {
		t.Fatal(err)
	}
	const batches, each = 5, 1200
	big := customChain(t, "b", batches*each)
	st := newStorage(t, db)
	for i := range batches {
		if err := st.AppendBatch(ctx, big[i*each:(i+1)*each]); err != nil {
			t.Fatal(err)
		}
	}
	if n := db.bulk.analyzed.Load(); n != 1 {
		t.Errorf("%d batches of a new session analyzed %d times; want once, after the first", batches, n)
	}
}

// TestBulkLoadAnalyzesSessionsWhenKnown: the first bulk load of a
// database takes the statistics of every column a session's reads filter
// on; a new session's bulk load after that takes those of the session
// columns alone (the rest hold), and the planner then knows the session:
// its entries' session statistics name it.
func TestBulkLoadAnalyzesSessionsWhenKnown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTestDB(t, Options{})
	if err := newStorage(t, db).AppendBatch(ctx, customChain(t, "a", analyzeMinRows)); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	if err := db.db.SelectContext(ctx, &kinds, `SELECT attname FROM pg_stats WHERE tablename = 'entries' ORDER BY attname`); err != nil {
		t.Fatal(err)
	}
	if want := "depth id parent_id seq session type"; strings.Join(kinds, " ") != want {
		t.Errorf("after the first bulk load, entries' statistics cover %q; want %q", kinds, want)
	}
	st := newStorage(t, db)
	if err := st.AppendBatch(ctx, customChain(t, "b", analyzeMinRows)); err != nil {
		t.Fatal(err)
	}
	if all, n := db.bulk.analyzedAll.Load(), db.bulk.analyzed.Load(); all != 1 || n != 2 {
		t.Errorf("two sessions loaded in bulk: %d ANALYZEs, %d of every column; want 2 and 1", n, all)
	}
	var known bool
	if err := db.db.GetContext(ctx, &known, `SELECT $1 = ANY(most_common_vals::text::bigint[]) FROM pg_stats
		WHERE tablename = 'entries' AND attname = 'session'`, st.pk); err != nil {
		t.Fatal(err)
	}
	if !known {
		t.Errorf("the statistics of entries.session do not name the session loaded second (%d)", st.pk)
	}
}
