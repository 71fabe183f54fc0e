package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDocExamples runs the command lines a user copies: every line of
// the README's sh blocks and every command's --help examples that runs
// sessiontree, against a database holding the session `sessiontree demo`
// made (0198f2a4, whose entry ids the examples use: what a user who just
// ran the demo has) and session-010, each line on a fresh copy of it. Each sessiontree command of the line must exit 0: a
// flag, an argument or an entry the docs name that the command does not
// take fails here. A pipe's other commands (jq, less, xargs) are not run;
// echo's text is the command's stdin. Left out are the commands that run
// until interrupted (serve, tail, import --watch), import of pi's own
// folder, and the PostgreSQL examples (a server of the docs' own naming).
// Paths (~, relative files, /tmp) are taken into a temporary folder, an
// input .jsonl file there being a copy of the demo session's file and a
// database a copy of the test's.
func TestDocExamples(t *testing.T) {
	t.Parallel()
	base := newDB(t)
	ok(t, "--db", base, "demo")
	ok(t, "--db", base, "import", "../../testdata/pi/session-010.jsonl")
	sharedStores.close(t, base)
	for _, ex := range docExamples(t) {
		t.Run(ex.where, func(t *testing.T) {
			if skipExample(ex.line) {
				t.Skipf("not run: %s", ex.line)
			}
			runExample(t, base, ex.line)
		})
	}
}

// demoFile is the demo session's pi file, with fixed ids.
const demoFile = "../../view/testdata/demo.jsonl"

// docExample is one command line of the docs and where it is.
type docExample struct{ where, line string }

// docExamples returns the README's sh lines and the commands' examples,
// continuation lines joined and comments left out.
func docExamples(t *testing.T) []docExample {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []docExample
	add := func(where, text string) {
		for i, line := range strings.Split(strings.ReplaceAll(text, "\\\n", " "), "\n") {
			if line = stripComment(line); strings.Contains(line, "sessiontree ") {
				out = append(out, docExample{where + "/" + strconv.Itoa(i+1), line})
			}
		}
	}
	for i, b := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllSubmatch(readme, -1) {
		add("README-sh"+strconv.Itoa(i+1), string(b[1]))
	}
	root := newRootCommand(&app{})
	for _, c := range append(root.Commands(), root) {
		add("help-"+c.Name(), c.Example)
	}
	return out
}

// stripComment cuts a line's shell comment (a # after white space,
// outside quotes) and its surrounding space.
func stripComment(line string) string {
	var quote rune
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || line[i-1] == ' '):
			return strings.TrimSpace(line[:i])
		}
	}
	return strings.TrimSpace(line)
}

// skipExample tells the lines the test does not run.
func skipExample(line string) bool {
	for _, s := range []string{"sessiontree serve", "sessiontree tail", "--watch", "postgres://", "go install", "go run"} {
		if strings.Contains(line, s) {
			return true
		}
	}
	return strings.TrimSpace(strings.SplitN(line, "|", 2)[0]) == "sessiontree import"
}

// runExample runs the sessiontree commands of line, on a copy of the
// database base, and fails unless each exits 0.
func runExample(t *testing.T, base, line string) {
	dir := t.TempDir()
	db := copyFile(t, base, dir)
	t.Cleanup(func() { sharedStores.close(t, db) })
	vars := map[string]string{}
	for _, cmd := range strings.Split(line, "&&") {
		stdin := ""
		for _, seg := range splitOutside(cmd, '|') {
			stdin = runSegment(t, dir, base, db, line, shellWords(t, seg, vars), stdin, vars)
		}
	}
}

