package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
)

// nulLines are a session file's lines, the header and n user messages
// a1..an each under the one before, entry bad's id holding a NUL
// (written \u0000 in its JSON, which a SQLite database stores and a
// PostgreSQL one cannot).
func nulLines(n, bad int) []string {
	ls := []string{`{"type":"session","version":3,"id":"0198f2a4-4e11-7000-8000-000000000001","timestamp":"2026-12-02T17:10:47.708Z","cwd":"/x"}` + "\n"}
	parent := "null"
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("a%d", i)
		if i == bad {
			id = `a\u0000` + id[1:]
		}
		ls = append(ls, fmt.Sprintf(`{"type":"message","id":"%s","parentId":%s,"timestamp":"2026-12-02T17:10:47.710Z","message":{"role":"user","content":"hi","timestamp":1}}`+"\n", id, parent))
		parent = `"` + id + `"`
	}
	return ls
}

// TestImportEntryTheDatabaseCannotStore: a file holding an entry the
// PostgreSQL engine cannot store (a NUL in its id) fails its import with
// the engine's invalid entry error at the file's line, and nothing of the
// file is written: read in one pass, in chunks, or resumed after an
// earlier import. The check ran only when each batch was written: a file
// imported in chunks kept the chunks before the entry's, and the batch's
// look-up of ids it may hold already failed first, a driver error
// ("invalid byte sequence for encoding UTF8: 0x00") naming no entry and
// no line. A SQLite database stores the file whole.
func TestImportEntryTheDatabaseCannotStore(t *testing.T) {
	t.Parallel()
	onEngines(t, testImportEntryTheDatabaseCannotStore)
}

func testImportEntryTheDatabaseCannotStore(t *testing.T, openStore opener) {
	ctx := context.Background()
	const id = "0198f2a4-4e11-7000-8000-000000000001"
	ls := nulLines(6, 5)
	for _, c := range []struct {
		name  string
		first int // lines imported before, 0 for none
		chunk int // entries a commit takes, 0 for the default
	}{
		{"one pass", 0, 0},
		{"chunks", 0, 2},
		{"resumed", 3, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t)
			path := filepath.Join(t.TempDir(), "s.jsonl")
			opts := store.ImportOptions{}
			if c.chunk > 0 {
				opts = store.WithImportChunk(opts, c.chunk)
			}
			if c.first > 0 {
				writeFile(t, path, strings.Join(ls[:c.first], ""))
				mustImport(t, s, []string{path}, opts)
			}
			writeFile(t, path, strings.Join(ls, ""))
			f := mustImport(t, s, []string{path}, opts).Files[0]
			in, err := s.Info(ctx, id)
			if s.DB() != nil { // SQLite
				if f.Err != nil || err != nil || in.Entries != 6 {
					t.Errorf("Import = %v, session of %d entries (%v); want all 6 stored", f.Err, in.Entries, err)
				}
				return
			}
			var le *jsonl.LineError
			var inv *sessiontree.InvalidEntryError
			if f.Outcome != store.OutcomeFailed || !errors.As(f.Err, &le) || le.Path != path || le.Line != 6 ||
				!errors.As(f.Err, &inv) || inv.EntryID != "a\x005" || errors.Is(f.Err, sessiontree.ErrStorage) {
				t.Fatalf("Import = %v, %v; want failed, invalid entry a\\x005 at %s:6, no storage failure", f.Outcome, f.Err, path)
			}
			want := int64(max(c.first-1, 0))
			if got := in.Entries; err != nil && !errors.Is(err, sessiontree.ErrNotFound) || got != want {
				t.Errorf("after the failed import the session holds %d entries (%v); want %d, none of this import", got, err, want)
			}
		})
	}
}

// TestPushEntryTheDatabaseCannotStore: pushing to a PostgreSQL store a
// session that grew an entry it cannot store fails that session with
// the engine's invalid entry error naming it, and the target keeps what
// it had. The batch looked up its ids in the target's session first, and
// the server refused the NUL there: a storage failure naming no entry,
// which a push reports like the server being away.
func TestPushEntryTheDatabaseCannotStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const id = "0198f2a4-4e11-7000-8000-000000000001"
	from, to := openStore(t), openPostgresStore(t)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	ls := nulLines(3, 3)
	writeFile(t, path, strings.Join(ls[:3], ""))
	mustImport(t, from, []string{path}, store.ImportOptions{})
	mustPush(t, from, to, store.PushOptions{})
	writeFile(t, path, strings.Join(ls, ""))
	mustImport(t, from, []string{path}, store.ImportOptions{})
	rep, err := store.Push(ctx, from, to, store.PushOptions{})
	var inv *sessiontree.InvalidEntryError
	if err != nil || len(rep.Results) != 1 || rep.Results[0].Status != store.PushFailed ||
		!errors.As(rep.Results[0].Err, &inv) || inv.EntryID != "a\x003" || errors.Is(rep.Results[0].Err, sessiontree.ErrStorage) {
		t.Fatalf("Push = %+v, %v; want the session failed, invalid entry a\\x003, no storage failure", rep.Results, err)
	}
	if in, err := to.Info(ctx, id); err != nil || in.Entries != 2 {
		t.Errorf("target session holds %d entries (%v); want the 2 pushed before", in.Entries, err)
	}
}
