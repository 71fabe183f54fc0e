package reliability_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/internal/cli"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
)

const (
	hHeader = `{"type":"session","version":3,"id":"0190a000-0000-7000-8000-00000000b0b0","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/hostile"}`
	hTS     = `"timestamp":"2026-01-01T00:00:01.000Z"`
)

// hMsg is a user message line.
func hMsg(id, parent string) string {
	return hEntry("message", id, parent, `"message":{"role":"user","content":"text of `+id+`","timestamp":1}`)
}

// hEntry is an entry line of type typ with the extra fields rest.
func hEntry(typ, id, parent, rest string) string {
	p := "null"
	if parent != "" {
		p = `"` + parent + `"`
	}
	return fmt.Sprintf(`{"type":%q,"id":"%s","parentId":%s,%s,%s}`, typ, id, p, hTS, rest)
}

// hLines joins lines, each with its newline.
func hLines(ls ...string) []byte { return []byte(strings.Join(ls, "\n") + "\n") }

// fileOutcome is what damaged input must give.
type fileOutcome int

const (
	// loads: every mode reads it, nothing to report (a documented
	// recovery, or input that is odd but valid).
	loads fileOutcome = iota
	// skipped: Strict and Recover refuse it with an error at the line;
	// Lenient skips the line with a warning and keeps the rest.
	skipped
	// refused: every mode refuses it with an error at the line.
	refused
	// torn: a torn last line: Strict refuses it, Recover and Lenient load
	// the lines before it and report it.
	torn
)

func (o fileOutcome) String() string { return [...]string{"loads", "skipped", "refused", "torn"}[o] }

// hostileFile is a damaged or hostile session file and what every reader
// of it must do.
type hostileFile struct {
	name    string
	content func() []byte
	outcome fileOutcome
	line    int    // the line blamed (not for loads)
	want    string // in the error or warning
	lenient string // in Lenient mode's warning, when not want
	// imported is in the import's error or problem, when not want (the
	// import checks the tree as it streams, without the whole file).
	imported string
	is       error // the error also matches this (besides ErrCorrupt)
	// batch is what the engine's batch append says to the entries that
	// parse one by one (header and unparsable lines left out): nil
	// accepts them, else the error it matches (a parent missing from a
	// batch is the caller's ErrNotFound, not the file's ErrCorrupt);
	// skipBatch when there is nothing to say.
	batch     error
	skipBatch bool
	// check runs more checks on the session as loaded (outcome loads)
	// from the file and as imported into the store.
	check func(t *testing.T, fromFile, imported sessiontree.Storage)
}

