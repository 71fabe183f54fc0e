package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
)

// TestImportFollowRewrites checks ImportOptions.FollowRewrites: a file
// rewritten whole with the same entries (other bytes: a v2 file pi
// migrated, keys in another order) and more after them, or moved to a new
// path, is followed and its new entries imported; a rewrite whose entries
// differ stays a conflict, saying why, and leaves the session as it was.
func TestImportFollowRewrites(t *testing.T) {
	t.Parallel()
	onEngines(t, testImportFollowRewrites)
}

func testImportFollowRewrites(t *testing.T, openStore opener) {
	ctx := context.Background()
	all := lines(t, filepath.Join(piDir, "session-002.jsonl"))
	follow := store.ImportOptions{FollowRewrites: true}
	sessionIDs := func(s *store.Store, id string) []string {
		t.Helper()
		st, err := s.OpenSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		return ids(logOf(t, st))
	}
	wantIDs := readIDs(t, filepath.Join(piDir, "session-002.jsonl"))

	t.Run("rewritten", func(t *testing.T) {
		s := openStore(t)
		path := filepath.Join(t.TempDir(), "s.jsonl")
		writeFile(t, path, strings.Join(all[:10], ""))
		id := mustImport(t, s, []string{path}, store.ImportOptions{}).Files[0].SessionID
		// The same entries written again with other bytes (a space after
		// each line's first key), then the rest.
		var rewritten []string
		for _, l := range all {
			rewritten = append(rewritten, strings.Replace(l, `":`, `": `, 1))
		}
		writeFile(t, path, strings.Join(rewritten, ""))
		if f := mustImport(t, s, []string{path}, store.ImportOptions{}).Files[0]; f.Outcome != store.OutcomeConflict {
			t.Fatalf("Import without FollowRewrites = %v; want a conflict", f.Outcome)
		}
		f := mustImport(t, s, []string{path}, follow).Files[0]
		if f.Outcome != store.OutcomeGrown || !f.Rewritten || f.Entries != len(all)-10 || f.Err != nil {
			t.Fatalf("Import = %v rewritten %v, %d entries, %v; want grown, rewritten, %d entries", f.Outcome, f.Rewritten, f.Entries, f.Err, len(all)-10)
		}
		if diff := sessionIDs(s, id); strings.Join(diff, ",") != strings.Join(wantIDs, ",") {
			t.Errorf("session ids = %v; want %v", diff, wantIDs)
		}
		// Followed once: the next import finds nothing new.
		if f := mustImport(t, s, []string{path}, follow).Files[0]; f.Outcome != store.OutcomeUnchanged || f.Rewritten {
			t.Errorf("Import again = %v rewritten %v; want unchanged", f.Outcome, f.Rewritten)
		}
	})

	t.Run("moved", func(t *testing.T) {
		s := openStore(t)
		dir := t.TempDir()
		old, moved := filepath.Join(dir, "old.jsonl"), filepath.Join(dir, "sub", "moved.jsonl")
		writeFile(t, old, strings.Join(all[:10], ""))
		id := mustImport(t, s, []string{old}, store.ImportOptions{}).Files[0].SessionID
		if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(old, moved); err != nil {
			t.Fatal(err)
		}
		appendFile(t, moved, strings.Join(all[10:], ""))
		f := mustImport(t, s, []string{dir}, follow).Files[0]
		if f.Outcome != store.OutcomeGrown || f.MovedFrom != old || f.Entries != len(all)-10 {
			t.Fatalf("Import = %v moved from %q, %d entries, %v; want grown from %s, %d entries", f.Outcome, f.MovedFrom, f.Entries, f.Err, old, len(all)-10)
		}
		if got := sessionIDs(s, id); strings.Join(got, ",") != strings.Join(wantIDs, ",") {
			t.Errorf("session ids = %v; want %v", got, wantIDs)
		}
		// A copy of a file whose original still exists is not a move.
		copyFile(t, moved, filepath.Join(dir, "copy.jsonl"))
		rep := mustImport(t, s, []string{dir}, follow)
		if rep.Count(store.OutcomeConflict) != 1 || rep.Count(store.OutcomeUnchanged) != 1 {
			t.Errorf("Import of a copy = %+v; want the copy a conflict, the moved file unchanged", rep.Files)
		}
	})

	t.Run("not followed", func(t *testing.T) {
		for _, tc := range []struct{ name, content, why string }{
			{"other ids", strings.Replace(strings.Join(all, ""), wantIDs[3], "zzzzzzzz", -1), "line 5 holds entry zzzzzzzz"},
			{"cut short", strings.Join(all[:6], ""), "the file holds 5 of the session's 9 entries"},
			{"half written", strings.Join(all[:6], "") + all[6][:20], "the file holds 5 of the session's 9 entries"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s := openStore(t)
				path := filepath.Join(t.TempDir(), "s.jsonl")
				writeFile(t, path, strings.Join(all[:10], ""))
				id := mustImport(t, s, []string{path}, store.ImportOptions{}).Files[0].SessionID
				writeFile(t, path, tc.content)
				f := mustImport(t, s, []string{path}, follow).Files[0]
				if f.Outcome != store.OutcomeConflict || !errors.Is(f.Err, sessiontree.ErrConflict) || !strings.Contains(f.Err.Error(), tc.why) {
					t.Errorf("Import = %v, %v; want a conflict saying %q", f.Outcome, f.Err, tc.why)
				}
				if got := sessionIDs(s, id); len(got) != 9 {
					t.Errorf("session has %d entries; want the first import's 9", len(got))
				}
			})
		}
	})
}

