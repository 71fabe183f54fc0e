package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// unknownSession is a pi file with three entries of a type this version
// does not know, one of them the leaf.
const unknownSession = `{"type":"session","version":3,"id":"0190a000-0000-7000-8000-00000000c001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}
{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"future_thing","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"2026-01-01T00:00:02.000Z","payload":{"deep":[1,{"x":null}]}}
{"type":"future_thing","id":"cccccccc","parentId":"bbbbbbbb","timestamp":"2026-01-01T00:00:03.000Z"}
{"type":"message","id":"dddddddd","parentId":"cccccccc","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"again","timestamp":4}}
{"type":"future_thing","id":"eeeeeeee","parentId":"dddddddd","timestamp":"2026-01-01T00:00:05.000Z","n":1.50}
`

// TestUnknownTypesWarning checks that import and check print one warning
// line per file holding entries of unknown types, exit 0, and that the
// file exports byte for byte.
func TestUnknownTypesWarning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "session.jsonl")
	writeFile(t, file, unknownSession)
	copyFile(t, "../../testdata/pi/session-002.jsonl", dir)
	line := "warning: " + file + `: 3 entries of types this version does not know ("future_thing"), kept as they are` + "\n"
	// A second such file gets a line of its own.
	other := filepath.Join(dir, "other.jsonl")
	writeFile(t, other, strings.Replace(unknownSession, "c001", "c002", 1)+
		`{"type":"another_thing","id":"ffffffff","parentId":"eeeeeeee","timestamp":"2026-01-01T00:00:06.000Z"}`+"\n")
	otherLine := "warning: " + other + `: 4 entries of types this version does not know ("future_thing", "another_thing"), kept as they are` + "\n"

	db := newDB(t)
	out := ok(t, "--db", db, "import", dir)
	if strings.Count(out, "warning:") != 2 || strings.Count(out, line) != 1 || strings.Count(out, otherLine) != 1 ||
		!strings.HasPrefix(out, "3 files: 3 new,") {
		t.Errorf("import printed %q; want three new files and exactly the lines %q and %q", out, line, otherLine)
	}
	var s struct {
		Warnings []struct {
			File    string
			Entries int
			Types   []string
			Message string
		}
	}
	decode(t, ok(t, "--db", newDB(t), "import", file, "--json"), &s)
	if len(s.Warnings) != 1 || s.Warnings[0].File != file || s.Warnings[0].Entries != 3 ||
		len(s.Warnings[0].Types) != 1 || s.Warnings[0].Types[0] != "future_thing" || !strings.HasPrefix(s.Warnings[0].Message, "3 entries") {
		t.Errorf("import --json warnings = %+v; want one for %s: 3 entries of future_thing", s.Warnings, file)
	}

	for _, tc := range []struct {
		args  []string
		lines string
	}{
		{[]string{"check", file}, line},
		{[]string{"--db", db, "check"}, otherLine + line}, // in the order imported
		{[]string{"--db", db, "check", "0190a000-0000-7000-8000-00000000c001"}, line},
	} {
		out := ok(t, tc.args...)
		if strings.Count(out, "warning:") != strings.Count(tc.lines, "\n") || !strings.HasPrefix(out, tc.lines) || !strings.Contains(out, "\nok: ") {
			t.Errorf("sessiontree %s printed %q; want the lines %q, then ok", strings.Join(tc.args, " "), out, tc.lines)
		}
	}
	if out := ok(t, "--db", db, "check", "01a237bc-c4a9-75e6-b60f-1754ad8dfc77"); strings.Contains(out, "warning") {
		t.Errorf("check of a session without unknown types printed %q; want no warning", out)
	}
	if got := ok(t, "--db", db, "export", "0190a000-0000-7000-8000-00000000c001"); got != unknownSession {
		t.Errorf("export printed\n%s\nwant the file byte for byte:\n%s", got, unknownSession)
	}
}

// TestAppendUnknownTypeWarns: append stores an entry of a type this
// version does not know, as any, exit status 0, and says so once on
// stderr when its input ends (a misspelt "mesage" is stored for good);
// known types get no warning.
func TestAppendUnknownTypeWarns(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	id := strings.TrimSpace(ok(t, "--db", db, "new"))
	in := `{"type":"mesage","message":{"role":"user","content":"hi"}}` + "\n" +
		`{"type":"message","message":{"role":"user","content":"hi"}}` + "\n" +
		`{"type":"mesage","message":{"role":"user","content":"again"}}` + "\n"
	r := runCmd(t, in, "--db", db, "append", id)
	want := `warning: input: 2 entries of types this version does not know ("mesage"), kept as they are` + "\n"
	if r.code != 0 || r.stderr != want || strings.Count(r.stdout, "\n") != 3 {
		t.Errorf("append of two unknown entries: exit %d, stdout %q, stderr %q; want 0, three ids, stderr %q", r.code, r.stdout, r.stderr, want)
	}
	if r := runCmd(t, `{"type":"custom","customType":"x"}`+"\n", "--db", db, "append", id); r.code != 0 || r.stderr != "" {
		t.Errorf("append of a known type: exit %d, stderr %q; want 0, nothing on stderr", r.code, r.stderr)
	}
	// The input failing after one: the warning still comes, with the error.
	r = runCmd(t, `{"type":"future_thing"}`+"\n{nope\n", "--db", db, "append", id)
	if r.code != 1 || !strings.Contains(r.stderr, `1 entry of a type this version does not know ("future_thing")`) || !strings.Contains(r.stderr, "input line 2") {
		t.Errorf("append failing after an unknown entry: exit %d, stderr %q; want 1, the error and the warning", r.code, r.stderr)
	}
}
