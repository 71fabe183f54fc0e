package pgengine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/memory"
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
	pg, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/x"})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := memory.New(sessiontree.SessionMeta{ID: "ref", Cwd: "/x"}, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first, second := batchTree(t)
	for _, b := range [][]sessiontree.Entry{first, second} {
		if err := pg.AppendBatch(ctx, b); err != nil {
			t.Fatalf("postgres AppendBatch: %v", err)
		}
		if err := ref.AppendBatch(ctx, b); err != nil {
			t.Fatalf("memory AppendBatch: %v", err)
		}
	}
	for _, e := range append(first, second...) {
		for name, read := range map[string]func(sessiontree.Storage) (any, error){
			"Path":     func(s sessiontree.Storage) (any, error) { return ids(s.Path(ctx, e.ID)) },
			"FullPath": func(s sessiontree.Storage) (any, error) { return ids(s.FullPath(ctx, e.ID)) },
			"State":    func(s sessiontree.Storage) (any, error) { return sessiontree.StateAt(ctx, s, e.ID) },
		} {
			got, err := read(pg)
			if err != nil {
				t.Fatalf("%s(%s): %v", name, e.ID, err)
			}
			want, _ := read(ref)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s(%s) differs from memory (-want +got):\n%s", name, e.ID, d)
			}
		}
	}
	// The label row names the label entry that set it.
	var labelSeq, entrySeq int64
	if err := connect(t, url).QueryRow(ctx, `SELECT l.entry_seq, e.seq FROM labels l
		JOIN entries e ON e.session = l.session AND e.id = 'b6' WHERE l.target_id = 'a2'`).Scan(&labelSeq, &entrySeq); err != nil {
		t.Fatal(err)
	}
	if labelSeq != entrySeq {
		t.Errorf("label of a2: entry_seq %d; want %d (entry b6)", labelSeq, entrySeq)
	}
	for name, read := range map[string]func(sessiontree.Storage) (any, error){
		"Leaf":   func(s sessiontree.Storage) (any, error) { return s.Leaf(ctx) },
		"Labels": func(s sessiontree.Storage) (any, error) { return s.Labels(ctx) },
		"Stats":  func(s sessiontree.Storage) (any, error) { return s.Stats(ctx) },
		"Active": func(s sessiontree.Storage) (any, error) {
			leaf, _ := s.Leaf(ctx)
			return ids(s.Path(ctx, leaf))
		},
	} {
		got, err := read(pg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, _ := read(ref)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s differs from memory (-want +got):\n%s", name, d)
		}
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
	db, _ := openDB(t)
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
