package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
)

// aheadChunk is the chunk of the imports of these tests: every file of
// aheadFolder is larger, so each is read twice, its first pass run ahead
// by the reader goroutine while the writer imports the file before it.
const aheadChunk = 2 << 10

// aheadFolder writes a folder of files larger than aheadChunk for the
// first passes run ahead to meet what they could get wrong, each after
// two small files (aNs1, aNs2) that the caller imports first, so that
// the writer is on small files when each is read and its second pass is
// started ahead too. It returns the folder and the small files:
//   - a0, a3, a5: good;
//   - a1: a line that is not JSON in the middle, which Recover refuses
//     (and Lenient skips), after a good file;
//   - a2: the session of a0, which a0's import stores only after a2's
//     first pass could have looked, and a damaged line after its header:
//     a conflict, whatever the mode;
//   - a4: a line of 20 KiB, longer than the first pass ahead reads;
//   - a6: a torn last line, left for later.
func aheadFolder(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	g := newPiGen(11)
	path := func(i int) string { return filepath.Join(dir, fmt.Sprintf("a%d.jsonl", i)) }
	var small []string
	for i := range 7 {
		writePiFile(t, g, path(i), "/home/dev/ahead", 24, 0.3)
		if fi, err := os.Stat(path(i)); err != nil || fi.Size() <= aheadChunk {
			t.Fatalf("a%d: %v, %v; want a file of more than %d bytes", i, fi.Size(), err, aheadChunk)
		}
		for j := 1; j <= 2; j++ {
			p := filepath.Join(dir, fmt.Sprintf("a%ds%d.jsonl", i, j))
			writePiFile(t, g, p, "/home/dev/ahead", 1, 0.1)
			if fi, err := os.Stat(p); err != nil || fi.Size() > aheadChunk {
				t.Fatalf("%s: %v, %v; want a file of at most %d bytes", p, fi.Size(), err, aheadChunk)
			}
			small = append(small, p)
		}
	}
	l := lines(t, path(1))
	l[10] = "{not json\n"
	writeFile(t, path(1), strings.Join(l, ""))
	l = lines(t, path(0))
	l[12] = "{not json either\n"
	writeFile(t, path(2), strings.Join(l, ""))
	l = lines(t, path(4))
	l[8] = `{"pad":"` + strings.Repeat("x", 20<<10) + `",` + l[8][1:]
	writeFile(t, path(4), strings.Join(l, ""))
	l = lines(t, path(6))
	writeFile(t, path(6), strings.Join(l, "")+`{"type":"message","id":"tor`)
	return dir, small
}

// TestImportChecksAhead imports aheadFolder with the first passes run
// ahead, and holds it to the import of the same folder a file at a time,
// each first pass run by the writer in its turn: the same report (each
// file's outcome, its error naming the file and line, its problems), the
// same records and sessions. Each first pass ran ahead but a4's, whose
// long line made it give way to the writer, and each second pass of a
// file not refused: a2's (in Lenient) is stopped when the store refuses
// its session. A refused file left nothing.
func TestImportChecksAhead(t *testing.T) {
	t.Parallel()
	onEngines(t, testImportChecksAhead)
}

func testImportChecksAhead(t *testing.T, openStore opener) {
	dir, small := aheadFolder(t)
	for _, mode := range []jsonl.Mode{jsonl.Recover, jsonl.Lenient} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			var mu sync.Mutex
			ran := map[string]string{}
			ahead := store.WithAhead(store.ImportOptions{Mode: mode}, 16<<10, func(path string, kept, gathered bool) {
				mu.Lock()
				defer mu.Unlock()
				ran[filepath.Base(path)] = map[bool]string{false: "writer's", true: "kept"}[kept] + map[bool]string{true: ", gathered"}[gathered]
			})
			var reports [2]store.ImportReport
			var stores [2]*store.Store
			for i, opts := range []store.ImportOptions{ahead, store.WithoutGroups(ahead)} {
				stores[i] = openStore(t)
				mustImport(t, stores[i], small, store.ImportOptions{})
				reports[i] = mustImport(t, stores[i], []string{dir}, store.WithImportChunkBytes(opts, aheadChunk))
			}
			if diff := cmp.Diff(summarize(reports[1]), summarize(reports[0])); diff != "" {
				t.Errorf("report with passes ahead (-alone +ahead):\n%s", diff)
			}
			refused := "kept"
			if mode == jsonl.Lenient {
				refused = "kept, gathered"
			}
			want := map[string]string{"a0.jsonl": "kept, gathered", "a1.jsonl": refused, "a2.jsonl": refused, "a3.jsonl": "kept, gathered",
				"a4.jsonl": "writer's", "a5.jsonl": "kept, gathered", "a6.jsonl": "kept, gathered"}
			if diff := cmp.Diff(want, ran); diff != "" {
				t.Errorf("passes ahead (-want +got):\n%s", diff)
			}
			sameImports(t, stores, reports[0])
		})
	}
	rep := mustImport(t, openStore(t), []string{dir}, store.WithImportChunkBytes(store.ImportOptions{}, aheadChunk))
	if n := rep.Count(store.OutcomeNew); n != len(rep.Files)-2 {
		t.Errorf("%d of %d files new; want all but a1 and a2", n, len(rep.Files))
	}
	checkAheadOutcomes(t, rep)
}