// hostileFiles lists every kind of damaged and hostile session file of
// issue 8, with what must happen.
func hostileFiles() []hostileFile {
	bigLine := pickSize(2<<20, 8<<20, 50<<20)
	bigText := pickSize(128<<10, 512<<10, 50<<20)
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	return []hostileFile{
		{name: "cycle of two", content: func() []byte {
			return hLines(hHeader, hMsg("aaaaaaaa", "bbbbbbbb"), hMsg("bbbbbbbb", "aaaaaaaa"))
		}, outcome: skipped, line: 2, want: "cycle in parent ids: aaaaaaaa -> bbbbbbbb -> aaaaaaaa",
			lenient: "parent bbbbbbbb does not exist before this line", imported: "parent bbbbbbbb does not exist before this line", batch: sessiontree.ErrNotFound},
		{name: "cycle of three after a root", content: func() []byte {
			return hLines(hHeader, hMsg("rrrrrrrr", ""), hMsg("aaaaaaaa", "cccccccc"), hMsg("bbbbbbbb", "aaaaaaaa"), hMsg("cccccccc", "bbbbbbbb"))
		}, outcome: skipped, line: 3, want: "cycle in parent ids", lenient: "parent cccccccc does not exist", imported: "parent cccccccc does not exist", batch: sessiontree.ErrNotFound},
		{name: "missing parent", content: func() []byte {
			return hLines(hHeader, hMsg("aaaaaaaa", ""), hMsg("bbbbbbbb", "zzzzzzzz"), hMsg("cccccccc", "aaaaaaaa"))
		}, outcome: skipped, line: 3, want: "parent zzzzzzzz does not exist", batch: sessiontree.ErrNotFound},
		{name: "parentId equal to own id", content: func() []byte {
			return hLines(hHeader, hMsg("aaaaaaaa", ""), hMsg("bbbbbbbb", "bbbbbbbb"))
		}, outcome: skipped, line: 3, want: "its own parent", imported: "parent bbbbbbbb does not exist", batch: sessiontree.ErrNotFound},
		{name: "identical duplicate lines", content: func() []byte {
			return hLines(hHeader, hMsg("aaaaaaaa", ""), hMsg("bbbbbbbb", "aaaaaaaa"), hMsg("bbbbbbbb", "aaaaaaaa"), hMsg("cccccccc", "bbbbbbbb"))
		}, outcome: skipped, line: 4, want: "duplicate of line 3", imported: "duplicate of an earlier line", batch: sessiontree.ErrCorrupt},
		{name: "conflicting duplicate ids", content: func() []byte {
			return hLines(hHeader, hMsg("aaaaaaaa", ""), hMsg("bbbbbbbb", "aaaaaaaa"), hMsg("aaaaaaaa", "bbbbbbbb"))
		}, outcome: refused, line: 4, want: "duplicate id with different content", batch: sessiontree.ErrCorrupt},
		{name: "label of a missing entry", content: func() []byte {
			return hLines(hHeader, hMsg("aaaaaaaa", ""), hEntry("label", "bbbbbbbb", "aaaaaaaa", `"targetId":"zzzzzzzz","label":"x"`), hMsg("cccccccc", "aaaaaaaa"))
		}, outcome: loads, check: checkLabelOfMissingEntry},
		{name: "leaf entry to a missing entry", content: func() []byte {
			return hLines(hHeader, hMsg("aaaaaaaa", ""), hEntry("leaf", "bbbbbbbb", "aaaaaaaa", `"targetId":"zzzzzzzz"`))
		}, outcome: skipped, line: 3, want: "targetId zzzzzzzz does not exist", batch: sessiontree.ErrNotFound},
		{name: "compaction keeping an entry off its path", content: func() []byte {
			// bbbbbbbb is on another branch: the walk never meets it, so
			// the path goes to the root and the summary stands for all
			// that comes before it (pi's rule, DESIGN.md section 4).
			return hLines(hHeader, hMsg("aaaaaaaa", ""), hMsg("bbbbbbbb", "aaaaaaaa"), hMsg("cccccccc", "aaaaaaaa"),
				hEntry("compaction", "dddddddd", "cccccccc", `"summary":"the summary","firstKeptEntryId":"bbbbbbbb","tokensBefore":10`),
				hMsg("eeeeeeee", "dddddddd"))
		}, outcome: loads, check: checkCompactionOffPath},
		{name: "compaction keeping a missing entry", content: func() []byte {
			return hLines(hHeader, hMsg("aaaaaaaa", ""),
				hEntry("compaction", "dddddddd", "aaaaaaaa", `"summary":"the summary","firstKeptEntryId":"zzzzzzzz","tokensBefore":10`),
				hMsg("eeeeeeee", "dddddddd"))
		}, outcome: loads, check: checkCompactionOffPath},
		{name: fmt.Sprintf("a single line of %d KB (an image)", bigLine>>10), content: func() []byte {
			return hLines(hHeader, hMsg("aaaaaaaa", ""),
				hEntry("message", "bbbbbbbb", "aaaaaaaa", `"message":`+string(imageResult("big", bigLine))),
				hMsg("cccccccc", "bbbbbbbb"))
		}, outcome: loads, check: checkBigLine(bigLine)},
		{name: fmt.Sprintf("a single line of %d KB of text", bigText>>10), content: func() []byte {
			// Text is indexed for search, which costs far more than
			// storing it: the size is kept smaller than the image's.
			return hLines(hHeader, hMsg("aaaaaaaa", ""),
				hEntry("message", "bbbbbbbb", "aaaaaaaa", `"message":{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"text","text":"`+strings.Repeat("log line ", bigText/9)+`"}],"isError":false,"timestamp":1}`),
				hMsg("cccccccc", "bbbbbbbb"))
		}, outcome: loads, check: checkBigLine(bigText / 9 * 9)},
		{name: fmt.Sprintf("a single line of %d KB that is not JSON", bigLine>>10), content: func() []byte {
			return hLines(hHeader, hMsg("aaaaaaaa", ""), `{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa",`+strings.Repeat("x", bigLine), hMsg("cccccccc", "aaaaaaaa"))
		}, outcome: skipped, line: 3, want: "invalid JSON", is: sessiontree.ErrInvalidEntry, skipBatch: true},
		{name: "NUL bytes between tokens", content: func() []byte {
			return hLines(hHeader, hMsg("aaaaaaaa", ""), "\x00\x00"+hMsg("bbbbbbbb", "aaaaaaaa"), hMsg("cccccccc", "aaaaaaaa"))
		}, outcome: skipped, line: 3, want: "invalid JSON", is: sessiontree.ErrInvalidEntry, skipBatch: true},
		{name: "raw NUL byte inside a string", content: func() []byte {
			return hLines(hHeader, hMsg("aaaaaaaa", ""), hEntry("message", "bbbbbbbb", "aaaaaaaa", "\"message\":{\"role\":\"user\",\"content\":\"a\x00b\"}"), hMsg("cccccccc", "aaaaaaaa"))
		}, outcome: skipped, line: 3, want: "invalid JSON", is: sessiontree.ErrInvalidEntry, skipBatch: true},
		{name: "escaped NUL in text and in an id", content: func() []byte {
			return hLines(hHeader, hMsg("aaaaaaaa", ""),
				hEntry("message", `b\u0000b`, "aaaaaaaa", `"message":{"role":"user","content":"nul \u0000 here","timestamp":1}`),
				hMsg("cccccccc", "b\\u0000b"))
		}, outcome: loads, batch: nil, check: checkSameLog},
		{name: "invalid UTF-8 in text", content: func() []byte {
			return hLines(hHeader, hMsg("aaaaaaaa", ""),
				hEntry("message", "bbbbbbbb", "aaaaaaaa", "\"message\":{\"role\":\"user\",\"content\":\"bad \xff\xfe utf8 \xc3\x28\",\"timestamp\":1}"),
				hMsg("cccccccc", "bbbbbbbb"))
		}, outcome: loads, check: checkSameLog},
		{name: "invalid UTF-8 in an id", content: func() []byte {
			return hLines(hHeader, hMsg("aaaaaaaa", ""), hMsg("bb\xffbb", "aaaaaaaa"), hMsg("cccccccc", "bb\xffbb"))
		}, outcome: loads, check: checkSameLog},
		{name: "JSON nested 20,000 deep", content: func() []byte {
			return hLines(hHeader, hMsg("aaaaaaaa", ""), hEntry("custom", "bbbbbbbb", "aaaaaaaa", `"customType":"x","data":`+deep(20000)), hMsg("cccccccc", "aaaaaaaa"))
		}, outcome: skipped, line: 3, want: "nesting deeper than", is: sessiontree.ErrInvalidEntry, skipBatch: true},
		{name: "a message nested 1,000 deep (the limit)", content: func() []byte {
			// The entry and its message are two levels of the 1000.
			return hLines(hHeader, hMsg("aaaaaaaa", ""),
				hEntry("message", "bbbbbbbb", "aaaaaaaa", `"message":{"role":"user","content":"deep","details":`+deep(998)+`,"timestamp":1}`),
				hMsg("cccccccc", "bbbbbbbb"))
		}, outcome: loads, check: checkSameLog},
		{name: "a message nested 1,001 deep", content: func() []byte {
			// SQLite's JSON functions, which index messages for search,
			// refuse it: it is refused everywhere, as invalid.
			return hLines(hHeader, hMsg("aaaaaaaa", ""),
				hEntry("message", "bbbbbbbb", "aaaaaaaa", `"message":{"role":"user","content":"deep","details":`+deep(999)+`,"timestamp":1}`),
				hMsg("cccccccc", "aaaaaaaa"))
		}, outcome: skipped, line: 3, want: "nesting deeper than 1000", is: sessiontree.ErrInvalidEntry, skipBatch: true},
		{name: "header version 4", content: func() []byte {
			return hLines(strings.Replace(hHeader, `"version":3`, `"version":4`, 1), hMsg("aaaaaaaa", ""))
		}, outcome: refused, line: 1, want: "version 4 is newer than 3", is: jsonl.ErrUnsupportedVersion, skipBatch: true},
		{name: "header version 99", content: func() []byte {
			return hLines(strings.Replace(hHeader, `"version":3`, `"version":99`, 1), hMsg("aaaaaaaa", ""))
		}, outcome: refused, line: 1, want: "unsupported session file version", is: jsonl.ErrUnsupportedVersion, skipBatch: true},
		{name: "header version 1e9", content: func() []byte {
			return hLines(strings.Replace(hHeader, `"version":3`, `"version":1e9`, 1), hMsg("aaaaaaaa", ""))
		}, outcome: refused, line: 1, want: "unsupported session file version", is: jsonl.ErrUnsupportedVersion, skipBatch: true},
		{name: "garbage after the header", content: func() []byte {
			junk := make([]byte, 64<<10)
			for i := range junk {
				junk[i] = byte(i*7 + i>>8)
			}
			return append(hLines(hHeader), junk...)
		}, outcome: skipped, line: 2, want: "", skipBatch: true},
		{name: "torn last line", content: func() []byte {
			return append(hLines(hHeader, hMsg("aaaaaaaa", "")), hMsg("bbbbbbbb", "aaaaaaaa")[:40]...)
		}, outcome: torn, line: 3, want: "torn", skipBatch: true},
		{name: "no header at all", content: func() []byte {
			return hLines(hMsg("aaaaaaaa", ""))
		}, outcome: refused, line: 1, want: "missing header", skipBatch: true},
		{name: "empty file", content: func() []byte { return nil }, outcome: refused, line: 1, want: "empty file", skipBatch: true},
	}
}

