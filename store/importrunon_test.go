package store_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
)

// TestImportLastLineRunInto imports a file whose last line is a whole
// entry without its newline (Recover mode takes it, as pi does), then
// adds to the file as a writer may: its newline first (pi 1.6 adds it
// when it opens the file), or blanks and a newline, or the next line run
// into it (a writer that did not add the newline). pi reads a run-on
// line as one malformed line and skips it, both entries: the store, which
// holds the first, must say so (a conflict) instead of importing the
// second as if it were a line of its own.
func TestImportLastLineRunInto(t *testing.T) {
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
