package jsonl_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
)

const ts = `"timestamp":"2026-01-01T00:00:01.000Z"`

// badFiles are damaged session files: each must fail to open with a
// *LineError at line, mentioning want, matching ErrCorrupt (and
// ErrInvalidEntry when invalid). In Lenient mode the line is skipped
// unless fatal (a header problem, or a duplicate id with other content).
var badFiles = []struct {
	name    string
	content string
	line    int
	want    string
	invalid bool // also matches ErrInvalidEntry
	fatal   bool // refused in Lenient mode too
	// torn: a torn line that a later newline ended, skipped in Recover
	// mode too, with the lenient warning.
	torn  bool
	other error
	// lenient is what the warning says in Lenient mode, when not want.
	lenient string
}{
	{name: "empty file", content: "", line: 1, want: "empty file", fatal: true},
	{name: "blank lines only", content: "\n  \n", line: 3, want: "empty file", fatal: true},
	{name: "no header", content: lines(msg("aaaaaaaa", "")), line: 1, want: "missing header", fatal: true},
	{name: "header not JSON", content: lines(`{"type":"session",`, msg("aaaaaaaa", "")), line: 1, want: "malformed header", fatal: true},
	{name: "header not an object", content: lines(`["session"]`), line: 1, want: "malformed header", fatal: true},
	{name: "header without id", content: lines(`{"type":"session","version":3,` + ts + `}`), line: 1, want: `missing "id"`, fatal: true},
	{name: "header without timestamp", content: lines(`{"type":"session","version":3,"id":"x"}`), line: 1, want: `missing "timestamp"`, fatal: true},
	{name: "header id not a string", content: lines(`{"type":"session","id":7,` + ts + `}`), line: 1, want: `"id" must be a string`, fatal: true},
	{name: "version not a number", content: lines(`{"type":"session","version":"3","id":"x",` + ts + `}`), line: 1, want: `"version" must be a number`, fatal: true},
	{name: "version 4", content: lines(`{"type":"session","version":4,"id":"x",`+ts+`}`, msg("aaaaaaaa", "")), line: 1,
		want: "version 4 is newer than 3", fatal: true, other: jsonl.ErrUnsupportedVersion},
	{name: "version 2.5", content: lines(`{"type":"session","version":2.5,"id":"x",` + ts + `}`), line: 1,
		want: "unsupported session file version", fatal: true, other: jsonl.ErrUnsupportedVersion},
	{name: "line not JSON", content: lines(testHeader, msg("aaaaaaaa", ""), "this is not json", msg("bbbbbbbb", "aaaaaaaa")), line: 3,
		want: "invalid JSON", invalid: true},
	{name: "line is a JSON array", content: lines(testHeader, `[1,2]`), line: 2, want: "want an object", invalid: true},
	{name: "entry without type", content: lines(testHeader, `{"id":"aaaaaaaa","parentId":null,`+ts+`}`), line: 2,
		want: `missing "type"`, invalid: true},
	{name: "entry without id", content: lines(testHeader, `{"type":"custom","parentId":null,`+ts+`,"customType":"x"}`), line: 2,
		want: `without "id"`, invalid: true},
	{name: "entry without timestamp", content: lines(testHeader, `{"type":"custom","id":"aaaaaaaa","parentId":null,"customType":"x"}`), line: 2,
		want: `missing "timestamp"`, invalid: true},
	{name: "second header", content: lines(testHeader, msg("aaaaaaaa", ""), `{"type":"session","id":"zz","parentId":null,`+ts+`}`), line: 3,
		want: "second session header", invalid: true},
	{name: "parentId a number", content: lines(testHeader, `{"type":"custom","id":"aaaaaaaa","parentId":42,`+ts+`,"customType":"x"}`), line: 2,
		want: `"parentId" must be a string`, invalid: true},
	{name: "parentId empty", content: lines(testHeader, `{"type":"custom","id":"aaaaaaaa","parentId":"",`+ts+`,"customType":"x"}`), line: 2,
		want: `"parentId" must be null or a non-empty id`, invalid: true},
	{name: "label without targetId", content: lines(testHeader, msg("aaaaaaaa", ""), `{"type":"label","id":"bbbbbbbb","parentId":"aaaaaaaa",`+ts+`,"label":"x"}`), line: 3,
		want: `label entry without "targetId"`, invalid: true},
	{name: "leaf targetId a number", content: lines(testHeader, msg("aaaaaaaa", ""), `{"type":"leaf","id":"bbbbbbbb","parentId":"aaaaaaaa",`+ts+`,"targetId":5}`), line: 3,
		want: `"targetId" must be a string`, invalid: true},
	{name: "leaf targetId missing entry", content: lines(testHeader, msg("aaaaaaaa", ""), `{"type":"leaf","id":"bbbbbbbb","parentId":"aaaaaaaa",`+ts+`,"targetId":"cccccccc"}`), line: 3,
		want: "targetId cccccccc does not exist"},
	{name: "message without message", content: lines(testHeader, `{"type":"message","id":"aaaaaaaa","parentId":null,`+ts+`}`), line: 2,
		want: `message entry without "message"`, invalid: true},
	{name: "identical duplicate", content: lines(testHeader, msg("aaaaaaaa", ""), msg("bbbbbbbb", "aaaaaaaa"), msg("aaaaaaaa", "")), line: 4,
		want: "duplicate of line 2"},
	{name: "conflicting duplicate", content: lines(testHeader, msg("aaaaaaaa", ""), msg("bbbbbbbb", "aaaaaaaa"), msg("aaaaaaaa", "bbbbbbbb")), line: 4,
		want: "duplicate id with different content (first at line 2)", fatal: true},
	{name: "missing parent", content: lines(testHeader, msg("aaaaaaaa", ""), msg("bbbbbbbb", "zzzzzzzz"), msg("cccccccc", "aaaaaaaa")), line: 3,
		want: "parent zzzzzzzz does not exist"},
	{name: "cycle", content: lines(testHeader, msg("aaaaaaaa", "bbbbbbbb"), msg("bbbbbbbb", "aaaaaaaa")), line: 2,
		want: "cycle in parent ids: aaaaaaaa -> bbbbbbbb -> aaaaaaaa", lenient: "parent bbbbbbbb does not exist before this line"},
	{name: "longer cycle after a root", content: lines(testHeader, msg("rrrrrrrr", ""), msg("aaaaaaaa", "cccccccc"), msg("bbbbbbbb", "aaaaaaaa"), msg("cccccccc", "bbbbbbbb")), line: 3,
		want: "cycle in parent ids: aaaaaaaa -> cccccccc -> bbbbbbbb -> aaaaaaaa", lenient: "parent cccccccc does not exist before this line"},
	{name: "own parent", content: lines(testHeader, msg("aaaaaaaa", "aaaaaaaa")), line: 2, want: "its own parent"},
	{name: "parent after child", content: lines(testHeader, msg("bbbbbbbb", "aaaaaaaa"), msg("aaaaaaaa", "")), line: 2,
		want: "parent aaaaaaaa comes after its child, at line 3", lenient: "parent aaaaaaaa does not exist before this line"},
	{name: "torn line in the middle", content: lines(testHeader, msg("aaaaaaaa", ""), `{"type":"message","id":"bbbb`, msg("cccccccc", "aaaaaaaa")), line: 3,
		want: "invalid JSON", invalid: true, torn: true, lenient: "torn line: 28 bytes of an entry cut short"},
	{name: "NUL bytes in the middle", content: lines(testHeader, msg("aaaaaaaa", ""), "\x00\x00\x00", msg("cccccccc", "aaaaaaaa")), line: 3,
		want: "invalid JSON", invalid: true, torn: true, lenient: "torn line: 3 bytes"},
	{name: "merge marker in the middle", content: lines(testHeader, msg("aaaaaaaa", ""), "<<<<<<< HEAD", msg("cccccccc", "aaaaaaaa")), line: 3,
		want: "invalid JSON", invalid: true},
	// JSON's white space is space, tab, CR and LF: pi's JSON.parse
	// refuses a line with any other (a no-break space, a form feed)
	// around the JSON, and skips it.
	{name: "no-break space after an entry", content: lines(testHeader, msg("aaaaaaaa", ""), msg("bbbbbbbb", "aaaaaaaa")+"\u00a0", msg("cccccccc", "aaaaaaaa")), line: 3,
		want: "invalid JSON", invalid: true},
	{name: "form feed before an entry", content: lines(testHeader, msg("aaaaaaaa", ""), "\f"+msg("bbbbbbbb", "aaaaaaaa"), msg("cccccccc", "aaaaaaaa")), line: 3,
		want: "invalid JSON", invalid: true},
	{name: "no-break space after the header", content: lines(testHeader+"\u00a0", msg("aaaaaaaa", "")), line: 1, want: "malformed header", fatal: true},
	{name: "JSON cut short but for a brace", content: lines(testHeader, msg("aaaaaaaa", ""), `{"type":"message","id":"bbbb"}}`, msg("cccccccc", "aaaaaaaa")), line: 3,
		want: "invalid JSON", invalid: true},
	{name: "deep nesting", content: lines(testHeader, `{"type":"custom","id":"aaaaaaaa","parentId":null,`+ts+`,"customType":"x","data":`+strings.Repeat("[", 20000)+strings.Repeat("]", 20000)+`}`), line: 2,
		want: "nesting deeper than", invalid: true},
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	for _, tt := range badFiles {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.content)
			for _, mode := range []jsonl.Mode{jsonl.Recover, jsonl.Strict, jsonl.Lenient} {
				for _, ro := range []bool{true, false} {
					st, err := jsonl.Open(ctx, path, jsonl.Options{Mode: mode, ReadOnly: ro})
					if mode == jsonl.Lenient && !tt.fatal || mode == jsonl.Recover && tt.torn {
						if err != nil {
							t.Fatalf("Open(%s, lenient) = %v; want the bad line skipped", tt.name, err)
						}
						want := tt.want
						if tt.lenient != "" {
							want = tt.lenient
						}
						checkSkipped(t, st, path, tt.line, want)
						_ = st.Close()
						continue
					}
					if err == nil {
						_ = st.Close()
						t.Fatalf("Open(%s, %v) succeeded; want an error at line %d", tt.name, mode, tt.line)
					}
					lineError(t, err, path, tt.line)
					if !strings.Contains(err.Error(), tt.want) {
						t.Errorf("Open(%s, %v) error = %q; want it to mention %q", tt.name, mode, err, tt.want)
					}
					if tt.invalid && !errors.Is(err, sessiontree.ErrInvalidEntry) {
						t.Errorf("Open(%s) error = %v; want ErrInvalidEntry too", tt.name, err)
					}
					if !tt.invalid && errors.Is(err, sessiontree.ErrInvalidEntry) {
						t.Errorf("Open(%s) error = %v matches ErrInvalidEntry; want only ErrCorrupt", tt.name, err)
					}
					if tt.other != nil && !errors.Is(err, tt.other) {
						t.Errorf("Open(%s) error = %v; want it to match %v", tt.name, err, tt.other)
					}
				}
			}
			// The file is never changed by a failed open.
			if got := readFile(t, path); got != tt.content {
				t.Errorf("file changed by a failed open")
			}
		})
	}
}

