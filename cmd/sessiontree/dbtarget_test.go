package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDBTarget checks that --db and $SESSIONTREE_DB take a URL for what it
// is: a postgres:// URL is a PostgreSQL server, not a folder named "postgres:", another
// scheme, or any value no engine takes, is a usage error naming it and
// where it came from.
func TestDBTarget(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	tests := []struct {
		name string
		env  string
		args []string
		code int
		msg  string
	}{
		// A postgres URL is a server to connect to (none listens on port 1).
		{"postgres flag", "", []string{"--db", "postgres://127.0.0.1:1/sessions", "ls"}, 1, `^sessiontree: open store: open postgres://127.0.0.1:1/sessions: storage failure: .*connection refused`},
		{"postgresql env", "postgresql://127.0.0.1:1/sessions", []string{"ls"}, 1, `open postgresql://127.0.0.1:1/sessions: storage failure: .*connection refused`},
		{"unknown scheme", "", []string{"--db", "mysql://db.example/sessions", "ls"}, 2, `^sessiontree: --db: unknown database URL scheme "mysql"`},
		{"unknown scheme env", "redis://x", []string{"ls"}, 2, `^sessiontree: \$SESSIONTREE_DB: unknown database URL scheme "redis"`},
		// Any other value no engine takes is a usage error too, naming
		// where it came from.
		{"postgres without slashes", "", []string{"--db", "postgres:/db/x", "ls"}, 2, `^sessiontree: --db: database postgres:/db/x: a PostgreSQL URL starts with postgres://`},
		{"file without slashes env", "file:s.db", []string{"ls"}, 2, `^sessiontree: \$SESSIONTREE_DB: database file:s.db: a file URL starts with file://`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env != "" {
				t.Setenv("SESSIONTREE_DB", tt.env)
			}
			r := runCmd(t, "", tt.args...)
			if r.code != tt.code || !regexp.MustCompile(tt.msg).MatchString(r.stderr) {
				t.Errorf("sessiontree %q: exit %d, stderr %q; want exit %d, stderr matching %s", tt.args, r.code, r.stderr, tt.code, tt.msg)
			}
			if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
				t.Errorf("sessiontree %q left %v in the working directory (%v); want nothing", tt.args, ents, err)
			}
		})
	}
	// A file:// URL is the SQLite file at its path.
	fileURL := "file://" + dir + "/s.db"
	t.Cleanup(func() { sharedStores.close(t, fileURL) })
	ok(t, "--db", fileURL, "demo")
	if _, err := os.Stat(dir + "/s.db"); err != nil {
		t.Errorf("--db file://%s/s.db: %v; want the database made there", dir, err)
	}
}

// TestEmptyDBFlag checks that --db "" (a variable that was not set, as in
// --db "$DB") is a usage error, never the default database: rm with it
// would have deleted from $SESSIONTREE_DB's database.
func TestEmptyDBFlag(t *testing.T) {
	db := newDB(t)
	ok(t, "--db", db, "import", "../../view/testdata/demo.jsonl")
	t.Setenv("SESSIONTREE_DB", db)
	for _, args := range [][]string{{"--db", "", "rm", "0198f2a4"}, {"--db=", "ls"}} {
		r := runCmd(t, "", args...)
		if r.code != 2 || !regexp.MustCompile(`^sessiontree: invalid argument "" for "--db" flag: empty`).MatchString(r.stderr) {
			t.Errorf("sessiontree %q: exit %d, stderr %q; want exit 2 naming the empty --db", args, r.code, r.stderr)
		}
	}
	if out := ok(t, "ls"); !regexp.MustCompile(`(?m)^0198f2a4 `).MatchString(out) {
		t.Errorf("ls of $SESSIONTREE_DB after rm with --db \"\":\n%s\nwant the session kept", out)
	}
}

// TestMissingDatabase checks that a command that reads a database, or
// writes into sessions it must already hold, refuses a SQLite file that
// does not exist instead of making an empty one and answering as if it
// held nothing (a mistyped --db, or pull --from a mistyped source, exited 0
// having "pulled 0 sessions"), and that the commands that bring sessions
// in still make it.
func TestMissingDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := newDB(t)
	ok(t, "--db", db, "import", "../../view/testdata/demo.jsonl")
	missing := filepath.Join(dir, "missing.db")
	for _, args := range [][]string{
		{"--db", missing, "ls"},
		{"--db", missing, "check"},
		{"--db", missing, "search", "flag"},
		{"--db", missing, "usage"},
		{"--db", missing, "tree", "0198f2a4"},
		{"--db", missing, "rm", "0198f2a4"},
		{"--db", missing, "push", "--to", db},
		{"--db", db, "pull", "--from", missing},
		{"--db", db, "pull", "--from", "file://" + missing},
	} {
		r := runCmd(t, "", args...)
		if r.code != 1 || !strings.HasPrefix(r.stderr, "sessiontree: database "+missing+" does not exist") {
			t.Errorf("sessiontree %q: exit %d, stderr %q; want exit 1 saying %s does not exist", args, r.code, r.stderr, missing)
		}
		if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("sessiontree %q made %s (%v); want nothing made", args, missing, err)
		}
	}
	// Completion, which runs at each Tab, reports the error to the shell.
	if r := runCmd(t, "", "--db", missing, "__complete", "tree", ""); !strings.HasSuffix(r.stdout, "\n:1\n") && r.stdout != ":1\n" {
		t.Errorf("__complete with a missing database printed %q; want the error directive :1", r.stdout)
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("__complete made %s (%v); want nothing made", missing, err)
	}
	made := filepath.Join(dir, "made.db")
	t.Cleanup(func() { sharedStores.close(t, made) })
	ok(t, "--db", db, "push", "--to", made, "0198f2a4")
	if out := ok(t, "--db", made, "ls"); !strings.Contains(out, "0198f2a4") {
		t.Errorf("ls of the database push made:\n%s", out)
	}
}

// TestEmptyFilterFlags checks that a flag whose absence means "all" (every
// session, from the leaf, the whole branch, no claim) refuses an empty
// value, as a variable that was not set gives, instead of silently taking
// it for the flag left out: search --session "$ID" searched every session.
func TestEmptyFilterFlags(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ok(t, "--db", db, "import", "../../view/testdata/demo.jsonl")
	for _, args := range [][]string{
		{"search", "flag", "--session", ""},
		{"search", "flag", "--cwd", ""},
		{"ls", "--cwd="},
		{"ls", "--name", ""},
		{"context", "0198f2a4", "--from", ""},
		{"branch", "0198f2a4", "--from", ""},
		{"fork", "0198f2a4", "--at", ""},
		{"fork", "0198f2a4", "--before", ""},
		{"append", "0198f2a4", "--claim", ""},
		{"usage", "--since", ""},
		{"usage", "--until", ""},
	} {
		r := runCmd(t, "", append([]string{"--db", db}, args...)...)
		if r.code != 2 || !regexp.MustCompile(`^sessiontree: invalid argument "" for "--[a-z]+" flag: empty`).MatchString(r.stderr) || r.stdout != "" {
			t.Errorf("sessiontree %q: exit %d, stdout %q, stderr %q; want exit 2 naming the empty flag", args, r.code, r.stdout, r.stderr)
		}
	}
}
