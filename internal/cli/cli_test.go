package cli_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/cli"
	"github.com/sessiontree/sessiontree/memory"
)

func TestDefaultDBPath(t *testing.T) {
	home := func() (string, error) { return "/home/me", nil }
	noHome := func() (string, error) { return "", errors.New("$HOME is not defined") }
	tests := []struct {
		name string
		vars map[string]string
		home func() (string, error)
		goos string
		want string
		err  bool
	}{
		{"linux", nil, home, "linux", "/home/me/.local/share/sessiontree/sessions.db", false},
		{"SESSIONTREE_DB wins", map[string]string{"SESSIONTREE_DB": "x.db", "XDG_DATA_HOME": "/data"}, home, "linux", "x.db", false},
		{"XDG_DATA_HOME", map[string]string{"XDG_DATA_HOME": "/data"}, home, "linux", "/data/sessiontree/sessions.db", false},
		{"relative XDG_DATA_HOME is ignored", map[string]string{"XDG_DATA_HOME": "data"}, home, "freebsd", "/home/me/.local/share/sessiontree/sessions.db", false},
		{"macOS", nil, home, "darwin", "/home/me/Library/Application Support/sessiontree/sessions.db", false},
		{"no home", nil, noHome, "linux", "", true},
		{"no home but SESSIONTREE_DB", map[string]string{"SESSIONTREE_DB": "/x.db"}, noHome, "linux", "/x.db", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := cli.DBEnv{Getenv: func(k string) string { return tt.vars[k] }, Home: tt.home, GOOS: tt.goos}
			got, err := cli.DefaultDBPath(env)
			if (err != nil) != tt.err || got != filepath.FromSlash(tt.want) && !tt.err {
				t.Errorf("DefaultDBPath() = %q, %v; want %q (error %v)", got, err, tt.want, tt.err)
			}
		})
	}
}

func TestParseSessionArg(t *testing.T) {
	tests := []struct {
		arg  string
		want cli.SessionArg
		err  bool
	}{
		{"0198f2a4-5c1e-7d3a-9b2f-3e4d5c6b7a81", cli.SessionArg{ID: "0198f2a4-5c1e-7d3a-9b2f-3e4d5c6b7a81"}, false},
		{"0198", cli.SessionArg{ID: "0198"}, false},
		{"v1-compaction", cli.SessionArg{ID: "v1-compaction"}, false},
		{"session.jsonl", cli.SessionArg{File: "session.jsonl"}, false},
		{"SESSION.JSONL", cli.SessionArg{File: "SESSION.JSONL"}, false},
		{"./0198", cli.SessionArg{File: "./0198"}, false},
		{"/tmp/x", cli.SessionArg{File: "/tmp/x"}, false},
		{"~/.pi/agent/sessions/a b.jsonl", cli.SessionArg{File: "~/.pi/agent/sessions/a b.jsonl"}, false},
		{"", cli.SessionArg{}, true},
		{"01 98", cli.SessionArg{}, true},
		{"01\t98", cli.SessionArg{}, true},
		{"a\x00b.jsonl", cli.SessionArg{}, true},
		{"\xff", cli.SessionArg{}, true},
	}
	for _, tt := range tests {
		got, err := cli.ParseSessionArg(tt.arg)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseSessionArg(%q) = %+v, %v; want %+v (error %v)", tt.arg, got, err, tt.want, tt.err)
		}
		if err != nil && !errors.Is(err, cli.ErrBadArgument) {
			t.Errorf("ParseSessionArg(%q) error %v does not match ErrBadArgument", tt.arg, err)
		}
	}
}

// FuzzParseSessionArg checks that any argument either names exactly one
// thing, as given, or is refused; never both, never a panic.
func FuzzParseSessionArg(f *testing.F) {
	for _, seed := range []string{"", "0198f2a4", "0198f2a4-5c1e-7d3a-9b2f-3e4d5c6b7a81", "v1-linear", "x.jsonl",
		"./x", "/abs/path/s.jsonl", `C:\pi\s.jsonl`, "root", "a b", "\x00", "\xff\xfe", "日本語", ".jsonl", "-", "--json"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		sa, err := cli.ParseSessionArg(arg)
		if err != nil {
			if sa != (cli.SessionArg{}) {
				t.Errorf("ParseSessionArg(%q) = %+v with error %v; want the zero value", arg, sa, err)
			}
			if !errors.Is(err, cli.ErrBadArgument) {
				t.Errorf("ParseSessionArg(%q) error %v does not match ErrBadArgument", arg, err)
			}
			return
		}
		if (sa.File == "") == (sa.ID == "") {
			t.Fatalf("ParseSessionArg(%q) = %+v; want exactly one of File and ID", arg, sa)
		}
		if sa.File != "" && sa.File != arg || sa.ID != "" && sa.ID != arg {
			t.Errorf("ParseSessionArg(%q) = %+v; want the argument unchanged", arg, sa)
		}
		if sa.ID != "" && (strings.ContainsAny(sa.ID, "/\\ \t\n") || strings.HasSuffix(strings.ToLower(sa.ID), ".jsonl")) {
			t.Errorf("ParseSessionArg(%q) = id %q; want a file or a refusal", arg, sa.ID)
		}
		id, err := cli.ParseEntryArg(arg, true)
		if err == nil && id != arg && !(arg == cli.RootEntry && id == "") {
			t.Errorf("ParseEntryArg(%q) = %q; want the argument or root", arg, id)
		}
	})
}

