package engine_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/storetest"
)

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
	ids, search := storetest.BuildMutationDB(t, s, filepath.Join("..", "testdata"))
	raw := rawDB(t, path)
	raw.SetMaxOpenConns(1)
	h := storetest.CheckMutationHarness{
		DB: s.Database(), IDs: ids,
		Exec:     func(stmts ...string) error { return execAll(raw, stmts) },
		Query:    func(query string) ([]string, error) { return queryColumn(raw, query) },
		Search:   search,
		EntryKey: "pk", ParentKey: "parent_pk", BranchSeq: "(entry & 4294967295)",
		Moved: func(table, col, to string) string {
			if table == "entries" && col == "pk" {
				return to + ` * 4294967296 + seq + 1000000`
			}
			return ""
		},
	}
	h.Short = storetest.MutationSample()
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

// execAll runs stmts in one transaction.
func execAll(raw *sql.DB, stmts []string) error {
	tx, err := raw.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, stmt := range stmts {
		if _, err := tx.Exec(stmt); err != nil {
			return err
		}
	}
	return tx.Commit()
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
