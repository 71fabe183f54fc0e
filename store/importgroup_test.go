package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
)

// groupFolder writes a pi folder of n small generated sessions, g00.jsonl
// on, and returns it with the files in the order an import finds them.
func groupFolder(t *testing.T, n int) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	g := newPiGen(7)
	var files []string
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("g%02d.jsonl", i))
		writePiFile(t, g, p, "/home/dev/groups", 2+i%5, 0.2)
		files = append(files, p)
	}
	return dir, files
}

// fileSummary is what a report says of a file, for comparing two imports.
type fileSummary struct {
	Path, SessionID, Outcome, Err string
	Entries, Problems             int
	Bytes                         int64
}

func summarize(rep store.ImportReport) []fileSummary {
	var out []fileSummary
	for _, f := range rep.Files {
		s := fileSummary{Path: filepath.Base(f.Path), SessionID: f.SessionID, Outcome: f.Outcome.String(), Entries: f.Entries, Problems: len(f.Problems), Bytes: f.Bytes}
		if f.Err != nil {
			s.Err = f.Err.Error()
		}
		out = append(out, s)
	}
	return out
}

// TestImportGroups imports a folder of small files, some of which no
// group may take (a damaged file, a session already in the store, a file
// imported before, a torn last line), and holds it to the import of the
// same folder a file at a time: the same report, the same records, the
// same sessions; and the small new files went in groups of several files
// to a transaction.
func TestImportGroups(t *testing.T) {
	t.Parallel()
	onEngines(t, testImportGroups)
}

func testImportGroups(t *testing.T, openStore opener) {
	ctx := context.Background()
	dir, files := groupFolder(t, 40)
	// g10b: damaged in the middle, refused.
	l := lines(t, files[10])
	l[0], l[2] = newSessionID(t, l[0]), "{not json\n"
	writeFile(t, filepath.Join(dir, "g10b.jsonl"), strings.Join(l, ""))
	// g20b: the session of g05 again.
	writeFile(t, filepath.Join(dir, "g20b.jsonl"), strings.Join(lines(t, files[5]), ""))
	// g30b: a torn last line, left for later.
	l = lines(t, files[30])
	l[0] = newSessionID(t, l[0])
	writeFile(t, filepath.Join(dir, "g30b.jsonl"), strings.Join(l, "")+`{"type":"message","id":"tor`)

	var reports, again [2]store.ImportReport
	var stores [2]*store.Store
	var grouped []int
	for i, opts := range []store.ImportOptions{
		store.WithAfterGroup(store.ImportOptions{}, func(n int) { grouped = append(grouped, n) }),
		store.WithoutGroups(store.ImportOptions{}),
	} {
		s := openStore(t)
		mustImport(t, s, []string{files[15]}, store.ImportOptions{})
		reports[i], stores[i] = mustImport(t, s, []string{dir}, opts), s
		// Again: the files unchanged, the torn one still torn.
		again[i] = mustImport(t, s, []string{dir}, opts)
	}
	got, want := summarize(reports[0]), summarize(reports[1])
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report in groups (-alone +grouped):\n%s", diff)
	}
	got, want = summarize(again[0]), summarize(again[1])
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report of the import again (-alone +grouped):\n%s", diff)
	}
	if n := again[0].Count(store.OutcomeUnchanged); n != 41 {
		t.Errorf("import again: %d files unchanged; want the 41 imported whole", n)
	}
	outcomes := map[string]store.Outcome{"g10b.jsonl": store.OutcomeFailed, "g20b.jsonl": store.OutcomeConflict, "g15.jsonl": store.OutcomeUnchanged}
	for _, f := range reports[0].Files {
		wantOutcome, ok := outcomes[filepath.Base(f.Path)]
		if !ok {
			wantOutcome = store.OutcomeNew
		}
		if f.Outcome != wantOutcome {
			t.Errorf("%s: %v (%v); want %v", filepath.Base(f.Path), f.Outcome, f.Err, wantOutcome)
		}
	}
	// Every new file but the torn one (and g20b, whose session the
	// group found taken) went in a group; some groups hold several files.
	if n := sum(grouped); n != 39 || len(grouped) == 0 || slices.Max(grouped) < 2 {
		t.Errorf("groups %v: %d files; want 39 (the 40 gNN files less g15, imported before), several to a group", grouped, n)
	}
	for _, f := range reports[0].Files {
		if f.Outcome == store.OutcomeFailed || f.Outcome == store.OutcomeConflict {
			continue
		}
		a, ha := importRecordOf(t, stores[0], f.Path)
		b, hb := importRecordOf(t, stores[1], f.Path)
		if a != b || ha != hb {
			t.Errorf("%s: record %d bytes %s; alone %d bytes %s", filepath.Base(f.Path), a, ha, b, hb)
		}
		if f.Outcome == store.OutcomeNew {
			st, err := stores[0].OpenSession(ctx, f.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := ids(logOf(t, st)), readIDsMode(t, f.Path, jsonl.Recover); !slices.Equal(got, want) {
				t.Errorf("%s: session holds %v; want %v", filepath.Base(f.Path), got, want)
			}
		}
	}
}