func TestParseEntryArg(t *testing.T) {
	if id, err := cli.ParseEntryArg("root", true); id != "" || err != nil {
		t.Errorf(`ParseEntryArg("root", true) = %q, %v; want ""`, id, err)
	}
	if id, err := cli.ParseEntryArg("root", false); id != "root" || err != nil {
		t.Errorf(`ParseEntryArg("root", false) = %q, %v; want "root"`, id, err)
	}
	for _, bad := range []string{"", "a b", "a\nb"} {
		if _, err := cli.ParseEntryArg(bad, true); !errors.Is(err, cli.ErrBadArgument) {
			t.Errorf("ParseEntryArg(%q) error = %v; want ErrBadArgument", bad, err)
		}
	}
}

func TestResolveEntry(t *testing.T) {
	ctx := context.Background()
	st, err := memory.New(sessiontree.SessionMeta{}, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"abcd1234", "abce5678", "0123456789abcdef0123456789abcdef"} {
		d := sessiontree.Draft{Type: sessiontree.TypeCustom, ID: id, Fields: json.RawMessage(`{"customType":"x"}`)}
		if _, err := st.Append(ctx, d, sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		arg, want string
		err       bool
	}{
		{"abcd1234", "abcd1234", false},
		{"abcd", "abcd1234", false},
		{"01234567", "0123456789abcdef0123456789abcdef", false},
		{"", "", false},
		{"abc", "", true},
		{"ffff", "", true},
	}
	for _, tt := range tests {
		got, err := cli.ResolveEntry(ctx, st, tt.arg)
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("ResolveEntry(%q) = %q, %v; want %q (error %v)", tt.arg, got, err, tt.want, tt.err)
		}
		if err != nil && !errors.Is(err, sessiontree.ErrNotFound) {
			t.Errorf("ResolveEntry(%q) error %v does not match ErrNotFound", tt.arg, err)
		}
	}
	var amb *cli.AmbiguousEntryError
	if _, err := cli.ResolveEntry(ctx, st, "abc"); !errors.As(err, &amb) || len(amb.Matches) != 2 {
		t.Errorf("ResolveEntry(%q) = %v; want an ambiguity listing 2 ids", "abc", err)
	}
}

