package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
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
