package store_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
)

// Two imports of one file of several chunks, as two processes importing
// one folder at once: the second runs to its end between the first's
// chunks. The first then finds the file's record moved inside its next
// transaction, starts over from there and finds nothing left: neither
// reports a conflict, together they imported the file once, and each
// reports what it committed and what it read (the first, which read the
// whole file, every entry of an unknown type and every tolerated line).
func TestImportOvertakenBetweenChunks(t *testing.T) {
	t.Parallel()
	chunked := func(o store.ImportOptions) store.ImportOptions { return store.WithImportChunk(o, 3) }
	first := openStore(t)
	second := openStoreAt(t, first.Path())
	path := filepath.Join(t.TempDir(), "session.jsonl")
	bad := `{"type":"message","id":"zz000000","parentId":"nowhere","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"x","timestamp":1}}` + "\n"
	content := unknownFile(6)
	ls := strings.SplitAfter(content, "\n")
	content = strings.Join(ls[:3], "") + bad + strings.Join(ls[3:], "") + bad // a tolerated line in the first chunk and in the last
	writeFile(t, path, content)

	var overtaking store.FileResult
	reports := 0
	rep := mustImport(t, first, []string{path}, chunked(store.ImportOptions{Mode: jsonl.Lenient, Progress: func(p store.ImportProgress) {
		if p.File == "" || p.BytesDone == 0 {
			return
		}
		if reports++; reports == 1 { // after the first chunk
			overtaking = mustImport(t, second, []string{path}, store.ImportOptions{Mode: jsonl.Lenient}).Files[0]
		}
	}}))
	got := rep.Files[0]
	if overtaking.Outcome != store.OutcomeGrown || overtaking.Err != nil || overtaking.Entries != 11-3 {
		t.Errorf("import between the chunks of another: %+v; want grown by the 8 entries after the first chunk", overtaking)
	}
	if got.Outcome != store.OutcomeNew || got.Err != nil || got.Entries != 3 {
		t.Errorf("import overtaken after its first chunk: %+v; want new with that chunk's 3 entries, no error", got)
	}
	if diff := cmp.Diff(wantUnknown, got.Unknown); diff != "" {
		t.Errorf("overtaken import's Unknown (-want +got):\n%s", diff)
	}
	if want := (sessiontree.UnknownTypes{{Type: "other_thing", Count: 1}, {Type: "future_thing", Count: 1}}); !cmp.Equal(want, overtaking.Unknown) {
		t.Errorf("overtaking import's Unknown = %v; want %v", overtaking.Unknown, want)
	}
	if len(got.Problems) != 2 || len(overtaking.Problems) != 1 {
		t.Errorf("problems: %d for the overtaken import, %d for the other; want both lines read by the first, the last by the second", len(got.Problems), len(overtaking.Problems))
	}
	clean := filepath.Join(t.TempDir(), "clean.jsonl")
	writeFile(t, clean, unknownFile(6))
	checkSessionIDs(t, first, got.SessionID, readIDs(t, clean))
	if again := mustImport(t, first, []string{path}, chunked(store.ImportOptions{Mode: jsonl.Lenient})).Files[0]; again.Outcome != store.OutcomeUnchanged {
		t.Errorf("third import: %+v; want unchanged", again)
	}
}