// checkLabelOfMissingEntry: the label entry is kept, as pi keeps it, and
// labels nothing; the entry after it is there too.
func checkLabelOfMissingEntry(t *testing.T, fromFile, imported sessiontree.Storage) {
	ctx := context.Background()
	for _, st := range []sessiontree.Storage{fromFile, imported} {
		if labels, err := st.Labels(ctx); err != nil || len(labels) != 0 {
			t.Errorf("%T: Labels() = %v, %v; want none", st, labels, err)
		}
		if _, err := st.Entry(ctx, "bbbbbbbb"); err != nil {
			t.Errorf("%T: Entry(bbbbbbbb) = %v; want the label entry kept", st, err)
		}
	}
	checkSameLog(t, fromFile, imported)
}

// checkCompactionOffPath: the file, the store and the memory backend
// give the same context: the summary, then what follows the compaction.
func checkCompactionOffPath(t *testing.T, fromFile, imported sessiontree.Storage) {
	ctx := context.Background()
	for _, st := range []sessiontree.Storage{fromFile, imported} {
		c, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).Context(ctx, sessiontree.ContextOptions{})
		if err != nil {
			t.Fatalf("%T: Context() = %v", st, err)
		}
		if len(c.Messages) != 2 || !bytes.Contains(c.Messages[0], []byte(`"the summary"`)) || !bytes.Contains(c.Messages[1], []byte("text of eeeeeeee")) {
			t.Errorf("%T: context = %s; want the summary and eeeeeeee", st, c.Messages)
		}
	}
	checkSameLog(t, fromFile, imported)
}

