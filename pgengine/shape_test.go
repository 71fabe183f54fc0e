package pgengine_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/memory"
	"github.com/sessiontree/sessiontree/pgengine"
	"github.com/sessiontree/sessiontree/storetest"
	"github.com/sessiontree/sessiontree/view"
)

// TestSummaryCounts runs the shared cases of the tree's counts
// (storetest.RunSummaryCounts) on PostgreSQL.
func TestSummaryCounts(t *testing.T) {
	t.Parallel()
	db, _ := openDB(t)
	storetest.RunSummaryCounts(t, func(t *testing.T) sessiontree.Storage { return newSession(t, db) })
}

// TestSummaryCountsGroupAndMoves appends to many sessions at once (the
// group commit and its appends from kept rows), each session moving its
// leaf back now and then (the first append after a move is not under the
// entry stored last: its parent's children are looked up on the general
// path), and compares each session's counts with ShapeOf over its log.
func TestSummaryCountsGroupAndMoves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openDB(t)
	const writers, appends = 6, 30
	sts := make([]*pgengine.Storage, writers)
	for i := range sts {
		sts[i] = newSession(t, db)
	}
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i, st := range sts {
		wg.Go(func() {
			var ids []string
			for j := range appends {
				if j%7 == 6 {
					if _, err := st.SetLeaf(ctx, ids[(i+j)%len(ids)], sessiontree.AppendOptions{}); err != nil {
						errs[i] = err
						return
					}
				}
				e, err := st.Append(ctx, userDraft(fmt.Sprint(j)), sessiontree.AppendOptions{})
				if err != nil {
					errs[i] = err
					return
				}
				ids = append(ids, e.ID)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for i, st := range sts {
		storetest.CheckSummary(t, st, fmt.Sprintf("writer %d", i), nil)
	}
}

// TestInfoFromCounters holds the info of every pi fixture imported into
// PostgreSQL, read from its rows without the log (storetest.NoLog), to the info of
// the same log in memory, counted over its log: the counts an import of
// bushy pi files keeps are ShapeOf's, as the SQLite engine's are
// (cmd/sessiontree's TestJSONOutputOnPostgres compares the two engines'
// info).
func TestInfoFromCounters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openDB(t)
	var paths []string
	for _, dir := range []string{"pi", "pi1"} {
		p, err := filepath.Glob(filepath.Join("..", "testdata", dir, "*.jsonl"))
		if err != nil || len(p) == 0 {
			t.Fatalf("no fixtures in %s: %v", dir, err)
		}
		if testing.Short() {
			p = storetest.FixturePathKinds(p)
		}
		paths = append(paths, p...)
	}
	for _, path := range paths {
		meta, entries := storetest.ReadSessionFile(t, path)
		mem, err := memory.NewUnchecked(meta, entries)
		if err != nil {
			t.Fatal(err)
		}
		want, err := view.LoadInfo(ctx, mem)
		if err != nil {
			t.Fatal(err)
		}
		st, err := db.CreateSession(ctx, meta)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.AppendBatch(ctx, entries); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		got, err := view.LoadInfo(ctx, storetest.NoLog{SummaryStorage: st, T: t})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: LoadInfo(postgres) differs from LoadInfo(memory) (-memory +postgres):\n%s", filepath.Base(path), diff)
		}
	}
}

// TestMigrationFillsTreeCounts imports every pi fixture, takes the
// database back to before migration 21 (its columns, trigger and fence
// gone) and opens it again: the migration's fill gives every session the
// counts the writes kept (ShapeOf's, which the cleanup's Check compares),
// and every read answers as before.
func TestMigrationFillsTreeCounts(t *testing.T) {
	if testing.Short() {
		t.Skip("imports every pi fixture")
	}
	t.Parallel()
	db, url := openDB(t)
	var ids []string
	for _, f := range storetest.FixtureFiles(t, "../testdata") {
		if id := storetest.ImportLenient(t, db, f); id != "" {
			ids = append(ids, id)
		}
	}
	want := storetest.ReadAnswers(t, db, ids)
	var bushy int
	for _, a := range want.Sessions {
		if a.Summary.Branches > 1 || a.Summary.Roots > 1 {
			bushy++
		}
	}
	if bushy < 5 {
		t.Fatalf("%d fixtures with branches or roots beyond one; want some", bushy)
	}
	execAll(t, url, `DROP TRIGGER labels_count ON labels`, `DROP FUNCTION labels_count()`,
		`ALTER TABLE sessions DROP COLUMN branch_count, DROP COLUMN root_count, DROP COLUMN compaction_count, DROP COLUMN label_count`,
		`DROP TRIGGER sessions_schema_fence ON sessions`,
		`CREATE TRIGGER sessions_schema_fence BEFORE INSERT OR UPDATE OR DELETE ON sessions
			FOR EACH STATEMENT EXECUTE FUNCTION schema_fence('20')`,
		`DELETE FROM schema_migrations WHERE version = 21`)
	migrated := openURL(t, url) // Check clean at its cleanup
	if diff := storetest.AnswersDiff(want, storetest.ReadAnswers(t, migrated, ids)); diff != "" {
		t.Errorf("answers after migration 21 filled the counts (-written +filled):\n%s", diff)
	}
}

// TestSchemaFenceRefusesSchema20 writes as an engine of migration 20
// does, which appends without counting the tree: the write is refused
// (ST003, saying to upgrade), so no session's counts go wrong.
func TestSchemaFenceRefusesSchema20(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, url := openDB(t)
	// A statement-level trigger: refused whatever rows it changes.
	_, err := connectKnowing(t, url, 20).Exec(ctx, `UPDATE sessions SET entry_count = entry_count`)
	var pg *pgconn.PgError
	if !errors.As(err, &pg) || pg.Code != "ST003" || !strings.Contains(pg.Message, "upgrade sessiontree") {
		t.Errorf("a write of an engine of schema 20 = %v; want the schema fence's refusal (ST003)", err)
	}
}