// checkAheadOutcomes checks what Recover mode makes of aheadFolder.
func checkAheadOutcomes(t *testing.T, rep store.ImportReport) {
	t.Helper()
	want := map[string]store.Outcome{"a1.jsonl": store.OutcomeFailed, "a2.jsonl": store.OutcomeConflict}
	for _, f := range rep.Files {
		name := filepath.Base(f.Path)
		wantOutcome, ok := want[name]
		if !ok {
			wantOutcome = store.OutcomeNew
		}
		if f.Outcome != wantOutcome {
			t.Errorf("%s: %v (%v); want %v", name, f.Outcome, f.Err, wantOutcome)
		}
		var le *jsonl.LineError
		switch name {
		case "a1.jsonl":
			if !errors.As(f.Err, &le) || le.Path != f.Path || le.Line != 11 || f.Entries != 0 {
				t.Errorf("a1: %v, %d entries; want line 11 of %s refused, nothing imported", f.Err, f.Entries, f.Path)
			}
		case "a2.jsonl":
			if !errors.Is(f.Err, sessiontree.ErrConflict) || f.Entries != 0 {
				t.Errorf("a2: %v, %d entries; want the conflict of a0's session, nothing imported", f.Err, f.Entries)
			}
		case "a6.jsonl":
			if f.Torn == nil {
				t.Errorf("a6: no torn line reported")
			}
		}
	}
}

// sameImports checks that the two stores hold the same records and
// sessions of the files rep reports, and nothing of a file refused.
func sameImports(t *testing.T, stores [2]*store.Store, rep store.ImportReport) {
	t.Helper()
	for _, f := range rep.Files {
		name := filepath.Base(f.Path)
		if f.Outcome != store.OutcomeNew {
			if f.Entries != 0 {
				t.Errorf("%s: %v with %d entries imported; want none", name, f.Outcome, f.Entries)
			}
			continue
		}
		a, ha := importRecordOf(t, stores[0], f.Path)
		b, hb := importRecordOf(t, stores[1], f.Path)
		if a != b || ha != hb {
			t.Errorf("%s: record %d bytes %s; alone %d bytes %s", name, a, ha, b, hb)
		}
		var got [2][]string
		for i, s := range stores {
			st, err := s.OpenSession(context.Background(), f.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			got[i] = ids(logOf(t, st))
		}
		if !slices.Equal(got[0], got[1]) || len(got[0]) != f.Entries {
			t.Errorf("%s: session holds %d entries, alone %d; want the %d imported", name, len(got[0]), len(got[1]), f.Entries)
		}
	}
}

// TestImportAheadCanceled cancels imports while passes run ahead: once a
// file's first pass is done and waits for the writer, once the first
// file's second pass is started ahead too, and while the writer commits
// the file before another's pass. Each import stops with
// ctx's error, leaves no file open and nothing of a file it did not
// report, and the next import imports the rest, every entry once.
//
// It is not parallel, so that no other test's import has goroutines
// running when it looks for its own.
func TestImportAheadCanceled(t *testing.T) {
	dir := t.TempDir()
	g := newPiGen(13)
	var files []string
	for i := range 4 {
		files = append(files, filepath.Join(dir, fmt.Sprintf("c%d.jsonl", i)))
		writePiFile(t, g, files[i], "/home/dev/ahead", 24, 0.3)
	}
	cases := map[string]func(cancel func()) store.ImportOptions{
		"after a pass ahead": func(cancel func()) store.ImportOptions {
			return store.WithAhead(store.ImportOptions{}, 0, func(path string, _, _ bool) {
				if path == files[1] {
					cancel()
				}
			})
		},
		"after a file's passes ahead": func(cancel func()) store.ImportOptions {
			return store.WithAhead(store.ImportOptions{}, 0, func(path string, _, gathered bool) {
				if path == files[0] && gathered {
					cancel()
				}
			})
		},
		"while the writer commits": func(cancel func()) store.ImportOptions {
			return store.WithAfterParse(store.ImportOptions{}, cancel)
		},
	}
	for name, opts := range cases {
		t.Run(name, func(t *testing.T) {
			s := openStore(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rep, err := s.Import(ctx, []string{dir}, store.WithImportChunkBytes(opts(cancel), aheadChunk))
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Import() = %v; want context.Canceled", err)
			}
			if n := openUnder(t, dir); n != 0 {
				t.Errorf("%d files of the folder open after the import; want none", n)
			}
			if stacks := importGoroutines(); stacks != "" {
				t.Errorf("goroutines of the import left running:\n%s", stacks)
			}
			if len(rep.Files) == len(files) {
				t.Fatalf("the canceled import reports all %d files; want fewer", len(files))
			}
			again := mustImport(t, s, []string{dir}, store.WithImportChunkBytes(store.ImportOptions{}, aheadChunk))
			if rep.Entries+again.Entries != countEntries(t, files) {
				t.Errorf("imports added %d + %d entries; want %d, each once", rep.Entries, again.Entries, countEntries(t, files))
			}
			for _, p := range files {
				st, err := s.OpenSession(context.Background(), readHeaderID(t, p))
				if err != nil {
					t.Fatal(err)
				}
				if got, want := ids(logOf(t, st)), readIDs(t, p); !slices.Equal(got, want) {
					t.Errorf("%s: session holds %v; want %v", filepath.Base(p), got, want)
				}
			}
		})
	}
}

// openUnder counts the files under dir the process has open.
func openUnder(t *testing.T, dir string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, dir+string(filepath.Separator)) {
			n++
		}
	}
	return n
}