func TestReadDrafts(t *testing.T) {
	in := `{"type":"message","message":{"role":"user","content":"hi"},"extra":1.50}` + "\n" +
		"   \n" +
		`{"type":"model_change","id":"feedbeef","timestamp":"2026-01-01T00:00:00.000Z","provider":"p","modelId":"m"}` + "\n" +
		`{"type":"label","targetId":"x"}` + "\n" +
		`{"type":"future_thing","data":{"k":[1]}}`
	var got []sessiontree.Draft
	for d, err := range cli.ReadDrafts(context.Background(), strings.NewReader(in), 0) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	}
	want := []sessiontree.Draft{
		{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":{"role":"user","content":"hi"},"extra":1.50}`)},
		{Type: sessiontree.TypeModelChange, ID: "feedbeef", Timestamp: "2026-01-01T00:00:00.000Z", Fields: json.RawMessage(`{"provider":"p","modelId":"m"}`)},
		{Type: sessiontree.TypeLabel, Fields: json.RawMessage(`{"targetId":"x"}`)},
		// Types are open: one this version does not know is appended as is.
		{Type: "future_thing", Fields: json.RawMessage(`{"data":{"k":[1]}}`)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadDrafts (-want +got):\n%s", diff)
	}

	bad := []struct{ line, msg string }{
		{`{"message":{}}`, `missing "type"`},
		{`{"type":"leaf","targetId":null}`, "goto"},
		{`{"type":"message","parentId":"x"}`, "parentId"},
		{`{"type":"message","timestamp":"yesterday"}`, "timestamp"},
		{`{"type":"message","id":""}`, `"id"`},
		{`[1,2]`, "object"},
		{`{"type":"message"`, ""},
		// The fields a type requires, checked before the store makes an
		// id up for the entry, so that the error names the line.
		{`{"type":"message","message":"hi"}`, `"message" must be an object`},
		{`{"type":"model_change","provider":"p"}`, `"modelId"`},
		{`{"type":"label","targetId":5}`, `"targetId"`},
	}
	for _, b := range bad {
		var err error
		for _, e := range cli.ReadDrafts(context.Background(), strings.NewReader("\n"+b.line+"\n"), 0) {
			err = e
		}
		var ie *cli.InputError
		if !errors.As(err, &ie) || ie.Line != 2 || !strings.Contains(err.Error(), b.msg) || !errors.Is(err, sessiontree.ErrInvalidEntry) {
			t.Errorf("ReadDrafts(%q) error = %v; want an input error at line 2 mentioning %q", b.line, err, b.msg)
		}
	}
}

func TestCheckFile(t *testing.T) {
	ctx := context.Background()
	good := "../../testdata/pi/session-002.jsonl"
	if problems, err := cli.CheckFile(ctx, good); err != nil || len(problems) != 0 {
		t.Errorf("CheckFile(%s) = %v, %v; want no problems", good, problems, err)
	}
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	dir := t.TempDir()
	write := func(name string, lines []string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	broken := append([]string(nil), lines...)
	broken[3] = "garbage\n"
	problems, err := cli.CheckFile(ctx, write("broken.jsonl", broken))
	if err != nil || len(problems) != 2 || !strings.Contains(problems[0].Error(), "broken.jsonl:4:") {
		t.Errorf("CheckFile(broken) = %v, %v; want line 4 and the orphan after it", problems, err)
	}
	noHeader := write("noheader.jsonl", lines[1:])
	if problems, err := cli.CheckFile(ctx, noHeader); err != nil || len(problems) != 1 || !errors.Is(problems[0], sessiontree.ErrCorrupt) {
		t.Errorf("CheckFile(no header) = %v, %v; want one corrupt-file problem", problems, err)
	}
	if _, err := cli.CheckFile(ctx, filepath.Join(dir, "missing.jsonl")); err == nil {
		t.Errorf("CheckFile(missing) = nil error; want the open error")
	}
	// An entry of an unknown type is not a problem; it is counted.
	future := append(append([]string(nil), lines...),
		`{"type":"future_thing","id":"feed0001","parentId":null,"timestamp":"2026-12-02T18:00:00.000Z","x":{"y":[1]}}`+"\n")
	c, err := cli.InspectFile(ctx, write("future.jsonl", future), 0)
	want := sessiontree.UnknownTypes{{Type: "future_thing", Count: 1}}
	if err != nil || len(c.Problems) != 0 || !slices.Equal(c.Unknown, want) {
		t.Errorf("InspectFile(future) = %+v, %v; want no problems and Unknown %v", c, err, want)
	}
}

func TestCheckStorage(t *testing.T) {
	ctx := context.Background()
	mk := func(raw string) sessiontree.Entry {
		e, err := sessiontree.DecodeEntry([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	st, err := memory.NewUnchecked(sessiontree.SessionMeta{}, []sessiontree.Entry{
		mk(`{"type":"custom","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","customType":"x"}`),
		mk(`{"type":"custom","id":"b","parentId":"gone","timestamp":"2026-01-01T00:00:00.000Z","customType":"x"}`),
		mk(`{"type":"leaf","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:00.000Z","targetId":"nope"}`),
		// A label of a missing entry is no problem: pi keeps it, and it
		// labels nothing.
		mk(`{"type":"label","id":"d","parentId":"c","timestamp":"2026-01-01T00:00:00.000Z","targetId":"nope2","label":"l"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	problems, err := cli.CheckStorage(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Error())
	}
	want := []string{
		"corrupt session: entry b: parent gone does not exist",
		"corrupt session: entry c: target nope does not exist",
		"active path: corrupt session: entry b: parent gone does not exist",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CheckStorage (-want +got):\n%s", diff)
	}
}

func TestParseDay(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"2026-12-03", "2026-12-03"},
		{"2026-12-03T10:00:00Z", "2026-12-03"},
		{"2026-12-03T01:00:00+02:00", "2026-12-02"},
		{"2026-02-30", "!"},
		{"12/03/2026", "!"},
		{"yesterday", "!"},
	} {
		got, err := cli.ParseDay(tt.in)
		if tt.want == "!" {
			if err == nil {
				t.Errorf("ParseDay(%q) = %q; want an error", tt.in, got)
			}
			continue
		}
		if got != tt.want || err != nil {
			t.Errorf("ParseDay(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}
