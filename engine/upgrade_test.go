package engine_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/internal/testdb"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/migrate"
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

// sessionAnswers are what the reads answer of one session.
type sessionAnswers struct {
	Meta    sessiontree.SessionMeta
	Name    string
	Leaf    string
	Labels  map[string]string
	Stats   sessiontree.Stats
	Summary sessiontree.Summary
	Outline []sessiontree.OutlineEntry
	Path    []sessiontree.Entry
	State   sessiontree.State
	Log     []sessiontree.Entry
}

// allAnswers reads every session of ids from db, and the usage reports.
func allAnswers(t *testing.T, db *engine.DB, ids []string) (map[string]sessionAnswers, []sessiontree.UsageReport) {
	t.Helper()
	ctx := context.Background()
	out := map[string]sessionAnswers{}
	for _, id := range ids {
		st, err := db.OpenSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var a sessionAnswers
		var errs [10]error
		a.Meta, errs[0] = st.Meta(ctx)
		a.Name, errs[1] = st.Name(ctx)
		a.Leaf, errs[2] = st.Leaf(ctx)
		a.Labels, errs[3] = st.Labels(ctx)
		a.Stats, errs[4] = st.Stats(ctx)
		a.Summary, errs[5] = st.Summary(ctx)
		a.Outline, errs[6] = st.Outline(ctx)
		if a.Leaf != "" {
			a.Path, errs[7] = st.Path(ctx, a.Leaf)
			a.State, errs[8] = st.State(ctx, a.Leaf)
		}
		a.Log, errs[9] = st.Log(ctx, 0, 0)
		for _, err := range errs {
			if err != nil {
				t.Fatalf("%s: %v", id, err)
			}
		}
		out[id] = a
	}
	var reports []sessiontree.UsageReport
	for _, by := range []sessiontree.UsageBy{sessiontree.UsageByModel, sessiontree.UsageByDay} {
		r, err := db.Usage(ctx, sessiontree.UsageQuery{By: by})
		if err != nil {
			t.Fatal(err)
		}
		reports = append(reports, r)
	}
	return out, reports
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
		if id := importLenient(t, fresh, f); id != "" {
			ids = append(ids, id)
		}
	}
	want, wantUsage := allAnswers(t, fresh, ids)

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
	got, gotUsage := allAnswers(t, upgraded, ids)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers after the upgrade (-fresh import +upgraded):\n%s", diff)
	}
	if diff := cmp.Diff(wantUsage, gotUsage); diff != "" {
		t.Errorf("usage after the upgrade (-fresh import +upgraded):\n%s", diff)
	}
}

// importLenient imports the pi session file at path as pi reads it, its
// bad lines skipped, into db with one batch and returns the session id,
// "" for a file without a header or whose batch the engine refuses.
func importLenient(t *testing.T, db *engine.DB, path string) string {
	t.Helper()
	var meta *sessiontree.SessionMeta
	var entries []sessiontree.Entry
	for rec, err := range jsonl.ReadFile(context.Background(), path, jsonl.ReadOptions{Mode: jsonl.Lenient}) {
		switch {
		case err != nil:
		case rec.Kind == jsonl.KindHeader:
			meta = &rec.Header.SessionMeta
		case rec.Kind == jsonl.KindEntry:
			entries = append(entries, rec.Entry)
		}
	}
	if meta == nil {
		return ""
	}
	ctx := context.Background()
	st, err := db.CreateSession(ctx, *meta)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := st.AppendBatch(ctx, entries); err != nil {
		return "" // a log pi reads and the engine refuses (testdata/piedge)
	}
	return st.ID()
}