// TestImportFollowsClosedTornLine: a torn last line left for later that
// a newline then ends while it still is not JSON (pi does so when it
// opens a file after a crash in the middle of a write, and skips the
// line) is skipped and reported, and the lines after it are imported:
// when following rewrites, and without, since the line is the start of an
// entry cut short, which the default mode skips wherever it is (a fresh
// import of the whole file too).
func TestImportFollowsClosedTornLine(t *testing.T) {
	t.Parallel()
	onEngines(t, testImportFollowsClosedTornLine)
}

func testImportFollowsClosedTornLine(t *testing.T, openStore opener) {
	all := lines(t, filepath.Join(piDir, "session-002.jsonl"))
	for _, follow := range []bool{false, true} {
		t.Run("follow="+strconv.FormatBool(follow), func(t *testing.T) {
			s := openStore(t)
			path := filepath.Join(t.TempDir(), "s.jsonl")
			torn := all[10][:30]
			writeFile(t, path, strings.Join(all[:10], "")+torn)
			opts := store.ImportOptions{FollowRewrites: follow}
			if f := mustImport(t, s, []string{path}, opts).Files[0]; f.Torn == nil || f.Torn.Line != 11 || f.Entries != 9 {
				t.Fatalf("Import = %d entries, torn %v; want 9 entries, line 11 torn", f.Entries, f.Torn)
			}
			// pi ends the torn line, then appends again what it had not
			// written (its leaf is the last whole entry).
			appendFile(t, path, "\n"+strings.Join(all[10:], ""))
			f := mustImport(t, s, []string{path}, opts).Files[0]
			if f.Outcome != store.OutcomeGrown || f.Err != nil || f.Entries != len(all)-10 || len(f.Problems) != 1 || f.Problems[0].Line != 11 || f.Problems[0].Path != path {
				t.Fatalf("Import = %v, %v, %d entries, problems %v; want grown, %d entries, line 11 skipped", f.Outcome, f.Err, f.Entries, f.Problems, len(all)-10)
			}
			checkSessionIDs(t, s, f.SessionID, readIDsMode(t, path, jsonl.Recover))
			if f := mustImport(t, s, []string{path}, opts).Files[0]; f.Outcome != store.OutcomeUnchanged {
				t.Errorf("Import again = %v, %v; want unchanged", f.Outcome, f.Err)
			}
			fresh := mustImport(t, openStore(t), []string{path}, opts).Files[0]
			if fresh.Outcome != store.OutcomeNew || fresh.Entries != len(all)-1 || len(fresh.Problems) != 1 || fresh.Problems[0].Line != 11 ||
				!strings.Contains(fresh.Problems[0].Error(), "torn line") {
				t.Errorf("fresh Import = %v, %v, %d entries, problems %v; want new, %d entries, the torn line 11 skipped", fresh.Outcome, fresh.Err, fresh.Entries, fresh.Problems, len(all)-1)
			}
		})
	}
}

// TestImportVersion1Migrated: a version-1 file that pi migrated (its
// entries get new random ids) stays a conflict, saying how to import it
// again; the session keeps what it holds.
func TestImportVersion1Migrated(t *testing.T) {
	t.Parallel()
	onEngines(t, testImportVersion1Migrated)
}