// checkBigLine: the big line comes back whole, in the context too.
func checkBigLine(size int) func(t *testing.T, fromFile, imported sessiontree.Storage) {
	return func(t *testing.T, fromFile, imported sessiontree.Storage) {
		ctx := context.Background()
		for _, st := range []sessiontree.Storage{fromFile, imported} {
			e, err := st.Entry(ctx, "bbbbbbbb")
			if err != nil || len(e.Raw) < size {
				t.Fatalf("%T: Entry(bbbbbbbb) has %d bytes, %v; want the whole line", st, len(e.Raw), err)
			}
			c, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).Context(ctx, sessiontree.ContextOptions{})
			if err != nil || len(c.Messages) != 3 || len(c.Messages[1]) < size {
				t.Fatalf("%T: context of %d messages, %v; want 3 with the big one", st, len(c.Messages), err)
			}
		}
		checkSameLog(t, fromFile, imported)
	}
}

// checkSameLog: the store holds exactly what the file holds, byte for
// byte, and the same context.
func checkSameLog(t *testing.T, fromFile, imported sessiontree.Storage) {
	ctx := context.Background()
	a, b := logOf(t, fromFile), logOf(t, imported)
	if len(a) != len(b) {
		t.Fatalf("file has %d entries, store %d", len(a), len(b))
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].ParentID != b[i].ParentID || !bytes.Equal(a[i].Raw, b[i].Raw) {
			t.Fatalf("entry %d differs between file and store:\n%q\n%q", i+1, head(a[i].Raw), head(b[i].Raw))
		}
	}
	ca, err := sessiontree.NewSession(fromFile, sessiontree.SessionOptions{}).Context(ctx, sessiontree.ContextOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cb, err := sessiontree.NewSession(imported, sessiontree.SessionOptions{}).Context(ctx, sessiontree.ContextOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ca.Messages) != len(cb.Messages) {
		t.Fatalf("context: %d messages from the file, %d from the store", len(ca.Messages), len(cb.Messages))
	}
	for i := range ca.Messages {
		if !bytes.Equal(ca.Messages[i], cb.Messages[i]) {
			t.Fatalf("context message %d differs between file and store", i)
		}
	}
}

func head(b []byte) []byte {
	if len(b) > 300 {
		return b[:300]
	}
	return b
}

