package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree/store"
)

// mustIndexRest indexes what an import left pending and checks that it
// and what the import indexed along make every entry it imported, each
// once.
func mustIndexRest(t *testing.T, s *store.Store, rep store.ImportReport) int64 {
	t.Helper()
	rest, _ := mustIndex(t, s)
	if rep.Indexed+rest != int64(rep.Entries) {
		t.Errorf("indexed %d along the import and %d after it; want the %d entries imported", rep.Indexed, rest, rep.Entries)
	}
	return rest
}

// TestImportIndexAlong: with IndexAlong, what an import commits is indexed
// while it goes on. The import here waits after its first group until
// the indexing along it has indexed the group, so every entry of the
// group is indexed by the import and none is left to Index; the search
// finds them (and the stores' cleanups check the index against the
// entries' text).
func TestImportIndexAlong(t *testing.T) { onEngines(t, testImportIndexAlong) }

func testImportIndexAlong(t *testing.T, openStore opener) {
	s := openStore(t)
	dir, files := groupFolder(t, 12)
	passes := make(chan int64, 100)
	opts := store.WithAfterIndexAlong(store.ImportOptions{IndexAlong: true}, func(n int64) { passes <- n })
	opts = store.WithAfterGroup(opts, func(int) {
		for {
			select {
			case n := <-passes:
				if n > 0 {
					return
				}
			case <-time.After(10 * time.Second):
				t.Error("the group was not indexed along the import in 10 s")
				return
			}
		}
	})
	rep := mustImport(t, s, []string{dir}, opts)
	if rep.Entries != countEntries(t, files) || rep.Indexed != int64(rep.Entries) {
		t.Errorf("import of %d entries indexed %d along; want all of them", rep.Entries, rep.Indexed)
	}
	mustIndexRest(t, s, rep)
	if hits := search(t, s, "the", store.SearchOptions{}); len(hits) == 0 {
		t.Error("no hit after the import indexed along")
	}
}

// TestImportIndexAlongTakesTurns: an import and the indexing along it
// write by turns, so the import never meets its own indexing's locks as
// another process's. Here one file goes in chunks of two entries, and
// the first chunk the indexing writes holds its transaction longer than
// an import waits for another process before it gives up (NoWait): on
// PostgreSQL, which locks the session row each writes, the import's
// next chunk would meet that lock. It neither waits nor stops, and every
// entry is indexed once, along or after.
func TestImportIndexAlongTakesTurns(t *testing.T) { onEngines(t, testImportIndexAlongTakesTurns) }

func testImportIndexAlongTakesTurns(t *testing.T, openStore opener) {
	s := openStore(t)
	path := filepath.Join(t.TempDir(), "long.jsonl")
	writePiFile(t, newPiGen(3), path, "/home/dev/turns", 40, 0.2)
	var once sync.Once
	store.SetIndexInWrite(s, func() { once.Do(func() { time.Sleep(400 * time.Millisecond) }) })
	opts := store.ImportOptions{IndexAlong: true, NoWait: true, Waiting: func() { t.Error("the import waited for a lock") }}
	rep := mustImport(t, s, []string{path}, store.WithImportChunk(opts, 2))
	if rep.Entries != countEntries(t, []string{path}) {
		t.Errorf("imported %d entries; want %d", rep.Entries, countEntries(t, []string{path}))
	}
	mustIndexRest(t, s, rep)
}

// TestImportIndexAlongCanceled: a canceled import stops the indexing
// along it too, before it returns; what either committed stays, and
// Index indexes the rest, each entry once.
func TestImportIndexAlongCanceled(t *testing.T) { onEngines(t, testImportIndexAlongCanceled) }

func testImportIndexAlongCanceled(t *testing.T, openStore opener) {
	s := openStore(t)
	dir, _ := groupFolder(t, 600)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := store.WithAfterGroup(store.ImportOptions{IndexAlong: true}, func(int) { cancel() })
	rep, err := s.Import(ctx, []string{dir}, opts)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Import() = %v; want context.Canceled", err)
	}
	if rep.Entries == 0 {
		t.Fatal("the canceled import committed nothing; want its first group")
	}
	mustIndexRest(t, s, rep)
}
