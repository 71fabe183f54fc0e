package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
)

// TestImportHashesBytesParsed rewrites a file in place, its size kept,
// once an import has parsed the lines it commits and before it commits
// them: the record's hash must be that of the bytes parsed, so that the
// next import finds the imported part changed (a conflict) instead of
// taking the rewritten bytes for the ones imported, which would leave
// them never imported and the change never reported. Each way of
// committing a file is tried: a group of small files, one pass alone,
// chunks; the file ends in bytes the import does not take (a torn line,
// a blank line), so that the read reaches past what it commits.
func TestImportHashesBytesParsed(t *testing.T) {
	t.Parallel()
	all := lines(t, filepath.Join(piDir, "session-002.jsonl"))
	const was, now = `"content":"sqlite sqlite`, `"content":"SQLITE sqlite`
	if !strings.Contains(all[1], was) {
		t.Fatalf("the fixture's first entry has no %s", was)
	}
	body := strings.Join(all, "")
	for _, tc := range []struct {
		name string
		tail string
		opts store.ImportOptions
	}{
		{"group", "\n", store.ImportOptions{}},
		{"one pass", `{"type":"mess`, store.WithoutGroups(store.ImportOptions{})},
		{"chunks", `{"type":"mess`, store.WithImportChunk(store.ImportOptions{}, 4)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			path := filepath.Join(t.TempDir(), "rewritten.jsonl")
			writeFile(t, path, body+tc.tail)
			rewritten := false
			opts := store.WithAfterParse(tc.opts, func() {
				if !rewritten {
					rewritten = true
					rewriteAt(t, path, strings.Index(body, was), now)
				}
			})
			first := mustImport(t, s, []string{path}, opts).Files[0]
			if first.Outcome != store.OutcomeNew || !rewritten {
				t.Fatalf("first import: %+v (rewritten %v); want new, the file rewritten during it", first, rewritten)
			}
			second := mustImport(t, s, []string{path}, tc.opts).Files[0]
			if second.Outcome != store.OutcomeConflict || !errors.Is(second.Err, sessiontree.ErrConflict) {
				t.Errorf("second import: %+v; want a conflict: the imported bytes changed", second)
			}
		})
	}
}

// rewriteAt writes s over the file's bytes at offset off, in place.
func rewriteAt(t testing.TB, path string, off int, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(s), int64(off)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestImportLastLineRunInto imports a file whose last line is a whole
// entry without its newline (Recover mode takes it, as pi does), then
// adds to the file as a writer may: its newline first (pi 1.6 adds it
// when it opens the file), or blanks and a newline, or the next line run
// into it (a writer that did not add the newline). pi reads a run-on
// line as one malformed line and skips it, both entries: the store, which
// holds the first, must say so (a conflict) instead of importing the
// second as if it were a line of its own.
func TestImportLastLineRunInto(t *testing.T) {
	t.Parallel()
	all := lines(t, filepath.Join(piDir, "session-002.jsonl"))
	n := len(all)
	unterminated := strings.Join(all[:n-1], "") + strings.TrimSuffix(all[n-1], "\n")
	next := `{"type":"label","id":"feedbeef","parentId":null,"timestamp":"2026-12-02T17:10:48.000Z","targetId":"1daa594c","label":"x"}` + "\n"
	for _, tc := range []struct {
		name     string
		added    string
		conflict bool
	}{
		{"newline", "\n" + next, false},
		{"blanks and newline", " \t\r\n" + next, false},
		{"run into", next, true},
		{"run into after blanks", "  " + next, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			path := filepath.Join(t.TempDir(), "s.jsonl")
			writeFile(t, path, unterminated)
			first := mustImport(t, s, []string{path}, store.ImportOptions{}).Files[0]
			if first.Outcome != store.OutcomeNew || first.Entries != n-1 {
				t.Fatalf("first import: %+v; want new with %d entries", first, n-1)
			}
			appendFile(t, path, tc.added)
			piIDs := readIDsMode(t, path, jsonl.Lenient) // pi's reading
			second := mustImport(t, s, []string{path}, store.ImportOptions{}).Files[0]
			if !tc.conflict {
				if second.Outcome != store.OutcomeGrown || second.Entries != 1 || len(piIDs) != n {
					t.Errorf("second import: %+v, pi reads %d entries; want grown by 1, pi %d", second, len(piIDs), n)
				}
				return
			}
			if second.Outcome != store.OutcomeConflict || !errors.Is(second.Err, sessiontree.ErrConflict) || second.Entries != 0 {
				t.Errorf("second import: %+v; want a conflict, nothing imported", second)
			}
			if len(piIDs) != n-2 {
				t.Errorf("pi reads %d entries; want %d: the run-on line skipped", len(piIDs), n-2)
			}
			checkSessionIDs(t, s, first.SessionID, readIDs(t, filepath.Join(piDir, "session-002.jsonl")))
		})
	}
}