// hostileBudget runs fn with a timeout, turning a panic into an error and
// reporting the bytes it allocated: a hang, a panic or an allocation of
// more than limit bytes fails the test.
func hostileBudget(t *testing.T, what string, limit uint64, fn func() error) error {
	t.Helper()
	type result struct{ err error }
	done := make(chan result, 1)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{fmt.Errorf("panic: %v\n%s", r, debug.Stack())}
			}
		}()
		done <- result{fn()}
	}()
	select {
	case r := <-done:
		runtime.ReadMemStats(&after)
		if r.err != nil && strings.HasPrefix(r.err.Error(), "panic: ") {
			t.Fatalf("%s: %v", what, r.err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > limit {
			t.Errorf("%s allocated %d MB; want at most %d MB", what, alloc>>20, limit>>20)
		}
		return r.err
	case <-time.After(pick[time.Duration](30, 60, 300) * time.Second):
		t.Fatalf("%s did not return: a hang", what)
	}
	return nil
}

// TestHostileFiles feeds every damaged and hostile session file of
// hostileFiles to everything that reads session files: the JSONL backend
// in each mode (read-only and for writing), the store's import in
// Recover and Lenient mode, the engine's batch append, the file check of
// `sessiontree check` and the command itself. Each must give the expected
// clear error naming the file and line, or the documented recovery; none
// may panic, hang, allocate without bound or change the file.
func TestHostileFiles(t *testing.T) {
	var reads atomic.Int64
	t.Cleanup(func() { t.Logf("%d damaged files, %d reads of them", len(hostileFiles()), reads.Load()) })
	for _, hf := range hostileFiles() {
		t.Run(hf.name, func(t *testing.T) {
			content := hf.content()
			// Allocation is measured for the whole process: the big inputs
			// run alone, first; the small ones then run in parallel.
			if len(content) < 1<<20 {
				t.Parallel()
			}
			reads.Add(int64(runHostileFile(t, hf, content)))
		})
	}
}

func runHostileFile(t *testing.T, hf hostileFile, content []byte) (reads int) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "hostile.jsonl")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	limit := uint64(24*len(content)) + 64<<20

	// The JSONL backend, in every mode, read-only and for writing.
	var fromFile *jsonl.Storage
	for _, mode := range []jsonl.Mode{jsonl.Strict, jsonl.Recover, jsonl.Lenient} {
		for _, ro := range []bool{true, false} {
			what := fmt.Sprintf("jsonl.Open(%v, read-only %v)", mode, ro)
			var st *jsonl.Storage
			err := hostileBudget(t, what, limit, func() (err error) {
				st, err = jsonl.Open(ctx, path, jsonl.Options{Mode: mode, ReadOnly: ro})
				return err
			})
			reads++
			fails := hf.outcome == refused || hf.outcome == skipped && mode != jsonl.Lenient || hf.outcome == torn && mode == jsonl.Strict
			if fails {
				if err == nil {
					st.Close()
					t.Fatalf("%s succeeded; want an error at line %d", what, hf.line)
				}
				checkLineError(t, what, err, path, hf.line, hf.want, hf.is)
				continue
			}
			if err != nil {
				t.Fatalf("%s = %v; want it to load", what, err)
			}
			r := st.Report()
			switch {
			case hf.outcome == loads && (len(r.Warnings) != 0 || r.Torn != nil):
				t.Errorf("%s reports %v; want nothing", what, r.Warnings)
			case hf.outcome == skipped || hf.outcome == torn:
				want := hf.want
				if hf.lenient != "" && mode == jsonl.Lenient {
					want = hf.lenient
				}
				if len(r.Warnings) == 0 {
					t.Fatalf("%s reports nothing; want a warning at line %d", what, hf.line)
				}
				checkLineError(t, what+" warning", r.Warnings[0], path, hf.line, want, nil)
			}
			if ro && fromFile == nil {
				fromFile = st
				defer st.Close()
			} else {
				st.Close()
			}
		}
	}
	// Opening, for writing too, never changes a damaged file (a torn
	// tail is cut only by the first append, after its sidecar).
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("the file changed: %v", err)
	}

	// The store's import, in Recover and Lenient mode.
	// One store for both, the first import's session deleted before the
	// second (with its import record).
	s := openStore(t, filepath.Join(dir, "import.db"), store.Options{})
	var imported sessiontree.DatabaseSession
	for _, mode := range []jsonl.Mode{jsonl.Recover, jsonl.Lenient} {
		what := fmt.Sprintf("Import(%v)", mode)
		var rep store.ImportReport
		err := hostileBudget(t, what, limit+uint64(8*len(content)), func() (err error) {
			rep, err = s.Import(ctx, []string{path}, store.ImportOptions{Mode: mode})
			return err
		})
		reads++
		if err != nil || len(rep.Files) != 1 {
			t.Fatalf("%s = %+v, %v; want one file's result", what, rep, err)
		}
		res := rep.Files[0]
		iwant := hf.want
		if mode == jsonl.Lenient && hf.lenient != "" {
			iwant = hf.lenient
		}
		if hf.imported != "" {
			iwant = hf.imported
		}
		if hf.outcome == torn {
			iwant = ""
		}
		fails := hf.outcome == refused || hf.outcome == skipped && mode != jsonl.Lenient
		if fails {
			if res.Outcome != store.OutcomeFailed {
				t.Fatalf("%s outcome %v; want failed at line %d", what, res.Outcome, hf.line)
			}
			checkLineError(t, what, res.Err, path, hf.line, iwant, hf.is)
			if page, err := s.List(ctx, store.ListOptions{}); err != nil || len(page.Sessions) != 0 {
				t.Fatalf("%s failed but left sessions %v", what, page.Sessions)
			}
			continue
		}
		if res.Outcome != store.OutcomeNew {
			t.Fatalf("%s outcome %v (%v); want new", what, res.Outcome, res.Err)
		}
		if hf.outcome != loads {
			if len(res.Problems) == 0 {
				t.Fatalf("%s reports no problem; want one at line %d", what, hf.line)
			}
			checkLineError(t, what+" problem", res.Problems[0], path, hf.line, iwant, nil)
		}
		st, err := s.OpenSession(ctx, res.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		imported = st
		if fromFile != nil && (hf.outcome == loads || mode == jsonl.Lenient) {
			// The store and the file agree on what was read, in the mode
			// the file was read in.
			lf := logOf(t, fromFile)
			li := logOf(t, st)
			if hf.outcome == loads || hf.outcome == torn {
				if diff := cmp.Diff(ids(lf), ids(li)); diff != "" {
					t.Errorf("%s: ids differ from the file's (-file +store):\n%s", what, diff)
				}
			}
		}
		if mode == jsonl.Recover {
			if err := s.Check(ctx, ""); err != nil {
				t.Fatalf("Check() after %s = %v", what, err)
			}
			if n, err := s.Delete(ctx, res.SessionID); n != 1 || err != nil {
				t.Fatalf("Delete = %d, %v", n, err)
			}
		}
	}
	if hf.check != nil && hf.outcome == loads {
		hf.check(t, fromFile, imported)
	}

	// The engine's batch append, given the entries that parse one by one.
	if !hf.skipBatch {
		reads++
		checkBatch(t, s.DB(), content, hf.batch)
	}

	// `sessiontree check FILE`: the library function, then the command.
	var problems []error
	err := hostileBudget(t, "CheckFile", limit, func() (err error) {
		problems, err = cli.CheckFile(ctx, path)
		return err
	})
	reads++
	if err != nil {
		t.Fatalf("CheckFile = %v", err)
	}
	r := runCLI(t, "", "check", path)
	reads++
	if hf.outcome == loads {
		if len(problems) != 0 || r.code != 0 {
			t.Errorf("check of a good file: %v; command exit %d %s", problems, r.code, r.stdout)
		}
	} else {
		if len(problems) == 0 {
			t.Fatalf("CheckFile found nothing; want a problem at line %d", hf.line)
		}
		loc := fmt.Sprintf("%s:%d:", path, hf.line)
		if !strings.Contains(problems[0].Error(), loc) {
			t.Errorf("CheckFile problem %q; want it at %s", problems[0], loc)
		}
		if r.code != 1 || !strings.Contains(r.stdout, loc) {
			t.Errorf("sessiontree check: exit %d, stdout %q; want 1 and a problem at %s", r.code, r.stdout, loc)
		}
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("the file changed: %v", err)
	}
	return reads
}