// TestImportChunksStopWhenCommitFails writes to a file's session in the
// store between the chunks of its import, while the next chunks are read
// ahead: the import keeps the chunk committed before, reports the
// conflict, and stops reading the file.
func TestImportChunksStopWhenCommitFails(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "big.jsonl")
	copyFile(t, filepath.Join(piDir, "session-009.jsonl"), path)
	want := readIDs(t, path)
	written := false
	opts := store.WithImportChunk(store.ImportOptions{Progress: func(p store.ImportProgress) {
		if p.File != "" && p.BytesDone > 0 && !written {
			written = true
			st, err := s.OpenSession(context.Background(), readHeaderID(t, path))
			if err != nil {
				t.Fatal(err)
			}
			newBuilder(t, st).user("mine", "written in the store")
		}
	}}, 10)
	f := mustImport(t, s, []string{path}, opts).Files[0]
	if f.Outcome != store.OutcomeConflict || !errors.Is(f.Err, sessiontree.ErrConflict) || f.Entries != 10 || len(want) <= 20 {
		t.Errorf("import: %v (%v), %d entries; want a conflict after the first chunk of 10 (of %d)", f.Outcome, f.Err, f.Entries, len(want))
	}
	if n := openUnder(t, dir); n != 0 {
		t.Errorf("%d files of the folder open after the import; want none", n)
	}
	st, err := s.OpenSession(context.Background(), f.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(logOf(t, st)); len(got) != 11 || !slices.Equal(got[:10], want[:10]) {
		t.Errorf("session holds %d entries; want the first 10 of the file and the one written", len(got))
	}
}

// importGoroutines returns the stacks of the goroutines an import starts
// (its reader, a file's second pass) still running, after a moment for
// those ending to end; "" when there are none.
func importGoroutines() string {
	var found []string
	for range 100 {
		var b strings.Builder
		pprof.Lookup("goroutine").WriteTo(&b, 2)
		found = found[:0]
		for _, g := range strings.Split(b.String(), "\n\n") {
			if strings.Contains(g, "store.(*fileImport).gather") || strings.Contains(g, "store.(*Store).readAhead") {
				found = append(found, g)
			}
		}
		if len(found) == 0 {
			return ""
		}
		time.Sleep(10 * time.Millisecond)
	}
	return strings.Join(found, "\n\n")
}
