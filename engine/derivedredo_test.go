package engine_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/migrate"
)

// olderRuleSessions are the files of testdata/olderrules: sessions whose
// derived values older engines computed by rules since fixed.
var olderRuleSessions = []string{"names", "labels", "usage"}

// olderValues are the statements that put back in each session (its key
// ?1) what an older engine stored for it (testdata/olderrules/README.md).
var olderValues = map[string][]string{
	"names":  {`UPDATE sessions SET name = char(65279) || 'my name' WHERE pk = ?1`},
	"labels": {`DELETE FROM labels WHERE session = ?1`},
	"usage": {
		`UPDATE usage_days SET bucket = CASE bucket WHEN '/m' THEN 'undefined/m' WHEN 'p/' THEN 'p/m'
			WHEN '5/null' THEN 'undefined/undefined' END WHERE session = ?1`,
		`INSERT INTO usage_days VALUES ('2026-12-04', ?1, 'p/m', 2000000000, 1, 0, 0, 1.0)`,
		`UPDATE sessions SET input_tokens = input_tokens + 2000000000, output_tokens = output_tokens + 1,
			cost = cost + 1, usage_buckets = '[{"bucket":"undefined/m","first_seq":1,"tokens":11,"cost":0.5},` +
			`{"bucket":"p/m","first_seq":2,"tokens":2000000022,"cost":1.25},` +
			`{"bucket":"undefined/undefined","first_seq":3,"tokens":31,"cost":0.125}]' WHERE pk = ?1`,
	},
}

// readOlderRules reads the entries of testdata/olderrules/name.jsonl.
func readOlderRules(t *testing.T, name string) []sessiontree.Entry {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "olderrules", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []sessiontree.Entry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		e, err := sessiontree.DecodeEntry(sc.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, e)
	}
	return out
}

// derivedAnswers are what a session's derived values answer: its name,
// labels, stats and summary, and the usage report by model and by day.
type derivedAnswers struct {
	Names, Labels, Stats, Summaries map[string]any
	ByModel, ByDay                  sessiontree.UsageReport
}

func answersOf(t *testing.T, db *engine.DB, ids map[string]string) derivedAnswers {
	t.Helper()
	ctx := context.Background()
	a := derivedAnswers{Names: map[string]any{}, Labels: map[string]any{}, Stats: map[string]any{}, Summaries: map[string]any{}}
	for file, id := range ids {
		st, err := db.OpenSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		name, err1 := st.Name(ctx)
		labels, err2 := st.Labels(ctx)
		stats, err3 := st.Stats(ctx)
		sum, err4 := st.Summary(ctx)
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			t.Fatal(err)
		}
		a.Names[file], a.Labels[file], a.Stats[file], a.Summaries[file] = name, labels, stats, sum
	}
	a.ByModel = usageReport(t, db, sessiontree.UsageQuery{By: sessiontree.UsageByModel})
	a.ByDay = usageReport(t, db, sessiontree.UsageQuery{})
	return a
}

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

// TestDerivedRedo builds a database as an older engine left it, the
// values derived by older rules written over the new ones, and shows
// Check reporting each session corrupt and the answers differing from a
// fresh import's until the migration computes them again.
func TestDerivedRedo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "d.db")
	db, err := engine.Open(ctx, path, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, file := range olderRuleSessions {
		st := newSession(t, db)
		if err := st.AppendBatch(ctx, readOlderRules(t, file)); err != nil {
			t.Fatal(err)
		}
		ids[file] = st.ID()
	}
	fresh := answersOf(t, db, ids)
	db.Close()

	raw := rawDB(t, path)
	for file, id := range ids {
		for _, stmt := range olderValues[file] {
			if _, err := raw.Exec(strings.ReplaceAll(stmt, "?1", "(SELECT pk FROM sessions WHERE id = '"+id+"')")); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
	}
	raw.Close()
	older, err := engine.Open(ctx, path, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for file, id := range ids {
		if err := older.Check(ctx, id); !errors.Is(err, sessiontree.ErrCorrupt) {
			t.Errorf("Check(%s) with the older values = %v; want corrupt", file, err)
		}
	}
	if cmp.Equal(fresh, answersOf(t, older, ids)) {
		t.Error("the older values answer as a fresh import")
	}
	older.Close()

	upgraded := reopenAfter(t, path, forgetMigration(t, path, "_derived_redo.sql")...)
	if err := upgraded.Check(ctx, ""); err != nil {
		t.Errorf("Check() after the migration = %v", err)
	}
	if diff := cmp.Diff(fresh, answersOf(t, upgraded, ids)); diff != "" {
		t.Errorf("answers after the migration (-fresh import +upgraded):\n%s", diff)
	}
	if fresh.Names["names"] != "my name\u0085" || len(fresh.Labels["labels"].(map[string]string)) != 2 {
		t.Errorf("fresh import: name %q, labels %v; want the new rules' (testdata/olderrules/README.md)",
			fresh.Names["names"], fresh.Labels["labels"])
	}
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