func ids(log []sessiontree.Entry) []string {
	out := make([]string, len(log))
	for i, e := range log {
		out[i] = e.ID
	}
	return out
}

// checkLineError checks that err is a *jsonl.LineError at path:line,
// matching ErrCorrupt (and is, when given) and mentioning want.
func checkLineError(t *testing.T, what string, err error, path string, line int, want string, is error) {
	t.Helper()
	var le *jsonl.LineError
	if !errors.As(err, &le) {
		t.Fatalf("%s error %v (%T) is not a *jsonl.LineError", what, err, err)
	}
	if le.Path != path || le.Line != line {
		t.Errorf("%s error at %s:%d; want %s:%d (%v)", what, le.Path, le.Line, path, line, err)
	}
	if !errors.Is(err, sessiontree.ErrCorrupt) {
		t.Errorf("%s error %v does not match ErrCorrupt", what, err)
	}
	if is != nil && !errors.Is(err, is) {
		t.Errorf("%s error %v does not match %v", what, err, is)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("%s error %q; want it to mention %q", what, err, want)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("%s:%d:", path, line)) {
		t.Errorf("%s error %q does not name %s:%d", what, err, path, line)
	}
}

// checkBatch gives the engine's batch append the entries of content that
// parse one by one, and checks that it accepts them (want nil) or refuses
// them all with want, keeping nothing.
func checkBatch(t *testing.T, db *engine.DB, content []byte, want error) {
	t.Helper()
	ctx := context.Background()
	var entries []sessiontree.Entry
	for i, line := range bytes.Split(content, []byte("\n")) {
		if i == 0 || len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if e, err := jsonl.ParseLine(line); err == nil {
			entries = append(entries, e)
		}
	}
	st, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/batch"})
	if err != nil {
		t.Fatal(err)
	}
	err = hostileBudget(t, "AppendBatch", uint64(16*len(content))+64<<20, func() error { return st.AppendBatch(ctx, entries) })
	switch {
	case want == nil && err != nil:
		t.Errorf("AppendBatch = %v; want the entries accepted", err)
	case want != nil && !errors.Is(err, want):
		t.Errorf("AppendBatch = %v; want %v", err, want)
	}
	n := len(logOf(t, st))
	if want != nil && n != 0 {
		t.Errorf("a refused batch left %d entries", n)
	}
	if want == nil && n != len(entries) {
		t.Errorf("AppendBatch kept %d of %d entries", n, len(entries))
	}
	if err := db.Check(ctx, st.ID()); err != nil {
		t.Errorf("Check() after AppendBatch = %v", err)
	}
}

// hostileDB is a damaged or foreign database file and what opening it
// must do.
type hostileDB struct {
	name string
	// make writes the file into dir and returns its path.
	make func(t *testing.T, dir string) string
	// open is what Open must return (nil: it opens); when it refuses, the
	// file must be unchanged.
	open error
	// check is what Check must return once open.
	check error
	// then runs more checks on the opened database.
	then func(t *testing.T, s *store.Store)
}

