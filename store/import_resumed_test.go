package store_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
)

// TestImportTornLineResumedByPi follows a file through pi's crash and
// resume: an import leaves the torn last line for later; pi's next open
// ends it with a newline and the resumed session appends after it. The
// next import, in the default mode, goes on past the torn line (pi skips
// it: it was never an entry), names it in the result's Problems and
// imports the entries after it; a fresh import of the whole file does the
// same, and a third import finds nothing new.
func TestImportTornLineResumedByPi(t *testing.T) { onEngines(t, testImportTornLineResumedByPi) }

func testImportTornLineResumedByPi(t *testing.T, openStore opener) {
	s := openStore(t)
	all := lines(t, filepath.Join(piDir, "session-002.jsonl"))
	if len(all) < 4 {
		t.Fatal("the fixture is too short")
	}
	n := len(all) - 1
	torn := strings.TrimSuffix(all[n], "\n")
	torn = torn[:len(torn)/2]
	path := filepath.Join(t.TempDir(), "resumed.jsonl")
	writeFile(t, path, strings.Join(all[:n], "")+torn)
	first := mustImport(t, s, []string{path}, store.ImportOptions{}).Files[0]
	if first.Outcome != store.OutcomeNew || first.Torn == nil {
		t.Fatalf("first import: %+v; want new with a torn line left for later", first)
	}
	// pi ends the torn line when it opens the file, then appends the
	// entry again, under the last whole one, as a resumed session does.
	appendFile(t, path, "\n"+all[n])

	checkTornSkipped := func(res store.FileResult, outcome store.Outcome, entries int) {
		t.Helper()
		if res.Outcome != outcome || res.Entries != entries || res.Err != nil || res.Torn != nil {
			t.Fatalf("import: %+v; want %v with %d entries", res, outcome, entries)
		}
		if len(res.Problems) != 1 || res.Problems[0].Line != n+1 || res.Problems[0].Path != path ||
			!strings.Contains(res.Problems[0].Error(), "torn line") {
			t.Errorf("import problems %v; want the torn line, %s:%d", res.Problems, path, n+1)
		}
		checkSessionIDs(t, s, first.SessionID, readIDsMode(t, path, jsonl.Recover))
	}
	checkTornSkipped(mustImport(t, s, []string{path}, store.ImportOptions{}).Files[0], store.OutcomeGrown, 1)
	if again := mustImport(t, s, []string{path}, store.ImportOptions{}).Files[0]; again.Outcome != store.OutcomeUnchanged {
		t.Errorf("third import: %+v; want unchanged", again)
	}

	s = openStore(t)
	checkTornSkipped(mustImport(t, s, []string{path}, store.ImportOptions{}).Files[0], store.OutcomeNew, n-1+1)
}
