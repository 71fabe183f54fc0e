package pgengine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/memory"
	"github.com/sessiontree/sessiontree/pgengine"
)

// build makes an entry of draft d with its id, parent and a fixed time.
func build(t testing.TB, d sessiontree.Draft, id, parent string) sessiontree.Entry {
	t.Helper()
	e, err := sessiontree.BuildEntry(d, id, parent, "2026-01-01T00:00:00.000Z")
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// batchTree is a tree in two batches whose second one leans on the
// first: a chain, a model change, a compaction keeping an entry of the
// first batch, a branch off a stored entry, a label and a leaf entry
// targeting stored entries.
func batchTree(t testing.TB) (first, second []sessiontree.Entry) {
	user := func(s string) sessiontree.Draft { return userDraft(s) }
	model := sessiontree.Draft{Type: sessiontree.TypeModelChange, Fields: mustFields(t, "provider", "p", "modelId", "m")}
	compaction := sessiontree.Draft{Type: sessiontree.TypeCompaction, Fields: mustFields(t,
		"summary", "s", "firstKeptEntryId", "a3", "tokensBefore", 10)}
	label := sessiontree.Draft{Type: sessiontree.TypeLabel, Fields: mustFields(t, "targetId", "a2", "label", "mark")}
	leaf := sessiontree.Draft{Type: sessiontree.TypeLeaf, Fields: mustFields(t, "targetId", "b2")}
	first = []sessiontree.Entry{
		build(t, user("one"), "a1", ""),
		build(t, model, "a2", "a1"),
		build(t, user("three"), "a3", "a2"),
		build(t, user("four"), "a4", "a3"),
	}
	second = []sessiontree.Entry{
		build(t, user("five"), "b1", "a4"),
		build(t, compaction, "b2", "b1"),
		build(t, user("after"), "b3", "b2"),
		build(t, user("branch"), "b4", "a2"), // off a stored entry
		build(t, compaction, "b5", "b4"),     // keeps a3: not its ancestor
		build(t, label, "b6", "b5"),
		build(t, leaf, "b7", "b6"),
		build(t, user("on b2"), "b8", "b2"),
	}
	return first, second
}

// TestAppendBatchAgreesWithMemory stores a tree in two batches and checks
// every entry's path, full path and state, and the leaf, labels and
// stats, against the memory backend (the reference).
func TestAppendBatchAgreesWithMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := openDB(t)
	first, second := batchTree(t)
	pg, ref := appendToBoth(t, db, first, second)
	agreeWithMemory(t, pg, ref, append(first, second...))
	// The label row names the label entry that set it.
	var labelSeq, entrySeq int64
	if err := connect(t, url).QueryRow(ctx, `SELECT l.entry_seq, e.seq FROM labels l
		JOIN entries e ON e.session = l.session AND e.id = 'b6' WHERE l.target_id = 'a2'`).Scan(&labelSeq, &entrySeq); err != nil {
		t.Fatal(err)
	}
	if labelSeq != entrySeq {
		t.Errorf("label of a2: entry_seq %d; want %d (entry b6)", labelSeq, entrySeq)
	}
}

// appendToBoth appends batches, in turn, to a new session of db and to
// the memory backend's (the reference).
func appendToBoth(t *testing.T, db *pgengine.DB, batches ...[]sessiontree.Entry) (pg, ref sessiontree.Storage) {
	t.Helper()
	ctx := context.Background()
	st, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/x"})
	if err != nil {
		t.Fatal(err)
	}
	mem, err := memory.New(sessiontree.SessionMeta{ID: "ref", Cwd: "/x"}, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if err := st.AppendBatch(ctx, b); err != nil {
			t.Fatalf("postgres AppendBatch: %v", err)
		}
		if err := mem.AppendBatch(ctx, b); err != nil {
			t.Fatalf("memory AppendBatch: %v", err)
		}
	}
	return st, mem
}