// validDB makes a database with one session of a few entries, closed
// and checkpointed, and returns its path and the session id.
func validDB(t *testing.T, dir, name string) (string, string) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(dir, name)
	s, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Create(ctx, store.CreateOptions{Cwd: "/valid"})
	if err != nil {
		t.Fatal(err)
	}
	sess := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	for i := range 50 {
		if _, err := sess.AppendMessage(ctx, userMessage(fmt.Sprintf("message %d %s", i, strings.Repeat("padding ", 100)))); err != nil {
			t.Fatal(err)
		}
	}
	id := st.ID()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path, id
}

// rawSQL runs statements on a database file behind the engine's back,
// as another program or bit rot would.
func rawSQL(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// reseal gives the entries rows of a database file that match where
// the checksum of their JSON as it is now (sessiontree.EntryChecksum), behind
// the engine's back, so that damage written with rawSQL is seen for what
// it does to the tree rather than as a changed row. The append-only
// trigger must have been dropped.
func reseal(t *testing.T, path, where string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT pk, CAST(raw AS BLOB) FROM entries WHERE ` + where)
	if err != nil {
		t.Fatal(err)
	}
	sums := map[int64]int64{}
	for rows.Next() {
		var pk int64
		var raw []byte
		if err := rows.Scan(&pk, &raw); err != nil {
			t.Fatal(err)
		}
		sums[pk] = sessiontree.EntryChecksum(raw)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if len(sums) == 0 {
		t.Fatalf("reseal: no entries where %s", where)
	}
	for pk, sum := range sums {
		if _, err := db.Exec(`UPDATE entries SET checksum = ? WHERE pk = ?`, sum, pk); err != nil {
			t.Fatal(err)
		}
	}
}

func hostileDBs() []hostileDB {
	return []hostileDB{
		{name: "garbage file", make: func(t *testing.T, dir string) string {
			path := filepath.Join(dir, "garbage.db")
			writeFile(t, path, bytes.Repeat([]byte("this is not a database\x00\xff"), 4000))
			return path
		}, open: engine.ErrNotDatabase},
		{name: "SQLite header then garbage", make: func(t *testing.T, dir string) string {
			path := filepath.Join(dir, "fake.db")
			writeFile(t, path, append([]byte("SQLite format 3\x00"), bytes.Repeat([]byte{0xA5}, 8192)...))
			return path
		}, open: engine.ErrForeign}, // its header's application_id is garbage
		{name: "truncated to its first page", make: func(t *testing.T, dir string) string {
			path, _ := validDB(t, dir, "trunc1.db")
			truncate(t, path, 4096)
			return path
		}, open: sessiontree.ErrCorrupt},
		{name: "truncated to half", make: func(t *testing.T, dir string) string {
			path, _ := validDB(t, dir, "trunc2.db")
			fi, _ := os.Stat(path)
			truncate(t, path, fi.Size()/2)
			return path
		}, open: sessiontree.ErrCorrupt},
		{name: "pages overwritten with garbage", make: func(t *testing.T, dir string) string {
			path, _ := validDB(t, dir, "smashed.db")
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fi, _ := f.Stat()
			junk := bytes.Repeat([]byte{0x5A, 0xC3}, 4096)
			for off := int64(4 * 4096); off < fi.Size(); off += 5 * 4096 {
				if _, err := f.WriteAt(junk, off); err != nil {
					t.Fatal(err)
				}
			}
			return path
		}, open: sessiontree.ErrCorrupt},
		{name: "a WAL file of garbage", make: func(t *testing.T, dir string) string {
			path, _ := validDB(t, dir, "wal.db")
			writeFile(t, path+"-wal", bytes.Repeat([]byte("torn wal frame "), 3000))
			return path
		}, open: nil, check: nil},
		{name: "from the future (user_version)", make: func(t *testing.T, dir string) string {
			path, _ := validDB(t, dir, "future.db")
			rawSQL(t, path, `PRAGMA user_version = 99`)
			return path
		}, open: engine.ErrNewer},
		{name: "from the future (a newer migration applied)", make: func(t *testing.T, dir string) string {
			path, _ := validDB(t, dir, "future2.db")
			rawSQL(t, path, `INSERT INTO schema_migrations VALUES (99, '0099_future.sql', 'x', '2030-01-01T00:00:00.000Z')`)
			return path
		}, open: engine.ErrNewer},
		{name: "another program's SQLite database", make: func(t *testing.T, dir string) string {
			path := filepath.Join(dir, "other.db")
			rawSQL(t, path, `CREATE TABLE notes (x)`, `INSERT INTO notes VALUES ('mine')`)
			return path
		}, open: engine.ErrForeign},
		{name: "empty file", make: func(t *testing.T, dir string) string {
			path := filepath.Join(dir, "empty.db")
			writeFile(t, path, nil)
			return path
		}, open: nil, check: nil},
		{name: "a cycle in parent ids", make: func(t *testing.T, dir string) string {
			path, id := validDB(t, dir, "cycle.db")
			// The leaf moves back to entry 2, so that entries 3 to 50 are
			// off the active branch and their paths are walked through
			// parent ids. Then entry 3's parent becomes entry 10, column
			// and JSON alike, behind the append-only trigger's back.
			moveLeafTo(t, path, id, 2)
			rawSQL(t, path, `DROP TRIGGER entries_no_update`,
				`UPDATE entries SET parent_id = (SELECT id FROM entries WHERE seq = 10), parent_pk = (SELECT pk FROM entries WHERE seq = 10),
					raw = json_set(raw, '$.parentId', (SELECT id FROM entries WHERE seq = 10)) WHERE seq = 3`)
			reseal(t, path, "seq = 3")
			return path
		}, open: nil, check: sessiontree.ErrCorrupt, then: checkCycleBounded},
		{name: "a missing parent", make: func(t *testing.T, dir string) string {
			path, _ := validDB(t, dir, "orphan.db")
			rawSQL(t, path, `DROP TRIGGER entries_no_update`,
				`UPDATE entries SET parent_id = 'zzzzzzzz', parent_pk = NULL, raw = json_set(raw, '$.parentId', 'zzzzzzzz') WHERE seq = 5`)
			reseal(t, path, "seq = 5")
			return path
		}, open: nil, check: sessiontree.ErrCorrupt},
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func truncate(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// moveLeafTo moves the leaf of session id to its entry of sequence seq.
func moveLeafTo(t *testing.T, path, id string, seq int) {
	t.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, err := s.OpenSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	log := logOf(t, st)
	if _, err := st.SetLeaf(ctx, log[seq-1].ID, sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
}

// checkCycleBounded: paths from entries in or below the cycle, off the
// active branch, fail with ErrCorrupt instead of looping.
func checkCycleBounded(t *testing.T, s *store.Store) {
	ctx := context.Background()
	page, err := s.List(ctx, store.ListOptions{})
	if err != nil || len(page.Sessions) != 1 {
		t.Fatalf("List() = %v, %v", page, err)
	}
	st, err := s.OpenSession(ctx, page.Sessions[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	log := logOf(t, st)
	for _, seq := range []int{3, 7, 10} {
		e := log[seq-1]
		for _, full := range []bool{false, true} {
			err := hostileBudget(t, "path from "+e.ID, 256<<20, func() error {
				var err error
				if full {
					_, err = st.FullPath(ctx, e.ID)
				} else {
					_, err = st.Path(ctx, e.ID)
				}
				return err
			})
			if !errors.Is(err, sessiontree.ErrCorrupt) {
				t.Errorf("path from entry %d (full %v) = %v; want ErrCorrupt", seq, full, err)
			}
		}
	}
}

// TestHostileDatabases opens damaged, foreign and future database files
// with the store (and so the engine) and the command line: each is refused
// with its error and left byte for byte as it was, or opens and Check
// reports the damage; none panics or hangs.
func TestHostileDatabases(t *testing.T) {
	for _, hd := range hostileDBs() {
		t.Run(hd.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			path := hd.make(t, dir)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var s *store.Store
			err = hostileBudget(t, "store.Open", 256<<20, func() (err error) {
				s, err = store.Open(ctx, path, store.Options{})
				return err
			})
			if hd.open != nil {
				if err == nil {
					s.Close()
					t.Fatalf("Open = nil; want %v", hd.open)
				}
				if !errors.Is(err, hd.open) {
					t.Fatalf("Open = %v; want %v", err, hd.open)
				}
				t.Logf("refused: %v", err)
				if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
					t.Errorf("a refused Open changed the file")
				}
				r := runCLI(t, "", "--db", path, "ls")
				if r.code != 1 || !strings.Contains(r.stderr, path) {
					t.Errorf("sessiontree ls: exit %d, stderr %q; want 1 and an error naming the file", r.code, r.stderr)
				}
				if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
					t.Errorf("the command changed the refused file")
				}
				return
			}
			if err != nil {
				t.Fatalf("Open = %v; want it to open", err)
			}
			defer s.Close()
			err = hostileBudget(t, "Check", 256<<20, func() error { return s.Check(ctx, "") })
			t.Logf("opened; Check() = %v", err)
			if hd.check == nil && err != nil || hd.check != nil && !errors.Is(err, hd.check) {
				t.Errorf("Check = %v; want %v", err, hd.check)
			}
			if hd.then != nil {
				hd.then(t, s)
			}
			r := runCLI(t, "", "--db", path, "check")
			if wantCode := map[bool]int{true: 0, false: 1}[hd.check == nil]; r.code != wantCode {
				t.Errorf("sessiontree check: exit %d; want %d\n%s%s", r.code, wantCode, r.stdout, r.stderr)
			}
		})
	}
}
