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

// checkSummary compares st's Summary with what its log gives: the tree's
// counts (sessiontree.ShapeOf, and want when not nil), the list's and the
// last change.
func checkSummary(t *testing.T, st *pgengine.Storage, what string, want *sessiontree.Shape) {
	t.Helper()
	ctx := context.Background()
	sum, err := st.Summary(ctx)
	if err != nil {
		t.Fatalf("%s: Summary: %v", what, err)
	}
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	labels, err := st.Labels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if of := sessiontree.ShapeOf(log, labels); sum.Shape != of || want != nil && sum.Shape != *want {
		t.Errorf("%s: Summary().Shape = %+v; ShapeOf(log) gives %+v, want %+v", what, sum.Shape, of, want)
	}
	if wantList := sessiontree.ListInfoOf(log); sum.List != wantList {
		t.Errorf("%s: Summary().List = %+v; want %+v", what, sum.List, wantList)
	}
	wantUpdated := ""
	if len(log) > 0 {
		meta, err := st.Meta(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wantUpdated = sessiontree.LastChange(meta.CreatedAt, log[len(log)-1].Timestamp)
	}
	if sum.UpdatedAt != wantUpdated {
		t.Errorf("%s: Summary().UpdatedAt = %q; want %q", what, sum.UpdatedAt, wantUpdated)
	}
}

// TestSummaryCounts builds trees by every write path (the pipelined
// append, the general one after a move of the leaf, AppendUnder,
// AppendAll, batches whose parents are stored, in the batch or a leaf
// entry, labels set, changed and cleared, compactions) and compares the
// counts the sessions row keeps with ShapeOf over the log and with the
// counts worked out by hand, as the SQLite engine's test does.
func TestSummaryCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openDB(t)
	none := sessiontree.AppendOptions{}
	must := func(e sessiontree.Entry, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e.ID
	}
	label := func(st *pgengine.Storage, target, text string) {
		t.Helper()
		must(st.Append(ctx, sessiontree.Draft{Type: sessiontree.TypeLabel, Fields: mustFields(t, "targetId", target, "label", text)}, none))
	}
	compaction := func(keep string) sessiontree.Draft {
		return sessiontree.Draft{Type: sessiontree.TypeCompaction, Fields: mustFields(t, "summary", "s", "firstKeptEntryId", keep, "tokensBefore", 1)}
	}
	const ts = "2026-03-01T10:00:00.000Z"
	entry := func(typ sessiontree.EntryType, id, parent string, fields ...any) sessiontree.Entry {
		t.Helper()
		e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: typ, Fields: mustFields(t, fields...)}, id, parent, ts)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	msg := func(id, parent string) sessiontree.Entry {
		return entry(sessiontree.TypeMessage, id, parent, "message", map[string]any{"role": "user", "content": id})
	}
	for _, tc := range []struct {
		name  string
		build func(st *pgengine.Storage)
		want  sessiontree.Shape
	}{
		{"empty", func(*pgengine.Storage) {}, sessiontree.Shape{}},
		{"linear", func(st *pgengine.Storage) {
			for range 5 {
				must(st.Append(ctx, userDraft("m"), none))
			}
		}, sessiontree.Shape{Branches: 1, Roots: 1}},
		{"forks, a new root, labels set and cleared", func(st *pgengine.Storage) {
			a := must(st.Append(ctx, userDraft("a"), none))
			b := must(st.Append(ctx, userDraft("b"), none))
			must(st.SetLeaf(ctx, a, none))
			c := must(st.Append(ctx, userDraft("c"), none)) // a forks: b and c
			must(st.SetLeaf(ctx, a, none))
			must(st.Append(ctx, userDraft("c2"), none)) // a third child
			must(st.SetLeaf(ctx, b, none))
			must(st.Append(ctx, userDraft("b2"), none)) // b's tip moves on
			must(st.SetLeaf(ctx, "", none))
			must(st.Append(ctx, userDraft("d"), none)) // a second root
			label(st, b, "x")
			label(st, c, "y")
			label(st, b, "")
			label(st, c, "z") // a change, not a new label
		}, sessiontree.Shape{Branches: 4, Roots: 2, Labels: 1}},
		{"moves that start no branch", func(st *pgengine.Storage) {
			a := must(st.Append(ctx, userDraft("a"), none))
			must(st.SetLeaf(ctx, a, none)) // to where it is
			must(st.Append(ctx, userDraft("b"), none))
			must(st.SetLeaf(ctx, "", none))
			must(st.SetLeaf(ctx, a, none))
		}, sessiontree.Shape{Branches: 1, Roots: 1}},
		{"compactions", func(st *pgengine.Storage) {
			a := must(st.Append(ctx, userDraft("a"), none))
			must(st.Append(ctx, compaction(a), none))
			b := must(st.Append(ctx, userDraft("b"), none))
			must(st.SetLeaf(ctx, a, none))
			must(st.Append(ctx, compaction(b), none)) // a compaction that forks
		}, sessiontree.Shape{Branches: 2, Roots: 1, Compactions: 2}},
		{"AppendUnder and AppendAll", func(st *pgengine.Storage) {
			a := must(st.Append(ctx, userDraft("a"), none))
			must(st.Append(ctx, userDraft("b"), none))
			must(st.AppendUnder(ctx, a, userDraft("c"), none)) // a forks
			if _, err := st.AppendAll(ctx, []sessiontree.Draft{userDraft("d"), userDraft("e")}, none); err != nil {
				t.Fatal(err)
			}
			must(st.AppendUnder(ctx, a, userDraft("f"), none)) // a third child
		}, sessiontree.Shape{Branches: 3, Roots: 1}},
		{"batches under stored parents, in the batch and a leaf entry", func(st *pgengine.Storage) {
			first := []sessiontree.Entry{msg("a0", ""), msg("a1", "a0"), msg("a2", "a1")}
			if err := st.AppendBatch(ctx, first); err != nil {
				t.Fatal(err)
			}
			second := []sessiontree.Entry{
				msg("b0", "a2"), // under the entry stored last: no fork
				msg("b1", "a0"), // a0 forks (a stored parent, looked up)
				msg("b2", "a0"), // a third child, known in the batch
				msg("b3", "b1"), // b1's tip moves on
				msg("b4", "b1"), // b1 forks (a parent of the batch)
				entry(sessiontree.TypeLeaf, "l1", "b4", "targetId", "a1"),
				msg("x1", "l1"), // under a leaf entry: a root
				msg("x2", "a1"), // a1 forks
				entry(sessiontree.TypeLabel, "lb", "x2", "targetId", "a0", "label", "here"),
			}
			if err := st.AppendBatch(ctx, second); err != nil {
				t.Fatal(err)
			}
			// A pipelined append under the batch's leaf, lb (under x2).
			must(st.Append(ctx, userDraft("after"), none))
		}, sessiontree.Shape{Branches: 6, Roots: 2, Labels: 1}}, // tips b0, b2, b3, b4, x1, after
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newSession(t, db)
			tc.build(st)
			checkSummary(t, st, tc.name, &tc.want)
		})
	}
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
		checkSummary(t, st, fmt.Sprintf("writer %d", i), nil)
	}
}