// agreeWithMemory fails t unless pg reads as ref, the memory backend
// given the same batches, does: each entry of sample's paths and state,
// and the session's leaf, labels, stats and active path.
func agreeWithMemory(t *testing.T, pg, ref sessiontree.Storage, sample []sessiontree.Entry) {
	t.Helper()
	ctx := context.Background()
	check := func(what string, read func(sessiontree.Storage) (any, error)) {
		t.Helper()
		got, err := read(pg)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		want, _ := read(ref)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s differs from memory (-want +got):\n%s", what, d)
		}
	}
	for _, e := range sample {
		check("Path("+e.ID+")", func(s sessiontree.Storage) (any, error) { return ids(s.Path(ctx, e.ID)) })
		check("FullPath("+e.ID+")", func(s sessiontree.Storage) (any, error) { return ids(s.FullPath(ctx, e.ID)) })
		check("State("+e.ID+")", func(s sessiontree.Storage) (any, error) { return sessiontree.StateAt(ctx, s, e.ID) })
	}
	check("Leaf", func(s sessiontree.Storage) (any, error) { return s.Leaf(ctx) })
	check("Labels", func(s sessiontree.Storage) (any, error) { return s.Labels(ctx) })
	check("Stats", func(s sessiontree.Storage) (any, error) { return s.Stats(ctx) })
	check("Active", func(s sessiontree.Storage) (any, error) {
		leaf, _ := s.Leaf(ctx)
		return ids(s.Path(ctx, leaf))
	})
}

// chain is n entries from id prefix1 to prefixN, each under the one
// before and the first under parent, with drafts from draft (a user
// message where it returns a zero Draft) and parents from under (the
// entry before where it returns "").
func chain(t testing.TB, prefix, parent string, n int, draft func(i int) sessiontree.Draft, under func(i int) string) []sessiontree.Entry {
	t.Helper()
	out := make([]sessiontree.Entry, n)
	for i := range out {
		d := draft(i)
		if d.Type == "" {
			d = userDraft(fmt.Sprintf("message %d", i))
		}
		if p := under(i); p != "" {
			parent = p
		}
		out[i] = build(t, d, fmt.Sprintf("%s%d", prefix, i+1), parent)
		parent = out[i].ID
	}
	return out
}

func noDraft(int) sessiontree.Draft { return sessiontree.Draft{} }

func noParent(int) string { return "" }

// smallStatements are the options of a database whose batches send 100
// rows a statement, so that a batch of a few hundred entries takes
// several, as one of thousands does.
var smallStatements = pgengine.WithBatchRows(pgengine.Options{}, 100)

// TestAppendBatchOfManyStatementsAgreesWithMemory: a batch stored in
// several statements while its later entries
// are placed, some of them reading entries stored before it as they are
// (labels of stored entries, a branch off one, a compaction keeping one),
// reads as the memory backend's.
func TestAppendBatchOfManyStatementsAgreesWithMemory(t *testing.T) {
	t.Parallel()
	db, _ := openDBWith(t, smallStatements)
	stored := chain(t, "s", "", 50, noDraft, noParent)
	const n = 500 // five statements
	long := chain(t, "b", "s50", n, func(i int) sessiontree.Draft {
		switch {
		case i == 470:
			return sessiontree.Draft{Type: sessiontree.TypeCompaction, Fields: mustFields(t,
				"summary", "so far", "firstKeptEntryId", "s5", "tokensBefore", 10)}
		case i%97 == 96:
			return sessiontree.Draft{Type: sessiontree.TypeLabel, Fields: mustFields(t,
				"targetId", fmt.Sprintf("s%d", 1+i%50), "label", fmt.Sprintf("mark %d", i))}
		}
		return sessiontree.Draft{}
	}, func(i int) string {
		if i == 440 {
			return "s10" // a branch off a stored entry
		}
		return ""
	})
	pg, ref := appendToBoth(t, db, stored, long)
	var sample []sessiontree.Entry
	for i := 0; i < n; i += 97 {
		sample = append(sample, long[i])
	}
	agreeWithMemory(t, pg, ref, append(sample, long[439], long[440], long[470], long[n-1]))
}

