package engine_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

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
	ids, want := corpusCopy(t, filepath.Join(dir, "fresh.db"))

	oldPath := filepath.Join(dir, "old.db")
	copyToFirstMigration(t, filepath.Join(dir, "fresh.db"), oldPath)

	upgraded := openDB(t, oldPath, engine.Options{})
	// The search index too: migration 4 built it from the rows it found.
	if err := engine.NewDatabase(upgraded).Check(ctx, ""); err != nil {
		t.Errorf("Check() after the upgrade = %v", err)
	}
	if diff := storetest.AnswersDiff(want, storetest.ReadAnswers(t, engine.NewDatabase(upgraded), ids)); diff != "" {
		t.Errorf("answers after the upgrade (-fresh import +upgraded):\n%s", diff)
	}
}

// copyToFirstMigration copies what migration 1's tables hold of the
// database at fresh into a new database at old made by migration 1
// alone, as the first engine left its sessions.
func copyToFirstMigration(t *testing.T, fresh, oldPath string) {
	t.Helper()
	ctx := context.Background()
	first, err := fs.ReadFile(migrate.Files, "0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	old, err := sqlx.Open(testdb.EngineDriver(), "file:"+oldPath+"?_txlock=immediate&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	old.SetMaxOpenConns(1)
	if _, err := migrate.Up(ctx, old, fstest.MapFS{"0001_init.sql": {Data: first}}, migrate.Options{ApplicationID: engine.ApplicationID}); err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(ctx, `ATTACH DATABASE ? AS fresh`, "file:"+fresh+"?mode=ro"); err != nil {
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
}

// TestDerivedRedoOfEverySession applies the migrations that compute
// again in SQL what older engines derived by rules since fixed (20,
// 21 and 24: usage by day; 22: names, labels and usage) to every session of the
// pi fixtures, not only those each lists: their statements give what the
// writes gave, so Check stays clean and every read answers as before.
func TestDerivedRedoOfEverySession(t *testing.T) {
	if testing.Short() {
		t.Skip("imports every pi fixture")
	}
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	ids, want := corpusCopy(t, path)
	db := openDB(t, path, engine.Options{})
	for _, suffix := range []string{"_usage_days_redo.sql", "_usage_days_go_times.sql", "_derived_redo.sql", "_usage_days_v8_times.sql"} {
		redoEverySession(t, path, suffix)
		if err := db.Check(ctx, ""); err != nil {
			t.Errorf("Check() after computing every session again by *%s = %v", suffix, err)
		}
		if diff := storetest.AnswersDiff(want, storetest.ReadAnswers(t, engine.NewDatabase(db), ids)); diff != "" {
			t.Errorf("answers after computing every session again by *%s (-as written +computed again):\n%s", suffix, diff)
		}
	}
}

// redoEverySession runs the statements of the migration whose file name
// ends in suffix on the database at path, with every session added to
// each list of sessions to compute again (its temporary tables *_redo).
func redoEverySession(t *testing.T, path, suffix string) {
	t.Helper()
	text, err := migrationText(suffix)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := rawDB(t, path).Begin()
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
}

// corpus is a database holding every pi fixture storetest.FixtureFiles
// gives, imported once per test binary for the whole-corpus tests (an
// import and its reads were half of each under the race detector), with
// the ids of its sessions and every read's answers on it.
var corpus struct {
	once sync.Once
	made bool
	data []byte // the database file's bytes
	ids  []string
	want storetest.Answers
}

// corpusCopy writes a copy of the corpus database to path and returns
// its sessions' ids and every read's answers, as the import left them.
// The first caller imports them, in a database its cleanup checks.
func corpusCopy(t *testing.T, path string) ([]string, storetest.Answers) {
	t.Helper()
	corpus.once.Do(func() { makeCorpus(t) })
	if !corpus.made {
		t.Fatal("the corpus database could not be made: see the test that made it")
	}
	if err := os.WriteFile(path, corpus.data, 0o600); err != nil {
		t.Fatal(err)
	}
	return corpus.ids, corpus.want
}

// makeCorpus imports the fixtures into a new database, checks it and
// keeps its file's bytes, ids and answers in corpus.
func makeCorpus(t *testing.T) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fixtures.db")
	db := openDB(t, path, engine.Options{})
	var ids []string
	for _, f := range storetest.FixtureFiles(t, "../testdata") {
		if id := storetest.ImportLenient(t, engine.NewDatabase(db), f); id != "" {
			ids = append(ids, id)
		}
	}
	want := storetest.ReadAnswers(t, engine.NewDatabase(db), ids)
	if err := db.Check(context.Background(), ""); err != nil {
		t.Fatalf("Check() of the fixtures as imported = %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the fixtures database left a -wal file when closed (%v): a copy of its file alone would not be whole", err)
	}
	corpus.data, corpus.ids, corpus.want, corpus.made = data, ids, want, true
}

// TestUpgradeReindexesEmptyParts: an entry with an empty part (a text,
// a thinking, a command, an output, a content string, a tool call's
// argument) went into the index before migration 10 with migration 4's
// text, which gave the empty part its separator, where today's text
// leaves it out; migration 26 puts such entries back with today's text,
// so that Check, reading every document, finds the index as the view
// gives it (before it: "its document in the search index has 3 tokens,
// its text gives 2", or a document for an entry with no text).
func TestUpgradeReindexesEmptyParts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.db")
	parts := filepath.Join(dir, "parts.jsonl")
	lines := []string{
		`{"type":"session","version":3,"id":"0190e5c1-0000-7000-8000-0000000000e1","timestamp":"2026-12-01T10:00:00.000Z","cwd":"/p"}`,
		`{"type":"message","id":"m1","parentId":null,"timestamp":"2026-12-01T10:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":""},{"type":"text","text":"after an empty block"}],"timestamp":1}}`,
		`{"type":"message","id":"m2","parentId":"m1","timestamp":"2026-12-01T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":""},{"type":"text","text":"answer"},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"","cwd":"/tmp"}}],"timestamp":2}}`,
		`{"type":"custom_message","id":"m3","parentId":"m2","timestamp":"2026-12-01T10:00:03.000Z","customType":"note","content":["","a note"],"display":true}`,
		`{"type":"message","id":"m4","parentId":"m3","timestamp":"2026-12-01T10:00:04.000Z","message":{"role":"bashExecution","command":"","output":"","exitCode":0,"timestamp":4}}`,
		`{"type":"message","id":"m5","parentId":"m4","timestamp":"2026-12-01T10:00:05.000Z","message":{"role":"user","content":"","timestamp":5}}`,
		`{"type":"message","id":"m6","parentId":"m5","timestamp":"2026-12-01T10:00:06.000Z","message":{"role":"user","content":"say \"\" twice","timestamp":6}}`,
	}
	if err := os.WriteFile(parts, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db := openDB(t, fresh, engine.Options{})
	var ids []string
	for _, f := range []string{"../testdata/piedge/stats-odd.jsonl", parts} {
		ids = append(ids, storetest.ImportLenient(t, engine.NewDatabase(db), f))
	}
	want := storetest.ReadAnswers(t, engine.NewDatabase(db), ids)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	oldPath := filepath.Join(dir, "old.db")
	copyToFirstMigration(t, fresh, oldPath)

	// Every document read: a handful here, under the sample's size, and
	// lookups enough for all their trigrams.
	upgraded := openDB(t, oldPath, engine.Options{CheckLookups: 1 << 20})
	if err := engine.NewDatabase(upgraded).Check(ctx, ""); err != nil {
		t.Errorf("Check() after the upgrade = %v", err)
	}
	if diff := storetest.AnswersDiff(want, storetest.ReadAnswers(t, engine.NewDatabase(upgraded), ids)); diff != "" {
		t.Errorf("answers after the upgrade (-fresh import +upgraded):\n%s", diff)
	}
}
