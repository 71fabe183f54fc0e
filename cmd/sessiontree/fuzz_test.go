package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
)

// FuzzArgs runs the command with arbitrary arguments (one string, split
// at NUL bytes), in a temporary directory holding a session file s.jsonl
// and the database sessions.db: any argv ends with exit status 0, 1 or
// 2 within ten seconds, never a panic; a failure says why on stderr in
// one line that starts "sessiontree: ", and nothing the command writes
// holds a control character other than newline and tab (so neither an
// argument nor an entry can act on the terminal). Arguments that would
// reach outside the directory (an absolute path, "..", a URL) or wait
// for more (serve, tail, watch) are skipped.
func FuzzArgs(f *testing.F) {
	fixture, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pi", "legacy-v1-compaction.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	dir := f.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.jsonl"), fixture, 0o600); err != nil {
		f.Fatal(err)
	}
	f.Setenv("SESSIONTREE_DB", filepath.Join(dir, "sessions.db"))
	for _, args := range []string{"tree\x00s.jsonl", "branch\x00s.jsonl", "context\x00s.jsonl", "info\x00s.jsonl\x00--json",
		"log\x00s.jsonl", "import\x00s.jsonl", "ls", "search\x00compaction", "usage\x00--by\x00day", "check",
		"export\x00s.jsonl\x00--format\x00markdown", "tree\x00nosuchid", "label\x00s.jsonl\x00x\x00y", "tree\x00\x1b[31m",
		"--max-line\x001k\x00tree\x00s.jsonl", "goto", "--db\x00", "name\x00a\x00\u202e", "help\x00tree", "bogus\x00--nope"} {
		f.Add(args)
	}
	wd, err := os.Getwd()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		for _, a := range args {
			if strings.HasPrefix(a, "/") || strings.Contains(a, "..") || strings.Contains(a, "://") ||
				a == "serve" || a == "tail" || a == "watch" || a == "pull" || a == "push" {
				t.Skip("reaches outside or waits")
			}
		}
		// In the directory for the run only: the fuzzing worker fails
		// when it is elsewhere between runs (F.Chdir).
		chdir(t, dir)
		defer chdir(t, wd)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var out, errb bytes.Buffer
		code := run(ctx, args, strings.NewReader(""), &out, &errb)
		if ctx.Err() != nil {
			t.Fatalf("sessiontree %q did not finish in 10 s: a hang", args)
		}
		stderr := errb.String()
		switch {
		case code != exitOK && code != exitFailure && code != exitUsage:
			t.Fatalf("sessiontree %q: exit %d", args, code)
		case code != exitOK && (!strings.HasPrefix(stderr, "sessiontree: ") || !strings.HasSuffix(stderr, "\n")):
			t.Fatalf("sessiontree %q: exit %d, stderr %q; want one line saying why", args, code, stderr)
		}
		for _, s := range []string{out.String(), stderr} {
			if i := strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }); i >= 0 {
				t.Fatalf("sessiontree %q wrote a control character at %d: %q", args, i, s[max(0, i-40):min(len(s), i+40)])
			}
		}
	})
}

func chdir(t *testing.T, dir string) {
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
}