// TestAppendBatchStatementRefused: when the server refuses a row of a
// batch stored in several statements (here a trigger of the test's,
// standing for any refusal the checks before cannot see), the batch
// fails with the server's error, whether the entries after it were still
// being placed or not, and nothing of it is kept; the session takes the
// next batch.
func TestAppendBatchStatementRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := openDBWith(t, smallStatements)
	if _, err := connect(t, url).Exec(ctx, `CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.id LIKE 'boom%' THEN RAISE EXCEPTION 'refused %', NEW.id; END IF; RETURN NEW; END $$;
		CREATE TRIGGER refuse_boom BEFORE INSERT ON entries FOR EACH ROW EXECUTE FUNCTION refuse_boom()`); err != nil {
		t.Fatal(err)
	}
	stored := chain(t, "s", "", 3, noDraft, noParent)
	for _, at := range []int{20, 450} {
		t.Run(fmt.Sprint(at), func(t *testing.T) {
			st, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/x"})
			if err != nil {
				t.Fatal(err)
			}
			if err := st.AppendBatch(ctx, stored); err != nil {
				t.Fatal(err)
			}
			batch := chain(t, "n", "s3", 500, noDraft, noParent) // five statements
			boom := fmt.Sprintf("boom%d", at)
			batch[at] = build(t, userDraft("boom"), boom, batch[at].ParentID)
			batch[at+1] = build(t, userDraft("after"), batch[at+1].ID, boom)
			var pe *pgconn.PgError
			err = st.AppendBatch(ctx, batch)
			if !errors.As(err, &pe) || pe.Message != "refused "+boom {
				t.Fatalf("AppendBatch = %v; want the server's refusal of %s", err, boom)
			}
			if stats, err := st.Stats(ctx); err != nil || stats.Entries != int64(len(stored)) {
				t.Errorf("Stats().Entries = %d, %v; want %d (nothing of the refused batch)", stats.Entries, err, len(stored))
			}
			if err := st.AppendBatch(ctx, batch[:at]); err != nil {
				t.Fatalf("AppendBatch of the entries before %s: %v", boom, err)
			}
			if leaf, err := st.Leaf(ctx); err != nil || leaf != batch[at-1].ID {
				t.Errorf("Leaf = %q, %v; want %s", leaf, err, batch[at-1].ID)
			}
		})
	}
}

func ids(path []sessiontree.Entry, err error) ([]string, error) {
	var out []string
	for _, e := range path {
		out = append(out, e.ID)
	}
	return out, err
}

// TestAppendBatchRefuses checks that a bad batch is refused with the
// sentinel naming the entry, and leaves nothing behind.
func TestAppendBatchRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openDBWith(t, smallStatements)
	first, _ := batchTree(t)
	user := userDraft("x")
	tests := []struct {
		name  string
		batch []sessiontree.Entry
		want  error
		entry string // in the message
	}{
		{"id stored before", []sessiontree.Entry{build(t, user, "n1", "a4"), build(t, user, "a2", "n1")}, sessiontree.ErrConflict, "a2"},
		{"id twice in batch", []sessiontree.Entry{build(t, user, "n1", "a4"), build(t, user, "n1", "a4")}, sessiontree.ErrCorrupt, "n1"},
		{"missing parent", []sessiontree.Entry{build(t, user, "n1", "zz")}, sessiontree.ErrNotFound, "n1"},
		{"parent later in batch", []sessiontree.Entry{build(t, user, "n1", "n2"), build(t, user, "n2", "a4")}, sessiontree.ErrNotFound, "n1"},
		// Refused after the entries before it were sent to the server, a
		// statement at a time.
		{"missing parent after a statement", chain(t, "n", "a4", 450, noDraft, func(i int) string {
			if i == 440 {
				return "zz"
			}
			return ""
		}), sessiontree.ErrNotFound, "n441"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := db.CreateSession(ctx, sessiontree.SessionMeta{ID: fmt.Sprintf("refuse-%d", i), Cwd: "/x"})
			if err != nil {
				t.Fatal(err)
			}
			if err := st.AppendBatch(ctx, first); err != nil {
				t.Fatal(err)
			}
			err = st.AppendBatch(ctx, tt.batch)
			if !errors.Is(err, tt.want) || !containsText(err, tt.entry) {
				t.Fatalf("AppendBatch = %v; want %v naming %s", err, tt.want, tt.entry)
			}
			stats, err := st.Stats(ctx)
			if err != nil || stats.Entries != int64(len(first)) {
				t.Errorf("Stats().Entries = %d, %v; want %d (nothing of the refused batch)", stats.Entries, err, len(first))
			}
			if leaf, _ := st.Leaf(ctx); leaf != "a4" {
				t.Errorf("Leaf = %q; want a4", leaf)
			}
		})
	}
}

func containsText(err error, s string) bool {
	return err != nil && strings.Contains(err.Error(), s)
}

// BenchmarkAppendBatch: importing a 5,000-entry linear session.
func BenchmarkAppendBatch(b *testing.B) {
	const n = 5000
	entries := make([]sessiontree.Entry, n)
	parent := ""
	var bytes int64
	for i := range entries {
		id := fmt.Sprintf("%08x", i+1)
		entries[i] = build(b, userDraft(fmt.Sprintf("message %d of an ordinary length for a coding session, with some words in it", i)), id, parent)
		parent = id
		bytes += int64(len(entries[i].Raw))
	}
	for _, name := range []string{"postgres", "sqlite"} {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			create := engines(b)[name]
			b.SetBytes(bytes)
			for b.Loop() {
				st, err := create(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if err := st.(sessiontree.BatchAppender).AppendBatch(ctx, entries); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
