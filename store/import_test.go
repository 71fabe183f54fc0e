package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/storetest"
)

// lines returns a file's lines, each with its newline.
func lines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ls := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	ls[len(ls)-1] += "\n"
	return ls
}

func writeFile(t testing.TB, path string, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t testing.TB, path string, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// readIDs reads the entry ids of a pi file as the JSONL reader gives
// them (migrated, for old versions).
func readIDs(t testing.TB, path string) []string {
	t.Helper()
	return readIDsMode(t, path, jsonl.Strict)
}

// readIDsMode is readIDs in the reader's mode: jsonl.Recover leaves a
// torn last line out, as an import does.
func readIDsMode(t testing.TB, path string, mode jsonl.Mode) []string {
	t.Helper()
	var out []string
	for r, err := range jsonl.ReadFile(context.Background(), path, jsonl.ReadOptions{Mode: mode}) {
		if err != nil {
			t.Fatal(err)
		}
		if r.Kind == jsonl.KindEntry {
			out = append(out, r.Entry.ID)
		}
	}
	return out
}

func TestImportFixtures(t *testing.T) {
	t.Parallel()
	onEngines(t, testImportFixtures)
}

func testImportFixtures(t *testing.T, openStore opener) {
	ctx := context.Background()
	s := openStore(t)
	fixtures := piFixtures(t)
	rep := mustImport(t, s, fixturePaths(fixtures), store.ImportOptions{Mode: jsonl.Strict})
	if len(rep.Files) != len(fixtures) || rep.Count(store.OutcomeNew) != len(fixtures) {
		t.Fatalf("import: %d files, %d new; want %d new", len(rep.Files), rep.Count(store.OutcomeNew), len(fixtures))
	}
	var bytes int64
	for i, fx := range fixtures {
		f := rep.Files[i]
		abs, _ := filepath.Abs(fx.Path)
		fi, err := os.Stat(fx.Path)
		if err != nil {
			t.Fatal(err)
		}
		bytes += fi.Size()
		if f.Path != abs || f.Entries != fx.Want.EntryCount || f.Bytes != fi.Size() || f.Err != nil || len(f.Problems) != 0 {
			t.Errorf("import %s: %+v; want %d entries, %d bytes", fx.Name, f, fx.Want.EntryCount, fi.Size())
		}
		t.Run(fx.Name, func(t *testing.T) {
			st, err := s.OpenSession(ctx, f.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			storetest.CheckPi(t, st, fx.Want)
			if !strings.Contains(lines(t, fx.Path)[0], `"version":3`) {
				return // entries of older versions are migrated
			}
			// Every entry is kept byte for byte.
			var want []string
			for _, l := range lines(t, fx.Path)[1:] {
				want = append(want, strings.TrimSuffix(l, "\n"))
			}
			var got []string
			for _, e := range logOf(t, st) {
				got = append(got, string(e.Raw))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("stored entries differ from the file's lines (-file +store):\n%s", diff)
			}
		})
	}
	if rep.Bytes != bytes || rep.Entries == 0 {
		t.Errorf("report totals %d bytes %d entries; want %d bytes", rep.Bytes, rep.Entries, bytes)
	}

	// Again: nothing changes.
	again := mustImport(t, s, fixturePaths(fixtures), store.ImportOptions{})
	if again.Count(store.OutcomeUnchanged) != len(fixtures) || again.Entries != 0 || again.Bytes != 0 {
		t.Errorf("second import: %d unchanged, %d entries, %d bytes; want all unchanged, nothing imported",
			again.Count(store.OutcomeUnchanged), again.Entries, again.Bytes)
	}
	if n := countSessions(t, s); n != len(fixtures) {
		t.Errorf("%d sessions after importing twice; want %d", n, len(fixtures))
	}
}

// A file pi keeps appending to is imported in pieces: each import brings
// exactly the lines added since, into the same session, which ends up as
// if the whole file had been imported at once.
func TestImportResumeAfterGrowth(t *testing.T) {
	t.Parallel()
	onEngines(t, testImportResumeAfterGrowth)
}

func testImportResumeAfterGrowth(t *testing.T, openStore opener) {
	ctx := context.Background()
	names := []string{"session-005", "session-009", "legacy-v1-compaction", "legacy-v2-hookmessage"}
	if storetest.RaceEnabled {
		names = names[1:]
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			s := openStore(t)
			src := filepath.Join(piDir, name+".jsonl")
			all := lines(t, src)
			path := filepath.Join(t.TempDir(), "grow.jsonl")
			cut1, cut2 := len(all)/3, 2*len(all)/3
			writeFile(t, path, strings.Join(all[:cut1], ""))
			first := mustImport(t, s, []string{path}, store.ImportOptions{Mode: jsonl.Strict}).Files[0]
			if first.Outcome != store.OutcomeNew || first.Entries != cut1-1 {
				t.Fatalf("first import: %+v; want new with %d entries", first, cut1-1)
			}
			st, err := s.OpenSession(ctx, first.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			// The rest arrives in two steps, the first ending in a torn
			// line that the next write completes.
			middle := strings.Join(all[cut1:cut2], "")
			torn := all[cut2][:len(all[cut2])/2]
			appendFile(t, path, middle+torn)
			second := mustImport(t, s, []string{path}, store.ImportOptions{}).Files[0]
			if second.Outcome != store.OutcomeGrown || second.Entries != cut2-cut1 || len(second.Problems) != 1 {
				t.Fatalf("second import: %+v; want grown by %d entries with a torn line reported", second, cut2-cut1)
			}
			if p := second.Problems[0]; p.Path != path || p.Line != cut2+1 {
				t.Errorf("torn line reported at %s:%d; want %s:%d", p.Path, p.Line, path, cut2+1)
			}
			if got := len(logOf(t, st)); got != cut2-1 {
				t.Errorf("session has %d entries after the second import; want %d", got, cut2-1)
			}
			appendFile(t, path, strings.TrimPrefix(strings.Join(all[cut2:], ""), torn))
			third := mustImport(t, s, []string{path}, store.ImportOptions{Mode: jsonl.Strict}).Files[0]
			if third.Outcome != store.OutcomeGrown || third.Entries != len(all)-cut2 || len(third.Problems) != 0 {
				t.Fatalf("third import: %+v; want grown by %d entries", third, len(all)-cut2)
			}
			if diff := cmp.Diff(readIDs(t, src), ids(logOf(t, st))); diff != "" {
				t.Errorf("session ids differ from the whole file's (-file +store):\n%s", diff)
			}
			for _, fx := range storetest.PiFixtures(t, piDir) {
				if fx.Name == name {
					storetest.CheckPi(t, st, fx.Want)
				}
			}
			if f := mustImport(t, s, []string{path}, store.ImportOptions{}).Files[0]; f.Outcome != store.OutcomeUnchanged {
				t.Errorf("fourth import: %+v; want unchanged", f)
			}
		})
	}
}

func TestImportConflicts(t *testing.T) {
	t.Parallel()
	onEngines(t, testImportConflicts)
}

func testImportConflicts(t *testing.T, openStore opener) {
	ctx := context.Background()
	s := openStore(t)
	dir := t.TempDir()
	src := filepath.Join(piDir, "session-002.jsonl")
	all := lines(t, src)
	base := strings.Join(all[:10], "")

	check := func(name string, f store.FileResult) {
		t.Helper()
		if f.Outcome != store.OutcomeConflict || !errors.Is(f.Err, sessiontree.ErrConflict) || f.Entries != 0 {
			t.Errorf("%s: %+v, %v; want a conflict", name, f, f.Err)
		}
	}
	sessionEntries := func(id string) int {
		st, err := s.OpenSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return len(logOf(t, st))
	}

	// The imported part changes: same size, one byte different.
	edited := filepath.Join(dir, "edited.jsonl")
	writeFile(t, edited, base)
	id := mustImport(t, s, []string{edited}, store.ImportOptions{}).Files[0].SessionID
	changed := strings.Replace(base, `"timestamp":"2026-`, `"timestamp":"2027-`, 2)
	if changed == base || len(changed) != len(base) {
		t.Fatal("test edit did not apply")
	}
	writeFile(t, edited, changed)
	check("edited in place", mustImport(t, s, []string{edited}, store.ImportOptions{}).Files[0])
	// ... and grown too.
	appendFile(t, edited, strings.Join(all[10:], ""))
	check("edited and grown", mustImport(t, s, []string{edited}, store.ImportOptions{}).Files[0])
	// ... or cut short.
	writeFile(t, edited, strings.Join(all[:5], ""))
	check("shortened", mustImport(t, s, []string{edited}, store.ImportOptions{}).Files[0])
	if n := sessionEntries(id); n != 9 {
		t.Errorf("session has %d entries after conflicts; want the first import's 9", n)
	}

	// The same session in a second file.
	copyFile(t, src, filepath.Join(dir, "copy.jsonl"))
	check("session id taken", mustImport(t, s, []string{filepath.Join(dir, "copy.jsonl")}, store.ImportOptions{}).Files[0])

	// The session was written to in the store since the import.
	s2 := openStore(t)
	grown := filepath.Join(t.TempDir(), "grown.jsonl")
	writeFile(t, grown, base)
	id = mustImport(t, s2, []string{grown}, store.ImportOptions{}).Files[0].SessionID
	st, err := s2.OpenSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	newBuilder(t, st).user("mine", "written in the store")
	appendFile(t, grown, strings.Join(all[10:], ""))
	check("session written since", mustImport(t, s2, []string{grown}, store.ImportOptions{}).Files[0])
	if n := len(logOf(t, st)); n != 10 {
		t.Errorf("session has %d entries; want 10 (nothing merged)", n)
	}
}

// damaged writes a file from the lines of session-002 with one change
// and a session id of its own.
func damaged(t *testing.T, dir, name string, edit func(l []string) []string) string {
	path := filepath.Join(dir, name+".jsonl")
	l := slices.Clone(lines(t, filepath.Join(piDir, "session-002.jsonl")))
	l[0] = strings.Replace(l[0], "01a237bc-c4a9-75e6-b60f-1754ad8dfc77", "01a237bc-c4a9-75e6-b60f-"+fmt.Sprintf("%012x", len(name)*1000+int(name[0])), 1)
	writeFile(t, path, strings.Join(edit(l), ""))
	return path
}

// TestImportModes imports damaged files in each mode and holds the
// outcome to what the JSONL backend makes of the same file in the same
// mode: the same entries, the same lines reported.
func TestImportModes(t *testing.T) {
	t.Parallel()
	onEngines(t, testImportModes)
}

func testImportModes(t *testing.T, openStore opener) {
	ctx := context.Background()
	dir := t.TempDir()
	good := filepath.Join(dir, "a-good.jsonl")
	copyFile(t, filepath.Join(piDir, "session-010.jsonl"), good)
	n := len(lines(t, filepath.Join(piDir, "session-002.jsonl"))) - 1 // entries
	files := map[string]string{
		"bad json": damaged(t, dir, "b-badjson", func(l []string) []string {
			l[5] = "{this is not json\n"
			return l
		}),
		"missing field": damaged(t, dir, "c-nofield", func(l []string) []string {
			l[n] = strings.Replace(l[n], `"timestamp"`, `"when"`, 1)
			return l
		}),
		"duplicate line": damaged(t, dir, "d-dup", func(l []string) []string {
			return append(l[:8], append([]string{l[3]}, l[8:]...)...)
		}),
		"duplicate id": damaged(t, dir, "e-dupid", func(l []string) []string {
			return append(l, strings.Replace(l[3], `"timestamp":"2026-`, `"timestamp":"2027-`, 1))
		}),
		"missing parent": damaged(t, dir, "f-orphan", func(l []string) []string {
			return append(l[:4], l[5:]...)
		}),
		"torn tail": damaged(t, dir, "g-torn", func(l []string) []string {
			last := l[len(l)-1]
			l[len(l)-1] = last[:len(last)/2]
			return l
		}),
		"no header": damaged(t, dir, "h-noheader", func(l []string) []string { return l[1:] }),
	}
	// Hand-computed anchors, besides the comparison with the JSONL
	// backend: the torn tail loses its last entry, a bad line in lenient
	// mode only itself when nothing hangs under it.
	anchors := map[jsonl.Mode]map[string]int{
		jsonl.Recover: {"torn tail": n - 1},
		jsonl.Lenient: {"torn tail": n - 1, "missing field": n - 1, "duplicate line": n, "duplicate id": n},
	}
	for _, mode := range []jsonl.Mode{jsonl.Strict, jsonl.Recover, jsonl.Lenient} {
		t.Run(mode.String(), func(t *testing.T) {
			s := openStore(t)
			rep := mustImport(t, s, []string{dir}, store.ImportOptions{Mode: mode})
			byPath := map[string]store.FileResult{}
			for _, f := range rep.Files {
				byPath[f.Path] = f
			}
			if f := byPath[good]; f.Outcome != store.OutcomeNew {
				t.Errorf("good file: %+v; want new: one bad file must not stop the others", f)
			}
			for name, path := range files {
				f := byPath[path]
				want, err := jsonl.Open(ctx, path, jsonl.Options{ReadOnly: true, Mode: mode})
				if err != nil {
					var wantLE, gotLE *jsonl.LineError
					if !errors.As(err, &wantLE) {
						t.Fatalf("%s: jsonl.Open: %v", name, err)
					}
					if f.Outcome != store.OutcomeFailed || !errors.As(f.Err, &gotLE) || !errors.Is(f.Err, sessiontree.ErrCorrupt) {
						t.Errorf("%s: %s, %v; want failed with a *jsonl.LineError like the JSONL backend's %v", name, f.Outcome, f.Err, err)
						continue
					}
					if gotLE.Path != path || gotLE.Line != wantLE.Line {
						t.Errorf("%s: failed at %s:%d; want %s:%d (%v / %v)", name, gotLE.Path, gotLE.Line, path, wantLE.Line, gotLE, wantLE)
					}
					if f.Entries != 0 || countSessions(t, s) != len(rep.Files)-rep.Count(store.OutcomeFailed) {
						t.Errorf("%s: a failed file left entries behind", name)
					}
					continue
				}
				report := want.Report()
				want.Close()
				if f.Outcome != store.OutcomeNew || f.Entries != report.Entries {
					t.Errorf("%s: %s with %d entries (%v); want new with %d like the JSONL backend", name, f.Outcome, f.Entries, f.Err, report.Entries)
				}
				if a, ok := anchors[mode][name]; ok && f.Entries != a {
					t.Errorf("%s: %d entries; want %d", name, f.Entries, a)
				}
				var gotLines, wantLines []int
				for _, p := range f.Problems {
					if p.Path != path {
						t.Errorf("%s: problem names %s; want %s", name, p.Path, path)
					}
					gotLines = append(gotLines, p.Line)
				}
				for _, w := range report.Warnings {
					wantLines = append(wantLines, w.Line)
				}
				if !slices.Equal(gotLines, wantLines) {
					t.Errorf("%s: problems at lines %v; want %v", name, gotLines, wantLines)
				}
			}
		})
	}
}

func TestImportProgressAndDefaultDir(t *testing.T) {
	onEnginesInTurn(t, testImportProgressAndDefaultDir)
}

func testImportProgressAndDefaultDir(t *testing.T, openStore opener) {
	ctx := context.Background()
	home := t.TempDir()
	t.Setenv("PI_CODING_AGENT_DIR", home)
	dir := filepath.Join(home, "sessions", "--home-user-project--")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, name := range []string{"session-002", "session-003", "session-010"} {
		copyFile(t, filepath.Join(piDir, name+".jsonl"), filepath.Join(dir, name+".jsonl"))
		fi, _ := os.Stat(filepath.Join(dir, name+".jsonl"))
		total += fi.Size()
	}
	writeFile(t, filepath.Join(dir, "notes.txt"), "not a session")
	if got, _ := store.PiSessionsDir(); got != filepath.Join(home, "sessions") {
		t.Errorf("PiSessionsDir() = %q; want %q", got, filepath.Join(home, "sessions"))
	}
	s := openStore(t)
	var reports []store.ImportProgress
	rep, err := s.Import(ctx, nil, store.ImportOptions{Progress: func(p store.ImportProgress) { reports = append(reports, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Count(store.OutcomeNew) != 3 || len(rep.Files) != 3 {
		t.Fatalf("import of the default folder: %+v", rep.Files)
	}
	last := reports[len(reports)-1]
	if last != (store.ImportProgress{FilesDone: 3, FilesTotal: 3, BytesDone: total, BytesTotal: total}) {
		t.Errorf("last progress = %+v; want 3 of 3 files, %d of %d bytes", last, total, total)
	}
	for i := 1; i < len(reports); i++ {
		if reports[i].BytesDone < reports[i-1].BytesDone || reports[i].FilesDone < reports[i-1].FilesDone {
			t.Errorf("progress went back: %+v after %+v", reports[i], reports[i-1])
		}
	}

	// A path that does not exist fails alone.
	rep, err = s.Import(ctx, []string{filepath.Join(home, "nope.jsonl"), dir}, store.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Files[0].Outcome != store.OutcomeFailed || rep.Count(store.OutcomeUnchanged) != 3 {
		t.Errorf("import with a missing path: %+v", rep.Files)
	}

	// A canceled import stops and says so.
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Import(canceled, []string{dir}, store.ImportOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Import(canceled) = %v; want context.Canceled", err)
	}
}

// An import commits a file chunk by chunk; one cut short leaves what it
// committed, recorded, and the next import continues from there.
func TestImportChunksAndResumeAfterCancel(t *testing.T) {
	t.Parallel()
	chunked := func(o store.ImportOptions) store.ImportOptions { return store.WithImportChunk(o, 10) }
	ctx := context.Background()
	s := openStore(t)
	path := filepath.Join(t.TempDir(), "big.jsonl")
	copyFile(t, filepath.Join(piDir, "session-009.jsonl"), path)
	want := readIDs(t, path)

	canceled, cancel := context.WithCancel(ctx)
	defer cancel()
	reports := 0
	rep, err := s.Import(canceled, []string{path}, chunked(store.ImportOptions{Progress: func(p store.ImportProgress) {
		if p.File != "" && p.BytesDone > 0 {
			if reports++; reports == 3 {
				cancel()
			}
		}
	}}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Import() = %v; want context.Canceled", err)
	}
	f := rep.Files[0]
	if f.Entries != 30 {
		t.Errorf("canceled import committed %d entries; want 3 chunks of 10", f.Entries)
	}
	st, err := s.OpenSession(ctx, f.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(logOf(t, st)); !slices.Equal(got, want[:30]) {
		t.Errorf("after the canceled import the session has %v; want the first 30 entries", got)
	}
	again := mustImport(t, s, []string{path}, chunked(store.ImportOptions{})).Files[0]
	if again.Outcome != store.OutcomeGrown || again.Entries != len(want)-30 {
		t.Errorf("import after the cancel: %+v; want grown by %d", again, len(want)-30)
	}
	if diff := cmp.Diff(want, ids(logOf(t, st))); diff != "" {
		t.Errorf("session after resuming (-file +store):\n%s", diff)
	}
	for _, fx := range storetest.PiFixtures(t, piDir) {
		if fx.Name == "session-009" {
			storetest.CheckPi(t, st, fx.Want)
		}
	}
	if f := mustImport(t, s, []string{path}, chunked(store.ImportOptions{})).Files[0]; f.Outcome != store.OutcomeUnchanged {
		t.Errorf("third import: %+v; want unchanged", f)
	}
	// A damaged file still writes nothing, however many chunks it has.
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	l := lines(t, filepath.Join(piDir, "session-005.jsonl"))
	l[len(l)-3] = "{not json\n"
	writeFile(t, bad, strings.Join(l, ""))
	if f := mustImport(t, s, []string{bad}, chunked(store.ImportOptions{})).Files[0]; f.Outcome != store.OutcomeFailed || f.Entries != 0 {
		t.Errorf("damaged file: %+v; want failed with nothing written", f)
	}
	if _, err := s.OpenSession(ctx, "01a237bc-c4b4-72d2-9d49-cef0c5e2f96c"); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("the damaged file's session exists: %v", err)
	}
}

// importRecordOf reads what the store recorded of an imported file: how
// many bytes are imported and their SHA-256.
func importRecordOf(t testing.TB, s *store.Store, path string) (int64, string) {
	t.Helper()
	var rec sessiontree.ImportRecord
	err := s.Database().View(context.Background(), func(tx sessiontree.DatabaseTx) error {
		r, ok, err := tx.ImportRecord(path)
		if err == nil && !ok {
			err = fmt.Errorf("no import record of %s", path)
		}
		rec = r
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return rec.ImportedBytes, rec.PrefixSHA256
}

// The record of an import holds the SHA-256 of exactly the bytes
// imported, whether the import hashed the file as it read it or read the
// imported part again (a torn line left for later, a file too large for
// one pass).
func TestImportRecordsPrefixHash(t *testing.T) {
	t.Parallel()
	onEngines(t, testImportRecordsPrefixHash)
}

func testImportRecordsPrefixHash(t *testing.T, openStore opener) {
	dir := t.TempDir()
	all := lines(t, filepath.Join(piDir, "session-005.jsonl"))
	whole := strings.Join(all, "")
	torn := whole + `{"type":"message","id":"torn`
	blank := whole + "\n\n"
	for _, tc := range []struct {
		name, content string
		chunk         int // entries per chunk, 0 for the default
		imported      int // bytes
	}{
		{"whole", whole, 0, len(whole)},
		{"torn tail", torn, 0, len(whole)},
		{"blank lines at the end", blank, 0, len(whole)},
		{"two passes", whole, 10, len(whole)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chunked := func(o store.ImportOptions) store.ImportOptions { return store.WithImportChunk(o, tc.chunk) }
			s := openStore(t)
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".jsonl")
			writeFile(t, path, tc.content)
			if f := mustImport(t, s, []string{path}, chunked(store.ImportOptions{})).Files[0]; f.Outcome != store.OutcomeNew {
				t.Fatalf("import: %+v; want new", f)
			}
			n, sum := importRecordOf(t, s, path)
			want := sha256.Sum256([]byte(tc.content[:tc.imported]))
			if n != int64(tc.imported) || sum != hex.EncodeToString(want[:]) {
				t.Errorf("record: %d bytes, SHA-256 %s; want %d bytes, %x", n, sum, tc.imported, want)
			}
		})
	}
}

// A file of one chunk is committed in one transaction: an import
// canceled while it reads the file leaves nothing of it, and the next
// import brings it whole.
func TestImportOneChunkCanceled(t *testing.T) {
	t.Parallel()
	onEngines(t, testImportOneChunkCanceled)
}

func testImportOneChunkCanceled(t *testing.T, openStore opener) {
	ctx := context.Background()
	s := openStore(t)
	path := filepath.Join(t.TempDir(), "one.jsonl")
	writePiFile(t, newPiGen(3), path, "/home/dev/one", 300, 0.1)
	want := readIDs(t, path)
	canceled, cancel := context.WithCancel(ctx)
	defer cancel()
	appended := 0
	tuned := func(o store.ImportOptions) store.ImportOptions {
		return store.WithAfterAppend(store.WithAppendBatch(o, 100), func() {
			if appended++; appended == 1 {
				cancel() // after the first of several batches of entries
			}
		})
	}
	rep, err := s.Import(canceled, []string{path}, tuned(store.ImportOptions{}))
	if !errors.Is(err, context.Canceled) || appended != 1 {
		t.Fatalf("Import() = %v after %d batches; want context.Canceled after 1", err, appended)
	}
	if f := rep.Files[0]; f.Entries != 0 || f.Bytes != 0 {
		t.Errorf("canceled import: %+v; want nothing committed", f)
	}
	if n := countSessions(t, s); n != 0 {
		t.Errorf("%d sessions after the canceled import; want 0", n)
	}
	f := mustImport(t, s, []string{path}, tuned(store.ImportOptions{})).Files[0]
	if f.Outcome != store.OutcomeNew || f.Entries != len(want) {
		t.Fatalf("import after the cancel: %+v; want new with %d entries", f, len(want))
	}
	checkSessionIDs(t, s, f.SessionID, want)
}

// A file found to hold more than a chunk once a one-pass import has
// appended some of it is imported in two passes instead: the one pass
// leaves nothing behind and progress never goes back.
func TestImportOnePassGivesWay(t *testing.T) {
	t.Parallel()
	onEngines(t, testImportOnePassGivesWay)
}

func testImportOnePassGivesWay(t *testing.T, openStore opener) {
	s := openStore(t)
	path := filepath.Join(t.TempDir(), "more.jsonl")
	writePiFile(t, newPiGen(5), path, "/home/dev/more", 320, 0.1)
	want := readIDs(t, path)
	appended := 0
	tuned := func(o store.ImportOptions) store.ImportOptions {
		return store.WithAfterAppend(store.WithAppendBatch(store.WithImportChunk(o, 150), 100), func() { appended++ })
	}
	var done []int64
	rep := mustImport(t, s, []string{path}, tuned(store.ImportOptions{Progress: func(p store.ImportProgress) {
		if p.File != "" {
			done = append(done, p.BytesDone)
		}
	}}))
	f := rep.Files[0]
	if f.Outcome != store.OutcomeNew || f.Entries != len(want) || f.Err != nil {
		t.Fatalf("import: %+v; want new with %d entries", f, len(want))
	}
	if appended != 1 {
		t.Errorf("the one pass appended %d batches before giving way; want 1", appended)
	}
	if !slices.IsSorted(done) || len(done) < 3 {
		t.Errorf("progress %v; want a report at the start and one per chunk committed, never going back", done)
	}
	checkSessionIDs(t, s, f.SessionID, want)
}

// Progress is never called inside the import's transactions, so it may
// write to the store (it would wait for the import's write lock forever
// otherwise).
func TestImportProgressMayWrite(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tuned := func(o store.ImportOptions) store.ImportOptions {
		return store.WithAppendBatch(store.WithImportChunk(o, 150), 100)
	}
	s := openStore(t)
	dir := t.TempDir()
	writePiFile(t, newPiGen(9), filepath.Join(dir, "a.jsonl"), "/home/dev/a", 300, 0.1)
	copyFile(t, filepath.Join(piDir, "session-009.jsonl"), filepath.Join(dir, "b.jsonl"))
	writes := 0
	rep, err := s.Import(ctx, []string{dir}, tuned(store.ImportOptions{Progress: func(store.ImportProgress) {
		if err := s.DB().Update(ctx, func(*engine.Tx) error { return nil }); err != nil {
			t.Errorf("write from Progress: %v", err)
		}
		writes++
	}}))
	if err != nil || rep.Count(store.OutcomeNew) != 2 {
		t.Fatalf("Import() = %+v, %v; want 2 new files", rep.Files, err)
	}
	if writes < 5 {
		t.Errorf("Progress wrote %d times; want one write per report, at least 5", writes)
	}
}

// A line pi appends while the import reads the file, after the reader
// has passed the end, is new to the next import: the record keeps the
// size the import found, not the one the file has by the commit.
func TestImportLineAddedWhileImporting(t *testing.T) {
	t.Parallel()
	onEngines(t, testImportLineAddedWhileImporting)
}

func testImportLineAddedWhileImporting(t *testing.T, openStore opener) {
	s := openStore(t)
	all := lines(t, filepath.Join(piDir, "session-002.jsonl"))
	path := filepath.Join(t.TempDir(), "busy.jsonl")
	writeFile(t, path, strings.Join(all[:len(all)-1], ""))
	added := false
	first := mustImport(t, s, []string{path}, store.WithAfterAppend(store.ImportOptions{}, func() {
		if !added { // the file is read to its end before the last batch
			appendFile(t, path, all[len(all)-1])
			added = true
		}
	})).Files[0]
	if !added || first.Outcome != store.OutcomeNew || first.Entries != len(all)-2 {
		t.Fatalf("first import: %+v (line added: %v); want new with %d entries", first, added, len(all)-2)
	}
	second := mustImport(t, s, []string{path}, store.ImportOptions{}).Files[0]
	if second.Outcome != store.OutcomeGrown || second.Entries != 1 {
		t.Errorf("second import: %+v; want grown by the added line", second)
	}
	checkSessionIDs(t, s, first.SessionID, readIDs(t, path))
}

// checkSessionIDs fails the test unless the stored session id holds
// exactly the entries want, in order.
func checkSessionIDs(t *testing.T, s *store.Store, id string, want []string) {
	t.Helper()
	st, err := s.OpenSession(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, ids(logOf(t, st))); diff != "" {
		t.Errorf("session %s (-file +store):\n%s", id, diff)
	}
}

// A torn last line left for later is not covered by the record's hash:
// when a writer cuts it (as jsonl.Storage does before it writes, keeping
// it in a sidecar) and appends a line of the same length, the file has
// the size its record says, yet a new entry. The next import brings it,
// not "unchanged".
func TestImportTornTailReplacedBySameSize(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	all := lines(t, filepath.Join(piDir, "session-002.jsonl"))
	last := all[len(all)-1]
	long := ""
	for _, l := range all[1:] {
		if len(l) > len(long) {
			long = l
		}
	}
	if len(long) <= len(last) {
		t.Fatal("the fixture has no line longer than its last")
	}
	path := filepath.Join(t.TempDir(), "torn.jsonl")
	writeFile(t, path, strings.Join(all[:len(all)-1], "")+long[:len(last)])
	first := mustImport(t, s, []string{path}, store.ImportOptions{}).Files[0]
	if first.Outcome != store.OutcomeNew || first.Torn == nil {
		t.Fatalf("first import: %+v; want new with a torn line left for later", first)
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// A writer cuts the torn line and appends the last entry, a moment
	// later.
	w, err := jsonl.Open(ctx, path, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := jsonl.ParseLine([]byte(strings.TrimSpace(last)))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AppendBatch(ctx, []sessiontree.Entry{e}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	later := before.ModTime().Add(time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(path); err != nil || after.Size() != before.Size() {
		t.Fatalf("file after the write: %v, %v; want %d bytes as before", after, err, before.Size())
	}
	second := mustImport(t, s, []string{path}, store.ImportOptions{}).Files[0]
	if second.Outcome != store.OutcomeGrown || second.Entries != 1 {
		t.Errorf("second import: %+v; want grown by the entry that replaced the torn line", second)
	}
	checkSessionIDs(t, s, first.SessionID, readIDs(t, path))
}

// A file grown while another writer holds a claim on its session in the
// store is not imported past the claim: its result says so (an error
// matching the claim), the import goes on with the other files, and
// once the claim is released the next import brings the new lines. The
// claim is no lock to wait for: it ends when its holder says.
func TestImportGrownFileOfClaimedSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	all := lines(t, filepath.Join(piDir, "session-002.jsonl"))
	half := len(all) / 2
	dir := t.TempDir()
	path, other := filepath.Join(dir, "claimed.jsonl"), filepath.Join(dir, "other.jsonl")
	writeFile(t, path, strings.Join(all[:half], ""))
	first := mustImport(t, s, []string{path}, store.ImportOptions{}).Files[0]
	st, err := s.OpenSession(ctx, first.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	claim, err := st.(sessiontree.Claimer).Claim(ctx, "agent", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	appendFile(t, path, strings.Join(all[half:], ""))
	copyFile(t, filepath.Join(piDir, "session-005.jsonl"), other)
	// Bounded so that an import that never returns fails the test.
	bounded, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	rep, err := s.Import(bounded, []string{dir}, store.ImportOptions{NoWait: true})
	if err != nil {
		t.Fatalf("Import() = %v; want the claimed file's result, and the other file imported", err)
	}
	byPath := map[string]store.FileResult{}
	for _, f := range rep.Files {
		byPath[f.Path] = f
	}
	var claimed *sessiontree.ClaimedError
	if f := byPath[path]; f.Outcome != store.OutcomeFailed || f.Entries != 0 || !errors.As(f.Err, &claimed) {
		t.Errorf("claimed session's file: %+v; want failed on the claim, nothing imported", f)
	}
	if f := byPath[other]; f.Outcome != store.OutcomeNew {
		t.Errorf("other file: %+v; want new", f)
	}
	if err := claim.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if f := mustImport(t, s, []string{path}, store.ImportOptions{}).Files[0]; f.Outcome != store.OutcomeGrown || f.Entries != len(all)-half {
		t.Errorf("import after the claim's release: %+v; want grown by %d entries", f, len(all)-half)
	}
	checkSessionIDs(t, s, first.SessionID, readIDs(t, path))
}