// checkSkipped checks that a lenient open reported the line as skipped.
func checkSkipped(t *testing.T, st *jsonl.Storage, path string, line int, want string) {
	t.Helper()
	r := st.Report()
	for _, w := range r.Warnings {
		if w.Line == line {
			lineError(t, w, path, line)
			if !strings.Contains(w.Error(), want) {
				t.Errorf("warning %q; want it to mention %q", w, want)
			}
			return
		}
	}
	t.Errorf("Report().Warnings = %v; want one at line %d", r.Warnings, line)
}

// TestUnknownTypeIsData opens, in every mode, the file that was once the
// "unknown type" case of badFiles: an entry of a type this version does
// not know is data, not damage. It loads as it is, with no warning line,
// and the report counts its type once for the file.
func TestUnknownTypeIsData(t *testing.T) {
	ctx := context.Background()
	line := `{"type":"bogus","id":"aaaaaaaa","parentId":null,` + ts + `}`
	path := writeFile(t, lines(testHeader, line))
	for _, mode := range []jsonl.Mode{jsonl.Recover, jsonl.Strict, jsonl.Lenient} {
		for _, ro := range []bool{true, false} {
			st, err := jsonl.Open(ctx, path, jsonl.Options{Mode: mode, ReadOnly: ro})
			if err != nil {
				t.Fatalf("Open(unknown type, %v, read-only %v) = %v; want it accepted", mode, ro, err)
			}
			e, err := st.Entry(ctx, "aaaaaaaa")
			if err != nil || string(e.Raw) != line || e.Type != "bogus" {
				t.Errorf("Entry(aaaaaaaa) = %s, %v; want the line as it is", e.Raw, err)
			}
			r := st.Report()
			want := sessiontree.UnknownTypes{{Type: "bogus", Count: 1}}
			if len(r.Warnings) != 0 || r.Entries != 1 || !slices.Equal(r.Unknown, want) {
				t.Errorf("Open(unknown type, %v) Report() = %+v; want 1 entry, no warning line, Unknown %v", mode, r, want)
			}
			_ = st.Close()
		}
	}
}

