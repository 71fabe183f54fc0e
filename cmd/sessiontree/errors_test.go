package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestErrors checks exit statuses and messages: one line on stderr, nothing
// on stdout, 1 for failures and 2 for bad usage.
func TestErrors(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	// Two sessions whose ids share the prefix 01a237bc.
	ok(t, "--db", db, "import", "../../testdata/pi/session-002.jsonl", "../../testdata/pi/session-003.jsonl")
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	fixture, err := os.ReadFile("../../testdata/pi/session-002.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(fixture), "\n")
	lines[3] = "{this is not json\n"
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		msg  string // a regular expression the message must match
	}{
		{"missing session", []string{"info", "0123abcd"}, 1, `^sessiontree: session 0123abcd not found$`},
		{"ambiguous prefix", []string{"tree", "01a237bc"}, 1, `^sessiontree: session id prefix "01a237bc" is ambiguous: it matches 01a237bc-c4a9-75e6-b60f-1754ad8dfc77, 01a237bc-c4aa-7424-823d-95976470926c$`},
		{"missing file", []string{"context", filepath.Join(dir, "none.jsonl")}, 1, `none\.jsonl: no such file or directory$`},
		{"malformed file", []string{"branch", bad}, 1, `bad\.jsonl:4: .*`},
		{"malformed file, check", []string{"check", bad}, 1, `^sessiontree: check found 2 problems in .*bad\.jsonl$`},
		{"missing entry", []string{"context", "01a237bc-c4aa", "--from", "ffffffff"}, 1, `^sessiontree: Entry ffffffff not found$`},
		{"file is read-only", []string{"name", "../../testdata/pi/session-002.jsonl", "x"}, 1, `read-only; import it to change it$`},
		{"bad query", []string{"search", `"unterminated`}, 2, `^sessiontree: .*unterminated`},
		{"empty query", []string{"search", ""}, 2, `^sessiontree: search query "": empty query$`},
		{"query ending early", []string{"search", "NEAR("}, 2, `^sessiontree: search query "NEAR\(": syntax error`},
		{"bad flag", []string{"tree", "01a237bc-c4aa", "--bogus"}, 2, `^sessiontree: unknown flag: --bogus$`},
		{"bad global flag", []string{"--nope", "ls"}, 2, `^sessiontree: unknown flag: --nope$`},
		{"bad flag value", []string{"ls", "--limit", "many"}, 2, `^sessiontree: invalid argument "many" for "--limit" flag`},
		{"bad max-line", []string{"--max-line", "12XB", "ls"}, 2, `^sessiontree: invalid argument "12XB" for "--max-line" flag: size "12XB" is not a positive whole number`},
		{"empty max-line", []string{"--max-line", "", "ls"}, 2, `^sessiontree: invalid argument "" for "--max-line" flag`},
		{"empty output", []string{"export", "01a237bc-c4aa", "-o", ""}, 2, `^sessiontree: invalid argument "" for "-o, --output" flag: empty`},
		{"empty chart", []string{"usage", "--chart", ""}, 2, `^sessiontree: invalid argument "" for "--chart" flag: empty`},
		{"empty cors", []string{"serve", "--cors", "", "--addr", "nowhere"}, 2, `^sessiontree: invalid argument "" for "--cors" flag: empty`},
		{"empty token", []string{"serve", "--token", "", "--addr", "nowhere"}, 2, `^sessiontree: invalid argument "" for "--token" flag: empty`},
		{"negative limit", []string{"ls", "--limit", "-3"}, 2, `^sessiontree: --limit must not be negative, got -3$`},
		{"negative search limit", []string{"search", "x", "--limit", "-1"}, 2, `^sessiontree: --limit must not be negative, got -1$`},
		{"no argument", []string{"tree"}, 2, `^sessiontree: tree takes one argument \(SESSION\), got 0 arguments$`},
		{"too many arguments", []string{"info", "a", "b"}, 2, `^sessiontree: info takes one argument \(SESSION\), got 2 arguments$`},
		{"unknown command", []string{"frobnicate"}, 2, `^sessiontree: unknown command "frobnicate"`},
		{"two fork points", []string{"fork", "01a237bc-c4aa", "--tree", "--at", "x"}, 2, `^sessiontree: give at most one of --at, --before and --tree$`},
		{"strict and lenient", []string{"import", "--strict", "--lenient"}, 2, `^sessiontree: --strict and --lenient cannot be used together$`},
		{"empty session argument", []string{"info", ""}, 2, `^sessiontree: empty session argument`},
		{"push, empty session", []string{"push", "--to", filepath.Join(dir, "to.db"), ""}, 2, `^sessiontree: empty session argument`},
		{"pull, session id with a space", []string{"pull", "--from", filepath.Join(dir, "from.db"), "01a2 37"}, 2, `^sessiontree: session id "01a2 37" contains white space`},
		{"push, a file", []string{"push", "--to", filepath.Join(dir, "to.db"), "../../testdata/pi/session-002.jsonl"}, 1, `^sessiontree: push works on sessions in the database, not on files: import \.\./\.\./testdata/pi/session-002\.jsonl first$`},
		{"session id with a space", []string{"info", "01a2 37"}, 2, `white space`},
		{"unknown help topic", []string{"help", "tre"}, 2, `^sessiontree: unknown help topic "tre" \(see sessiontree help\)$`},
		{"unknown shell", []string{"completion", "zsch"}, 2, `^sessiontree: unknown shell "zsch" for completion: want bash, fish, powershell or zsh$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, "", append([]string{"--db", db}, tt.args...)...)
			if r.code != tt.code {
				t.Errorf("sessiontree %s: exit %d; want %d (stderr %q)", strings.Join(tt.args, " "), r.code, tt.code, r.stderr)
			}
			msg := strings.TrimSuffix(r.stderr, "\n")
			if strings.Contains(msg, "\n") || !strings.HasSuffix(r.stderr, "\n") {
				t.Errorf("stderr %q is not one line", r.stderr)
			}
			if !regexp.MustCompile(tt.msg).MatchString(msg) {
				t.Errorf("stderr %q does not match %q", msg, tt.msg)
			}
			if tt.args[0] == "check" {
				// check lists the problems on stdout: the bad line, and the
				// entry after it, whose parent was on that line.
				if !regexp.MustCompile(`(?m)^.*bad\.jsonl:4: .*\n.*bad\.jsonl:5: .*parent .* does not exist`).MatchString(r.stdout) {
					t.Errorf("check printed %q; want lines 4 and 5 listed", r.stdout)
				}
			} else if r.stdout != "" {
				t.Errorf("stdout %q; want nothing", r.stdout)
			}
		})
	}
}

// TestHelp checks that every command has help with an example, printed on
// stdout with exit status 0.
func TestHelp(t *testing.T) {
	t.Parallel()
	root := newRootCommand(&app{})
	for _, c := range append(root.Commands(), root) {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			if c.Example == "" || c.Short == "" {
				t.Errorf("command %s has no example or no short help", c.Name())
			}
			args := []string{c.Name(), "--help"}
			if c == root {
				args = []string{"--help"}
			}
			out := ok(t, args...)
			if !strings.Contains(out, "Examples:") || !strings.Contains(out, "Usage:") {
				t.Errorf("%s --help does not show usage and examples:\n%s", c.Name(), out)
			}
		})
	}
	if out := ok(t); !strings.Contains(out, "Available Commands:") {
		t.Errorf("sessiontree without arguments does not show the commands:\n%s", out)
	}
}
