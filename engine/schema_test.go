package engine_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree/engine"
)

// dumpSchema returns a database's schema, object name to normalized SQL,
// plus its application_id and user_version and the search index's
// settings ("fts5 " and the key; rows of entries_fts_config, not schema,
// but for its version, which counts writes).
func dumpSchema(t *testing.T, path string) map[string]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL
UNION ALL SELECT 'fts5 ' || k, CAST(v AS TEXT) FROM entries_fts_config WHERE k != 'version'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, text string
		if err := rows.Scan(&name, &text); err != nil {
			t.Fatal(err)
		}
		out[name] = normalizeSQL(text)
	}
	for _, p := range []string{"application_id", "user_version"} {
		var v string
		if err := db.QueryRow("PRAGMA " + p).Scan(&v); err != nil {
			t.Fatal(err)
		}
		out["PRAGMA "+p] = v
	}
	return out
}

var (
	sqlComment = regexp.MustCompile(`--[^\n]*`)
	sqlSpace   = regexp.MustCompile(`\s+`)
	sqlPunct   = regexp.MustCompile(`\s*([(),;])\s*`)
)

// normalizeSQL drops comments, case and layout: SQLite keeps a statement's
// text as written, and ALTER TABLE splices added columns into it.
func normalizeSQL(s string) string {
	s = sqlComment.ReplaceAllString(s, " ")
	s = sqlSpace.ReplaceAllString(strings.ToLower(s), " ")
	return strings.TrimSpace(sqlPunct.ReplaceAllString(s, "$1"))
}

// TestSchemaFile checks that schema.sql is exactly the schema of a freshly
// migrated database: it runs schema.sql on an empty database and compares
// both databases' sqlite_master (and header pragmas).
func TestSchemaFile(t *testing.T) {
	t.Parallel()
	text, err := os.ReadFile("../schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fromFile := filepath.Join(dir, "schema.db")
	db, err := sql.Open("sqlite", "file:"+fromFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(string(text)); err != nil {
		t.Fatalf("schema.sql does not run: %v", err)
	}
	db.Close()

	migrated := filepath.Join(dir, "migrated.db")
	edb, err := engine.Open(context.Background(), migrated, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	edb.Close()
	if diff := cmp.Diff(dumpSchema(t, migrated), dumpSchema(t, fromFile)); diff != "" {
		t.Errorf("schema.sql differs from a migrated database (-migrated +schema.sql):\n%s", diff)
	}
	// The search index's bulk settings (migrations 5 and 17), compared
	// above too.
	got := dumpSchema(t, migrated)
	if got["fts5 hashsize"] != "16777216" || got["fts5 automerge"] != "16" {
		t.Errorf("entries_fts_config: hashsize %q, automerge %q; want 16777216, 16", got["fts5 hashsize"], got["fts5 automerge"])
	}
}
