package pgengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/migrate"
)

// TestSearchTermsAreTrigrams: search_terms holds every trigram of the
// indexed text, folded, each with the number of texts holding it, and
// nothing else: whether the catch-up wrote it or migrations 13 and 15
// filled it from a database indexed before, and after a session's
// delete, which takes its terms off (those no other text holds go); the
// pending texts' ExpandTerms gives the same terms.
func TestSearchTermsAreTrigrams(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSearchFixture(t)
	_, other, user := userSession(t, f.db)
	user("sqlite of another session: zebra")
	f.catchUp(t)
	terms := func(stage string) {
		t.Helper()
		var folded []string
		if err := f.db.db.SelectContext(ctx, &folded, `SELECT folded FROM search_text`); err != nil {
			t.Fatal(err)
		}
		var want termCounts
		for _, text := range folded {
			want.add(text, 1)
		}
		var rows []struct {
			Term  string
			Texts int64
		}
		if err := f.db.db.SelectContext(ctx, &rows, `SELECT term, texts FROM search_terms ORDER BY term`); err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, r := range rows {
			got[r.Term] = r.Texts
		}
		if !maps.Equal(got, want.n) || len(got) == 0 {
			t.Errorf("%s: search_terms holds %d terms (%d of them with the count of texts holding them); want the %d trigrams of the text",
				stage, len(got), countEqual(got, want.n), len(want.n))
		}
	}
	terms("catch-up")
	fill := func(name string) string {
		b, err := fs.ReadFile(migrate.PostgresFiles, name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	_, fill13, _ := strings.Cut(fill("0013_search_terms.sql"), ");\n")
	for _, q := range []string{`DELETE FROM search_terms`, `ALTER TABLE search_terms DROP COLUMN texts`, fill13,
		`INSERT INTO search_terms VALUES ('zzz')`, fill("0015_search_term_counts.sql")} {
		if _, err := f.db.db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	terms("migration")
	if err := f.db.DeleteSession(ctx, other, sessiontree.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	terms("delete")
	var zebra int
	if err := f.db.db.GetContext(ctx, &zebra, `SELECT count(*) FROM search_terms WHERE term IN ('zeb', 'ebr')`); err != nil || zebra != 0 {
		t.Errorf("terms of the deleted session's text alone = %d, %v; want none", zebra, err)
	}
	var folded []string
	if err := f.db.db.SelectContext(ctx, &folded, `SELECT folded FROM search_text`); err != nil {
		t.Fatal(err)
	}

	var texts []sessiontree.KeyText
	for i, text := range folded {
		texts = append(texts, sessiontree.KeyText{Key: int64(i), Text: strings.ToUpper(text)})
	}
	f.view(t, func(st *Tx) {
		ti, err := st.TextIndex(texts)
		if err != nil {
			t.Fatal(err)
		}
		for _, from := range []string{"s", "sq", "日", "語"} {
			to := from[:len(from)-1] + string(from[len(from)-1]+1)
			if r := []rune(from); r[0] > 0x7f {
				to = string(r[0] + 1)
			}
			got, err := ti.ExpandTerms(ctx, from, to, 1000)
			if err != nil {
				t.Fatal(err)
			}
			db, err := st.ExpandTerms(from, to, 1000)
			if err != nil || !slices.Equal(got, db) || len(got) == 0 {
				t.Errorf("ExpandTerms(%q) = %q in the pending texts, %q, %v in search_terms; want the same, some", from, got, db, err)
			}
		}
	})
}

// countEqual returns how many terms of got have the count want gives.
func countEqual(got, want map[string]int64) int {
	n := 0
	for t, c := range got {
		if want[t] == c {
			n++
		}
	}
	return n
}

// TestShortPhraseReadsItsMatches: a phrase of one or two characters,
// expanded into the terms of search_terms that start with it (as the
// store does), is matched through the trigram index: the search reads
// the rows holding it, not the table. Before migration 13 a short
// phrase was its own term, a LIKE pg_trgm has no trigram of, which
// read every row (EXPLAIN ANALYZE: 200 rows, 199 removed by the filter).
func TestShortPhraseReadsItsMatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTestDB(t, Options{})
	_, _, user := userSession(t, db)
	for i := range 200 {
		text := fmt.Sprintf("entry %d of many, plain words only", i)
		if i == 17 {
			text = "猫がいる"
		}
		user(text)
	}
	f := searchFixture{db: db}
	f.catchUp(t)
	if _, err := db.db.ExecContext(ctx, `ANALYZE search_text`); err != nil {
		t.Fatal(err)
	}
	f.view(t, func(tx *Tx) {
		terms, err := tx.ExpandTerms("猫", "猬", 257)
		if err != nil || len(terms) != 1 {
			t.Fatalf(`ExpandTerms("猫") = %q, %v; want one term`, terms, err)
		}
		var args []any
		cond := matchSQL(phrase(terms[0]), &args)
		read := rowsRead(t, tx.tx, matchKeysSQL("true", cond, 300), args)
		if read > 2 {
			t.Errorf("the expanded phrase read %v rows of search_text; want the one holding it", read)
		}
	})
}

// rowsRead runs EXPLAIN ANALYZE of query and returns how many rows its
// scans of search_text read: the rows they gave and those their filters
// and rechecks removed. Only bitmap scans are on: for a table this small
// the planner takes a sequential scan, or the primary key's order,
// whatever the trigram index could do.
func rowsRead(t *testing.T, tx *sqlx.Tx, query string, args []any) float64 {
	t.Helper()
	var out string
	if _, err := tx.Exec(`SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off`); err != nil {
		t.Fatal(err)
	}
	if err := tx.GetContext(context.Background(), &out, `EXPLAIN (ANALYZE, FORMAT JSON) `+query, args...); err != nil {
		t.Fatal(err)
	}
	var plans []struct{ Plan map[string]any }
	if err := json.Unmarshal([]byte(out), &plans); err != nil || len(plans) != 1 {
		t.Fatalf("EXPLAIN: %v", err)
	}
	var walk func(n map[string]any) float64
	walk = func(n map[string]any) float64 {
		var sum float64
		if n["Relation Name"] == "search_text" {
			for _, k := range []string{"Actual Rows", "Rows Removed by Filter", "Rows Removed by Index Recheck"} {
				v, _ := n[k].(float64)
				sum += v
			}
		}
		subs, _ := n["Plans"].([]any)
		for _, sub := range subs {
			if m, ok := sub.(map[string]any); ok {
				sum += walk(m)
			}
		}
		return sum
	}
	return walk(plans[0].Plan)
}

// TestCheckComparesSearchTerms: Check reports a trigram of an indexed
// text missing from search_terms (a short query would miss the entry),
// naming the first entry holding it.
func TestCheckComparesSearchTerms(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSearchFixture(t)
	f.catchUp(t)
	if err := f.db.Check(ctx, f.id); err != nil {
		t.Fatalf("Check of an indexed session = %v", err)
	}
	if _, err := f.db.db.ExecContext(ctx, `DELETE FROM search_terms WHERE term = 'gam'`); err != nil {
		t.Fatal(err)
	}
	var ce *sessiontree.CorruptError
	if err := f.db.Check(ctx, f.id); !errors.As(err, &ce) || ce.EntryID != f.c.ID || !strings.Contains(ce.Reason, `"gam"`) {
		t.Errorf("Check without the term gam = %v; want a CorruptError naming %s and the term", err, f.c.ID)
	}
	if _, err := f.db.db.ExecContext(ctx, `INSERT INTO search_terms VALUES ('gam', 1)`); err != nil {
		t.Fatal(err)
	}
	if err := f.db.Check(ctx, f.id); err != nil {
		t.Errorf("Check with the term back = %v", err)
	}
}
