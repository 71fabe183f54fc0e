package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/migrate"
	"github.com/sessiontree/sessiontree/storetest"
)

// forgetMigration returns the statements that take the database at path
// back to before the migration whose file name ends in suffix: its
// record gone, user_version the newest version left.
func forgetMigration(t *testing.T, path, suffix string) []string {
	t.Helper()
	var v int64
	if err := rawDB(t, path).QueryRow(`SELECT max(version) FROM schema_migrations WHERE name NOT GLOB ?`, "*"+suffix).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return []string{`DELETE FROM schema_migrations WHERE name GLOB '*` + suffix + `'`, fmt.Sprintf("PRAGMA user_version = %d", v)}
}

// execOn runs statements on the closed database at path.
func execOn(t *testing.T, path string, stmts ...string) {
	t.Helper()
	raw := rawDB(t, path)
	defer raw.Close()
	for _, stmt := range stmts {
		if _, err := raw.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
}

// TestDerivedRedo: migration 22 computes again what older engines
// derived by rules since fixed (storetest.RunOlderRules).
func TestDerivedRedo(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "d.db")
	storetest.RunOlderRules(t, storetest.OlderRulesHarness{
		Dir: filepath.Join("..", "testdata", "olderrules"),
		Open: func(t *testing.T) (sessiontree.Database, func()) {
			db, err := engine.Open(context.Background(), path, engine.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return engine.NewDatabase(db), func() { db.Close() }
		},
		Exec:   func(t *testing.T, stmts ...string) { execOn(t, path, stmts...) },
		Forget: func(t *testing.T) { execOn(t, path, forgetMigration(t, path, "_derived_redo.sql")...) },
		OlderBreakdown: `[{"bucket":"undefined/m","first_seq":1,"tokens":11,"cost":0.5},` +
			`{"bucket":"p/m","first_seq":2,"tokens":2000000022,"cost":1.25},` +
			`{"bucket":"undefined/undefined","first_seq":3,"tokens":31,"cost":0.125}]`,
	})
}

// TestDerivedRedoPlans checks how the migration finds the sessions to
// compute again: the session_info and label entries through
// entries_by_type (searched per session, or the partial index scanned:
// it holds no message), the entries of the listed sessions by key
// ranges; only the responseModel test reads every entry of the table.
func TestDerivedRedoPlans(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "p.db")
	openDB(t, path, engine.Options{})
	text, err := migrationText("_derived_redo.sql")
	if err != nil {
		t.Fatal(err)
	}
	conn := rawDB(t, path)
	tx, err := conn.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	plans := map[string]string{}
	for _, stmt := range sqlStatements(text) {
		if rest, ok := strings.CutPrefix(stmt, "CREATE TEMP TABLE "); ok {
			table, query, _ := strings.Cut(rest, " AS")
			plans[table] = txPlan(t, tx, query)
		}
		if _, err := tx.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	for table, want := range map[string][]string{
		"names_redo":   {"e USING INDEX entries_by_type"},
		"labels_redo":  {"e USING INDEX entries_by_type"},
		"usage_record": {"SEARCH e USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"},
		"usage_redo":   {"SCAN usage_days", "SCAN entries"},
	} {
		for _, w := range want {
			if !strings.Contains(plans[table], w) {
				t.Errorf("plan of %s:\n%s\nwant %q", table, plans[table], w)
			}
		}
	}
	if strings.Count(strings.Join([]string{plans["names_redo"], plans["labels_redo"], plans["usage_record"]}, "\n"), "SCAN e\n") > 0 {
		t.Errorf("a plan scans entries:\n%v", plans)
	}
}

// migrationText is the text of the SQLite migration whose file name
// ends in suffix.
func migrationText(suffix string) (string, error) {
	names, err := fs.Glob(migrate.Files, "*"+suffix)
	if err != nil || len(names) != 1 {
		return "", fmt.Errorf("migrations *%s: %v, %w", suffix, names, err)
	}
	b, err := fs.ReadFile(migrate.Files, names[0])
	return string(b), err
}

// txPlan is EXPLAIN QUERY PLAN of query in tx, a step a line.
func txPlan(t *testing.T, tx *sql.Tx, query string) string {
	t.Helper()
	rows, err := tx.Query(`EXPLAIN QUERY PLAN ` + query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, parent, notused int64
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		b.WriteString(detail + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// sqlStatements splits a migration's text, its comment lines left out,
// into its statements.
func sqlStatements(text string) []string {
	var b strings.Builder
	for line := range strings.Lines(text) {
		if !strings.HasPrefix(line, "--") {
			b.WriteString(line)
		}
	}
	var out []string
	for stmt := range strings.SplitSeq(b.String(), ";\n") {
		if s := strings.TrimSpace(stmt); s != "" {
			out = append(out, s)
		}
	}
	return out
}