// noLog is a session whose log, heads and labels cannot be read: info
// must answer from its rows alone.
type noLog struct {
	*pgengine.Storage
	t *testing.T
}

func (s noLog) Log(context.Context, int64, int) ([]sessiontree.Entry, error) {
	s.t.Error("LoadInfo read the log")
	return nil, errors.New("no log")
}

func (s noLog) LogHeads(context.Context) ([]sessiontree.Entry, error) {
	s.t.Error("LoadInfo read the log's heads")
	return nil, errors.New("no log")
}

func (s noLog) Labels(context.Context) (map[string]string, error) {
	s.t.Error("LoadInfo read every label")
	return nil, errors.New("no labels")
}

// TestInfoFromCounters holds the info of every pi fixture imported into
// PostgreSQL, read from its rows without the log (noLog), to the info of
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
		got, err := view.LoadInfo(ctx, noLog{st, t})
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
	db, url := openDB(t)
	st := newSession(t, db)
	if _, err := st.Append(ctx, userDraft("one"), sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := connectKnowing(t, url, 20).Exec(ctx, `UPDATE sessions SET entry_count = entry_count`)
	var pg *pgconn.PgError
	if !errors.As(err, &pg) || pg.Code != "ST003" || !strings.Contains(pg.Message, "upgrade sessiontree") {
		t.Errorf("a write of an engine of schema 20 = %v; want the schema fence's refusal (ST003)", err)
	}
}
