package pgengine_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/storetest"
)

// TestCheckMutations damages the stored rows one way at a time
// (storetest.RunCheckMutations): each damage is reported by Check,
// naming the session, or harmless.
func TestCheckMutations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.Migrated.Database(t)
	s, err := store.OpenURL(ctx, url, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ids, search := storetest.BuildMutationDB(t, s, filepath.Join("..", "testdata"))
	conn := connect(t, url)
	// The damage goes behind the triggers' backs, as a disk's or a
	// restore's would.
	if _, err := conn.Exec(ctx, `SET session_replication_role = replica`); err != nil {
		t.Fatal(err)
	}
	h := storetest.CheckMutationHarness{
		DB: s.Database(), IDs: ids, Search: search,
		Exec:     func(stmts ...string) error { return pgExecAll(conn, stmts) },
		Query:    func(query string) ([]string, error) { return pgQueryColumn(conn, query) },
		EntryKey: "seq", ParentKey: "parent_seq", BranchSeq: "seq",
		Short: storetest.MutationSample(),
	}
	for _, tb := range []storetest.MutationTable{
		{Name: "sessions", Session: "pk", Overriding: " OVERRIDING SYSTEM VALUE"}, {Name: "entries", Session: "session"},
		{Name: "branch", Session: "session"}, {Name: "usage_days", Session: "session"}, {Name: "labels", Session: "session"},
		{Name: "imports", Session: "session_id", SessionByID: true}, {Name: "search_text", Session: "session"},
		{Name: "search_terms"},
	} {
		tb.Columns = pgColumns(t, conn, tb.Name)
		h.Tables = append(h.Tables, tb)
	}
	storetest.RunCheckMutations(t, h)
}

// qColumns lists a table's columns, generated ones left out, with their
// type, whether they may be NULL and whether they are in the primary key.
const qColumns = `SELECT c.column_name, c.data_type, c.is_nullable = 'NO',
       c.column_name IN (SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
                         WHERE i.indrelid = $1::text::regclass AND i.indisprimary)
FROM information_schema.columns c
WHERE c.table_schema = current_schema() AND c.table_name = $1::text AND c.is_generated = 'NEVER'
ORDER BY c.ordinal_position`

// pgColumns are the columns of table.
func pgColumns(t *testing.T, conn *pgx.Conn, table string) []storetest.MutationColumn {
	t.Helper()
	rows, err := conn.Query(context.Background(), qColumns, table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []storetest.MutationColumn
	for rows.Next() {
		var c storetest.MutationColumn
		var typ string
		if err := rows.Scan(&c.Name, &typ, &c.NotNull, &c.Key); err != nil {
			t.Fatal(err)
		}
		switch typ {
		case "bigint", "integer":
			c.Kind = 'i'
		case "double precision":
			c.Kind = 'r'
		case "boolean":
			c.Kind = 'b'
		default:
			c.Kind = 't'
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil || len(out) == 0 {
		t.Fatalf("columns of %s: %v", table, err)
	}
	return out
}

// pgExecAll runs stmts in one transaction on conn.
func pgExecAll(conn *pgx.Conn, stmts []string) error {
	ctx := context.Background()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	for _, stmt := range stmts {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// pgQueryColumn returns the first column of query's rows as text (""
// for NULL).
func pgQueryColumn(conn *pgx.Conn, query string) ([]string, error) {
	rows, err := conn.Query(context.Background(), `SELECT v::text FROM (`+query+`) q(v)`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v *string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		if v != nil {
			out = append(out, *v)
		} else {
			out = append(out, "")
		}
	}
	return out, rows.Err()
}