func TestMissingFile(t *testing.T) {
	_, err := jsonl.Open(context.Background(), "/nonexistent/dir/s.jsonl", jsonl.Options{})
	if !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("Open(missing) error = %v; want ErrNotFound", err)
	}
	_, err = jsonl.Open(context.Background(), "/nonexistent/dir/s.jsonl", jsonl.Options{ReadOnly: true})
	if !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("Open(missing, read-only) error = %v; want ErrNotFound", err)
	}
}

func TestLenientSkipsAndKeepsTheRest(t *testing.T) {
	content := lines(testHeader,
		msg("aaaaaaaa", ""),
		"garbage",
		msg("aaaaaaaa", ""), // identical duplicate: dropped
		`{"type":"custom","id":"bbbbbbbb","parentId":"aaaaaaaa","customType":"x"}`, // no timestamp
		msg("cccccccc", "aaaaaaaa"),
		msg("dddddddd", "bbbbbbbb"), // its parent was skipped
		msg("eeeeeeee", "cccccccc"),
	)
	path := writeFile(t, content)
	st := open(t, path, jsonl.Options{Mode: jsonl.Lenient, ReadOnly: true})
	want := []string{"aaaaaaaa", "cccccccc", "eeeeeeee"}
	if got := logIDs(t, st); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Log() = %v; want %v", got, want)
	}
	r := st.Report()
	var gotLines []int
	for _, w := range r.Warnings {
		gotLines = append(gotLines, w.Line)
	}
	if len(gotLines) != 4 || gotLines[0] != 3 || gotLines[1] != 4 || gotLines[2] != 5 || gotLines[3] != 7 {
		t.Errorf("warnings at lines %v; want [3 4 5 7]", gotLines)
	}
	if r.Entries != 3 || r.Lines != 8 || r.Version != 3 || r.Torn != nil {
		t.Errorf("Report() = %+v", r)
	}
	if leaf(t, st) != "eeeeeeee" {
		t.Errorf("Leaf() = %q; want eeeeeeee", leaf(t, st))
	}
}