// runSegment runs one command of a pipeline of line and returns the
// next one's stdin: echo's words are it; sessiontree runs on stdin
// (VAR=$(sessiontree ...) sets vars[VAR] to what it printed); any other
// command is not run.
func runSegment(t *testing.T, dir, base, db, line string, words []string, stdin string, vars map[string]string) string {
	assign := ""
	if len(words) > 0 {
		if name, rest, ok := strings.Cut(words[0], "=$("); ok {
			assign, words[0] = name, rest
		}
	}
	switch {
	case len(words) > 0 && words[0] == "echo":
		return strings.Join(words[1:], " ") + "\n"
	case len(words) == 0 || words[0] != "sessiontree":
		return ""
	}
	args := exampleArgs(t, dir, base, db, words[1:])
	r := runCmd(t, stdin, args...)
	if r.code != 0 {
		t.Fatalf("%s\nran sessiontree %s: exit %d, stderr %q", line, strings.Join(args, " "), r.code, r.stderr)
	}
	if assign != "" {
		vars[assign] = strings.TrimSpace(r.stdout)
	}
	return ""
}

// exampleArgs makes an example's arguments run in dir: --db is db unless
// the example names one, paths are taken into dir, and an input file
// (a .jsonl, a .db, a folder to import) that is not there is made, a
// database as a copy of base.
func exampleArgs(t *testing.T, dir, base, db string, words []string) []string {
	args := []string{"--db", db}
	for i, w := range words {
		if strings.HasPrefix(w, ">") {
			break
		}
		output := i > 0 && (words[i-1] == "-o" || words[i-1] == "--chart")
		if p, ok := examplePath(dir, w); ok {
			if !output {
				makeInput(t, p, base, words[0] == "import")
			}
			w = p
		}
		if w == "--db" {
			args = args[:0:0]
		}
		args = append(args, w)
	}
	return args
}

// fileArg is an argument that names a file by its extension.
var fileArg = regexp.MustCompile(`\.(jsonl|md|html|svg|db)$`)

// examplePath maps a path of an example into dir.
func examplePath(dir, w string) (string, bool) {
	switch {
	case strings.HasPrefix(w, "~/"):
		return filepath.Join(dir, "home", w[2:]), true
	case strings.HasPrefix(w, "/tmp/"):
		return filepath.Join(dir, w[1:]), true
	case !strings.HasPrefix(w, "-") && fileArg.MatchString(w):
		return filepath.Join(dir, w), true
	}
	return "", false
}

// makeInput makes the input an example names where it is missing: a
// .jsonl file as the demo session's file (for an import, a session the
// database lacks), a .db as a copy of base, the database holding the
// demo session, any other path to import as a folder holding a session
// the database lacks.
func makeInput(t *testing.T, p, base string, importing bool) {
	if _, err := os.Stat(p); err == nil {
		return
	}
	src := demoFile
	if importing {
		src = "../../testdata/pi/session-003.jsonl"
	}
	switch {
	case strings.HasSuffix(p, ".jsonl"):
		writeCopy(t, src, p)
	case strings.HasSuffix(p, ".db"):
		writeCopy(t, base, p)
	case importing:
		writeCopy(t, src, filepath.Join(p, "session.jsonl"))
	}
}

// writeCopy copies src to dst, making dst's folder.
func writeCopy(t *testing.T, src, dst string) {
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// splitOutside splits s at sep where it is outside quotes and $( ).
func splitOutside(s string, sep byte) []string {
	var out []string
	var quote byte
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == sep && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// shellWords splits a simple command into words as a shell does: quotes
// taken off, "$name" expanded from vars, a closing ")" of $( ) dropped.
func shellWords(t *testing.T, s string, vars map[string]string) []string {
	var words []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'' && c != '\'', quote == '"' && c != '"' && c != '$':
			w.WriteByte(c)
		case c == quote:
			quote = 0
		case quote == 0 && (c == '\'' || c == '"'):
			quote, in = c, true
		case c == '$' && i+1 < len(s) && s[i+1] != '(':
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
				j++
			}
			v, ok := vars[s[i+1:j]]
			if !ok {
				t.Fatalf("%s: $%s is not set", s, s[i+1:j])
			}
			w.WriteString(v)
			i, in = j-1, true
		case c == ' ' || c == '\t' || c == ')' && quote == 0:
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}
