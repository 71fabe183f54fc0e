package engine_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/storetest"
)

// mutationFixtures are the files of the database TestCheckMutations
// damages, the first the session damaged: branches, compactions, labels,
// usage, custom and unknown entry types, a name.
var mutationFixtures = []string{
	"pi1/edited-00.jsonl", "pi1/fork-00.jsonl", "piedge/unknown-types.jsonl",
	"piedge/labels-odd.jsonl", "piedge/names-odd.jsonl", "pirand/r0032.jsonl",
}

// TestCheckMutations damages the stored rows one way at a time
// (storetest.RunCheckMutations): each damage is reported by Check,
// naming the session, or harmless.
func TestCheckMutations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	s, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var files, ids []string
	for _, f := range mutationFixtures {
		files = append(files, filepath.Join("..", "testdata", f))
		meta, _ := storetest.ReadSessionFile(t, files[len(files)-1])
		ids = append(ids, meta.ID)
	}
	// The last session is left pending in the search index.
	last := len(files) - 1
	if _, err := s.Import(ctx, files[:last], store.ImportOptions{Mode: jsonl.Lenient}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Index(ctx, store.IndexOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Import(ctx, files[last:], store.ImportOptions{Mode: jsonl.Lenient}); err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, path)
	raw.SetMaxOpenConns(1)
	h := storetest.CheckMutationHarness{
		DB: s.Database(), IDs: ids,
		Exec:  func(stmts ...string) (int64, error) { return execCounted(raw, stmts) },
		Query: func(query string) ([]string, error) { return queryColumn(raw, query) },
		Search: func(ctx context.Context) (any, error) {
			return searchAnswers(ctx, store.New(storetest.NoWrites(s.Database())))
		},
		EntryKey: "pk", ParentKey: "parent_pk", BranchSeq: "(entry & 4294967295)",
		Moved: func(table, col, to string) string {
			if table == "entries" && col == "pk" {
				return to + ` * 4294967296 + seq + 1000000`
			}
			return ""
		},
	}
	if testing.Short() || storetest.RaceEnabled {
		h.Short = 8
	}
	h.Unverified = storetest.HeaderColumns
	for _, tb := range []storetest.MutationTable{
		{Name: "sessions", Session: "pk"}, {Name: "entries", Session: "session"}, {Name: "branch", Session: "session"},
		{Name: "usage_days", Session: "session"}, {Name: "labels", Session: "session"},
		{Name: "imports", Session: "session_id", SessionByID: true}, {Name: "search_pending"},
	} {
		tb.Columns = sqliteColumns(t, raw, tb.Name)
		h.Tables = append(h.Tables, tb)
	}
	triggers, err := queryColumn(raw, `SELECT name FROM sqlite_master WHERE type = 'trigger'`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range triggers {
		if _, err := raw.Exec(`DROP TRIGGER ` + tr); err != nil {
			t.Fatal(err)
		}
	}
	storetest.RunCheckMutations(t, h)
}

// searchAnswers are the hits of a few searches over the fixtures.
func searchAnswers(ctx context.Context, s *store.Store) (any, error) {
	var out []store.SearchResult
	for _, q := range []string{"the", "file", "summary", "hello"} {
		res, err := s.Search(ctx, q, store.SearchOptions{})
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

// sqliteColumns are the columns of table.
func sqliteColumns(t *testing.T, raw *sql.DB, table string) []storetest.MutationColumn {
	t.Helper()
	rows, err := raw.Query(`SELECT name, type, "notnull", pk FROM pragma_table_info(?)`, table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []storetest.MutationColumn
	for rows.Next() {
		var c storetest.MutationColumn
		var typ string
		var pk int
		if err := rows.Scan(&c.Name, &typ, &c.NotNull, &pk); err != nil {
			t.Fatal(err)
		}
		c.Kind, c.Key = 't', pk > 0
		switch typ {
		case "INTEGER":
			c.Kind = 'i'
		case "REAL":
			c.Kind = 'r'
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil || len(out) == 0 {
		t.Fatalf("columns of %s: %v", table, err)
	}
	return out
}

// execCounted runs stmts in one transaction and returns the rows they
// changed.
func execCounted(raw *sql.DB, stmts []string) (int64, error) {
	tx, err := raw.Begin()
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var n int64
	for _, stmt := range stmts {
		res, err := tx.Exec(stmt)
		if err != nil {
			return 0, err
		}
		if !strings.HasPrefix(stmt, "CREATE") && !strings.HasPrefix(stmt, "DROP") {
			k, _ := res.RowsAffected()
			n += k
		}
	}
	return n, tx.Commit()
}

// queryColumn returns the first column of query's rows as text ("" for
// NULL).
func queryColumn(raw *sql.DB, query string) ([]string, error) {
	rows, err := raw.Query(query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v sql.NullString
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v.String)
	}
	return out, rows.Err()
}
