package engine_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/internal/testdb"
	"github.com/sessiontree/sessiontree/migrate"
	"github.com/sessiontree/sessiontree/storetest"
)

// v1Columns are the columns of migration 1's tables, which later
// migrations keep and fill the others from.
var v1Columns = map[string]string{
	"sessions": `pk, id, version, created_at, cwd, parent_session, updated_at, name, leaf_pk, leaf_id, leaf_depth,
		boundary_depth, entry_count, message_count, input_tokens, output_tokens, cache_read_tokens,
		cache_write_tokens, cost, deleting`,
	"entries": `pk, session, seq, id, parent_id, parent_pk, type, timestamp, depth, start_depth, thinking_pk,
		model_pk, tools_pk, target_id, custom_type, role, raw`,
	"branch": `session, depth, entry`,
	"labels": `session, target_id, label, entry`,
}

// TestUpgradeFromFirstMigrationAnswersAlike imports the pi fixtures into a
// new database, copies what migration 1's tables hold of them into a
// database made by migration 1 alone, as the first engine left its
// sessions, and opens that with the current engine: the later migrations
// fill what they add, so that Check is clean and every read answers as the
// fresh import does.
func TestUpgradeFromFirstMigrationAnswersAlike(t *testing.T) {
	if testing.Short() {
		t.Skip("imports every pi fixture twice over")
	}
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	fresh := openDB(t, filepath.Join(dir, "fresh.db"), engine.Options{})
	var ids []string
	files, err := filepath.Glob("../testdata/pi*/*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if id := storetest.ImportLenient(t, engine.NewDatabase(fresh), f); id != "" {
			ids = append(ids, id)
		}
	}
	want := storetest.ReadAnswers(t, engine.NewDatabase(fresh), ids)

	first, err := fs.ReadFile(migrate.Files, "0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	oldPath := filepath.Join(dir, "old.db")
	old, err := sqlx.Open(testdb.EngineDriver(), "file:"+oldPath+"?_txlock=immediate&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	old.SetMaxOpenConns(1)
	if _, err := migrate.Up(ctx, old, fstest.MapFS{"0001_init.sql": {Data: first}}, migrate.Options{ApplicationID: engine.ApplicationID}); err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(ctx, `ATTACH DATABASE ? AS fresh`, "file:"+filepath.Join(dir, "fresh.db")+"?mode=ro"); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"sessions", "entries", "branch", "labels"} {
		cols := v1Columns[table]
		if _, err := old.ExecContext(ctx, `INSERT INTO main.`+table+` (`+cols+`) SELECT `+cols+` FROM fresh.`+table); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
	}
	if _, err := old.ExecContext(ctx, `DETACH DATABASE fresh`); err != nil {
		t.Fatal(err)
	}
	old.Close()

	upgraded := openDB(t, oldPath, engine.Options{})
	if err := upgraded.Check(ctx, ""); err != nil {
		t.Errorf("Check() after the upgrade = %v", err)
	}
	if diff := cmp.Diff(want, storetest.ReadAnswers(t, engine.NewDatabase(upgraded), ids)); diff != "" {
		t.Errorf("answers after the upgrade (-fresh import +upgraded):\n%s", diff)
	}
}

// TestDerivedRedoOfEverySession applies migration 22, which computes
// again in SQL the names, labels and usage an older engine derived by
// rules since fixed, to every session of the pi fixtures, not only those
// it lists: its statements give what the writes gave, so Check stays
// clean and every read answers as before.
func TestDerivedRedoOfEverySession(t *testing.T) {
	if testing.Short() {
		t.Skip("imports every pi fixture")
	}
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	db := openDB(t, path, engine.Options{})
	files, err := filepath.Glob("../testdata/pi*/*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range files {
		if id := storetest.ImportLenient(t, engine.NewDatabase(db), f); id != "" {
			ids = append(ids, id)
		}
	}
	want := storetest.ReadAnswers(t, engine.NewDatabase(db), ids)
	text, err := migrationText("_derived_redo.sql")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := rawDB(t, path).BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, stmt := range sqlStatements(text) {
		if _, err := tx.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		if rest, ok := strings.CutPrefix(stmt, "CREATE TEMP TABLE "); ok {
			if table, _, _ := strings.Cut(rest, " "); strings.HasSuffix(table, "_redo") {
				if _, err := tx.Exec(`INSERT INTO ` + table + ` SELECT pk FROM sessions EXCEPT SELECT session FROM ` + table); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.Check(ctx, ""); err != nil {
		t.Errorf("Check() after computing every session again = %v", err)
	}
	if diff := cmp.Diff(want, storetest.ReadAnswers(t, engine.NewDatabase(db), ids)); diff != "" {
		t.Errorf("answers after computing every session again (-as written +computed again):\n%s", diff)
	}
}