func testImportVersion1Migrated(t *testing.T, openStore opener) {
	s := openStore(t)
	path := filepath.Join(t.TempDir(), "v1.jsonl")
	copyFile(t, filepath.Join(piDir, "legacy-v1-linear.jsonl"), path)
	n := mustImport(t, s, []string{path}, store.ImportOptions{}).Files[0].Entries
	writeFile(t, path, `{"type":"session","version":3,"id":"v1-linear","timestamp":"2025-06-01T09:00:00.000Z","cwd":"/home/user/old"}`+"\n"+
		`{"type":"message","id":"5eed0001","parentId":null,"timestamp":"2025-06-01T09:00:01.000Z","message":{"role":"user","content":"first question","timestamp":1748768401000}}`+"\n")
	f := mustImport(t, s, []string{path}, store.ImportOptions{FollowRewrites: true}).Files[0]
	if f.Outcome != store.OutcomeConflict || !strings.Contains(f.Err.Error(), "deleting session v1-linear from the store") {
		t.Errorf("Import of the migrated file = %v, %v; want a conflict saying how to import it again", f.Outcome, f.Err)
	}
	st, err := s.OpenSession(context.Background(), "v1-linear")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got := len(logOf(t, st)); got != n {
		t.Errorf("session has %d entries; want the %d imported", got, n)
	}
	// Deleting the session forgets the file: it is imported as it is now.
	if _, err := s.Delete(context.Background(), "v1-linear"); err != nil {
		t.Fatal(err)
	}
	if f := mustImport(t, s, []string{path}, store.ImportOptions{FollowRewrites: true}).Files[0]; f.Outcome != store.OutcomeNew || f.Entries != 1 {
		t.Errorf("Import after deleting the session = %v, %d entries, %v; want new, 1 entry", f.Outcome, f.Entries, f.Err)
	}
}

// TestImportClosedTornLineAsTheReaderSees: whether the line an import
// resumes at was torn and is now closed is the reader's call
// (jsonl.Torn), not a rule of its own. The import judged it with
// bytes.TrimSpace, which trims Unicode space JSON does not allow and
// keeps a byte order mark: an entry followed by a no-break space, torn to
// the reader (and to pi's JSON.parse) when it had no newline, was taken
// for JSON once closed and refused the import; a byte order mark alone,
// a blank line to the reader and pi, was reported as a torn line skipped.
func TestImportClosedTornLineAsTheReaderSees(t *testing.T) {
	t.Parallel()
	onEngines(t, testImportClosedTornLineAsTheReaderSees)
}

func testImportClosedTornLineAsTheReaderSees(t *testing.T, openStore opener) {
	all := lines(t, filepath.Join(piDir, "session-002.jsonl"))
	for _, c := range []struct {
		name     string
		last     string // the file's last line at the first import, without newline
		torn     bool   // the reader's verdict on it
		problems int    // lines skipped and reported when the import resumes
		line     int    // the line skipped
	}{
		{"entry then a no-break space", strings.TrimSuffix(all[10], "\n") + "\u00a0", true, 1, 11},
		{"entry then U+2028", strings.TrimSuffix(all[10], "\n") + "\u2028", true, 1, 11},
		{"byte order mark alone", "\ufeff", false, 0, 0},
		{"CR and spaces", " \r ", false, 0, 0},
		{"blank line, then an entry and a no-break space", "\n" + strings.TrimSuffix(all[10], "\n") + "\u00a0", true, 1, 12},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t)
			path := filepath.Join(t.TempDir(), "s.jsonl")
			writeFile(t, path, strings.Join(all[:10], "")+c.last)
			opts := store.ImportOptions{FollowRewrites: true}
			if f := mustImport(t, s, []string{path}, opts).Files[0]; (f.Torn != nil) != c.torn || f.Entries != 9 {
				t.Fatalf("Import = %d entries, torn %v; want 9 entries, torn %v", f.Entries, f.Torn, c.torn)
			}
			appendFile(t, path, "\n"+strings.Join(all[10:], ""))
			f := mustImport(t, s, []string{path}, opts).Files[0]
			if f.Outcome != store.OutcomeGrown || f.Err != nil || f.Entries != len(all)-10 || len(f.Problems) != c.problems {
				t.Fatalf("Import = %v, %v, %d entries, problems %v; want grown, %d entries, %d problems", f.Outcome, f.Err, f.Entries, f.Problems, len(all)-10, c.problems)
			}
			if c.problems > 0 && f.Problems[0].Line != c.line {
				t.Errorf("Import skipped line %d; want line %d", f.Problems[0].Line, c.line)
			}
			if f := mustImport(t, s, []string{path}, opts).Files[0]; f.Outcome != store.OutcomeUnchanged {
				t.Errorf("Import again = %v, %v; want unchanged", f.Outcome, f.Err)
			}
		})
	}
}