// newSessionID gives a header line another session id: its last digit
// changed.
func newSessionID(t *testing.T, header string) string {
	t.Helper()
	i := strings.Index(header, `"id":"`)
	if i < 0 {
		t.Fatalf("header without an id: %s", header)
	}
	end := i + len(`"id":"`) + strings.IndexByte(header[i+len(`"id":"`):], '"')
	last := "0"
	if header[end-1] == '0' {
		last = "1"
	}
	return header[:end-1] + last + header[end:]
}

func sum(ns []int) int {
	t := 0
	for _, n := range ns {
		t += n
	}
	return t
}

// An import of groups canceled midway keeps the groups it committed,
// whole, and the next import imports the rest: every file once, every
// entry once.
func TestImportGroupsResumeAfterCancel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	// More files than the first three groups hold (16, 32 and 64 files:
	// the one written when the cancel comes, one waiting, one read), so
	// that the canceled import cannot have reported every file: 600
	// dated from groups of 256 files from the first.
	dir, files := groupFolder(t, 120)
	canceled, cancel := context.WithCancel(ctx)
	defer cancel()
	var groups int
	rep, err := s.Import(canceled, []string{dir}, store.WithAfterGroup(store.ImportOptions{}, func(int) {
		if groups++; groups == 1 {
			cancel()
		}
	}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Import() = %v; want context.Canceled", err)
	}
	if len(rep.Files) == 0 || len(rep.Files) == len(files) {
		t.Fatalf("the canceled import reports %d of %d files; want some", len(rep.Files), len(files))
	}
	again := mustImport(t, s, []string{dir}, store.ImportOptions{})
	for i, f := range again.Files {
		want := store.OutcomeNew
		if i < len(rep.Files) {
			want = store.OutcomeUnchanged
		}
		if f.Outcome != want {
			t.Fatalf("%s after the cancel: %v (%v); want %v", filepath.Base(f.Path), f.Outcome, f.Err, want)
		}
	}
	for _, p := range []string{files[0], files[len(rep.Files)-1], files[len(rep.Files)], files[len(files)-1]} {
		id := readHeaderID(t, p)
		st, err := s.OpenSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ids(logOf(t, st)), readIDs(t, p); !slices.Equal(got, want) {
			t.Errorf("%s: session holds %v; want %v", filepath.Base(p), got, want)
		}
	}
	if rep.Entries+again.Entries != countEntries(t, files) {
		t.Errorf("imports added %d + %d entries; want %d, each once", rep.Entries, again.Entries, countEntries(t, files))
	}
}

func readHeaderID(t *testing.T, path string) string {
	t.Helper()
	for r, err := range jsonl.ReadFile(context.Background(), path, jsonl.ReadOptions{Mode: jsonl.Strict}) {
		if err != nil {
			t.Fatal(err)
		}
		if r.Kind == jsonl.KindHeader {
			return r.Header.ID
		}
	}
	t.Fatalf("%s: no header", path)
	return ""
}

func countEntries(t *testing.T, files []string) int {
	n := 0
	for _, f := range files {
		n += len(readIDs(t, f))
	}
	return n
}

// The first group is small, so the writer soon has files to write, and
// each group after it twice as large as the one before, up to 256 files.
func TestImportGroupsGrow(t *testing.T) {
	t.Parallel()
	dir, files := groupFolder(t, 100)
	var grouped []int
	rep := mustImport(t, openStore(t), []string{dir}, store.WithAfterGroup(store.ImportOptions{}, func(n int) { grouped = append(grouped, n) }))
	if rep.Count(store.OutcomeNew) != len(files) {
		t.Fatalf("%d of %d files new", rep.Count(store.OutcomeNew), len(files))
	}
	if want := []int{16, 32, 52}; !slices.Equal(grouped, want) {
		t.Errorf("groups of %v files; want %v", grouped, want)
	}
}
