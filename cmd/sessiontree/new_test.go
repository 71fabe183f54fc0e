package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree/store"
)

// onCLIEngines runs test once per engine, as a parallel subtest named
// after it, with a fresh database of that engine for --db: a SQLite file
// (not made yet) and a PostgreSQL database (skipped without a server,
// see newPGDB).
func onCLIEngines(t *testing.T, test func(t *testing.T, db string)) {
	t.Helper()
	for _, e := range []struct {
		name string
		db   func(testing.TB) string
	}{{"sqlite", newDB}, {"postgres", newPGDB}} {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			test(t, e.db(t))
		})
	}
}

// TestNew: new creates an empty session (making the SQLite file), prints
// its id, and the other commands see it with its cwd, name, parent and
// metadata; append writes to it; --json prints what info --json prints,
// byte for byte.
func TestNew(t *testing.T) {
	t.Parallel()
	here, err := store.AbsCwd(".")
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	onCLIEngines(t, func(t *testing.T, db string) {
		id := strings.TrimSpace(ok(t, "--db", db, "new"))
		if len(id) != 36 {
			t.Fatalf("new printed %q; want a fresh UUID", id)
		}
		var in struct {
			ID         string  `json:"id"`
			Cwd        string  `json:"cwd"`
			Name       *string `json:"name"`
			EntryCount int     `json:"entryCount"`
			LeafID     *string `json:"leafId"`
		}
		decode(t, ok(t, "--db", db, "info", id, "--json"), &in)
		if in.ID != id || in.Cwd != here || in.Name != nil || in.EntryCount != 0 || in.LeafID != nil {
			t.Errorf("info of the new session = %+v; want id %s, cwd %s (the current directory), no name, no entry", in, id, here)
		}

		named := ok(t, "--db", db, "new", "--id", "nightly.run-1", "--cwd", elsewhere, "--name", "nightly\ntriage",
			"--parent-session", id, "--metadata", `{"ticket":7}`, "--json")
		if info := ok(t, "--db", db, "info", "nightly.run-1", "--json"); named != info {
			t.Errorf("new --json printed\n%s\ninfo --json prints\n%s", named, info)
		}
		var rows []struct {
			ID            string          `json:"id"`
			Name          string          `json:"name"`
			Cwd           string          `json:"cwd"`
			Entries       int             `json:"entries"`
			ParentSession string          `json:"parentSession"`
			Metadata      json.RawMessage `json:"metadata"`
		}
		decode(t, ok(t, "--db", db, "ls", "--json", "--cwd", elsewhere), &rows)
		if len(rows) != 1 || rows[0].ID != "nightly.run-1" || rows[0].Name != "nightly triage" || rows[0].Cwd != elsewhere ||
			rows[0].Entries != 1 || rows[0].ParentSession != id || string(rows[0].Metadata) != `{"ticket":7}` {
			t.Errorf("ls --json --cwd %s = %+v; want the named session, its one entry its name, its parent %s and metadata", elsewhere, rows, id)
		}
		if out := ok(t, "--db", db, "ls"); !strings.Contains(out, "nightly triage") || !strings.Contains(out, elsewhere) || !strings.Contains(out, id[:8]) {
			t.Errorf("ls shows\n%s\nwant both sessions, the named one with its name and cwd", out)
		}

		r := runCmd(t, `{"type":"message","message":{"role":"user","content":"Hello"}}`+"\n", "--db", db, "append", id)
		if r.code != 0 {
			t.Fatalf("append to the new session: exit %d, %s", r.code, r.stderr)
		}
		decode(t, ok(t, "--db", db, "info", id, "--json"), &in)
		if in.EntryCount != 1 || in.LeafID == nil || *in.LeafID != strings.TrimSpace(r.stdout) {
			t.Errorf("info after append = %+v; want one entry, the leaf %s", in, r.stdout)
		}
	})
}

// TestNewRefuses: a malformed command line is exit status 2 (an id pi
// refuses, a flag without its value, an empty value, a name of white
// space alone, metadata that is not JSON, an argument), an id in use 1; each says what is wrong and
// makes no session.
func TestNewRefuses(t *testing.T) {
	t.Parallel()
	onCLIEngines(t, func(t *testing.T, db string) {
		ok(t, "--db", db, "new", "--id", "taken")
		for _, c := range []struct {
			args []string
			code int
			want string
		}{
			{[]string{"--id", "taken"}, 1, "session taken already exists"},
			{[]string{"--id", "taken", "--name", "again"}, 1, "choose another --id"},
			{[]string{"--id", "-rf"}, 2, `--id: invalid session header: id "-rf": want letters`},
			{[]string{"--id", "a b"}, 2, `id "a b"`},
			{[]string{"--id", "s.jsonl"}, 2, `not ending in ".jsonl"`},
			{[]string{"--id", ""}, 2, `"--id" flag: empty`},
			{[]string{"--cwd"}, 2, "flag needs an argument: --cwd"},
			{[]string{"--cwd", ""}, 2, `"--cwd" flag: empty`},
			{[]string{"--name", ""}, 2, `"--name" flag: empty`},
			{[]string{"--name", " \r\n\t "}, 2, `"--name" flag: only white space, which names nothing`},
			{[]string{"--metadata", "{nope"}, 2, "--metadata: not valid JSON"},
			{[]string{"--parent-session", "p\xff"}, 2, "invalid session header: parentSession is not valid UTF-8"},
			{[]string{"--cwd", "/w\xff"}, 2, "invalid session header: cwd is not valid UTF-8"},
			{[]string{"extra"}, 2, "new takes no arguments, got 1 argument"},
		} {
			r := runCmd(t, "", append([]string{"--db", db, "new"}, c.args...)...)
			if r.code != c.code || r.stdout != "" || !strings.Contains(r.stderr, c.want) {
				t.Errorf("new %q: exit %d, stdout %q, stderr %q; want exit %d, nothing printed, an error with %q", c.args, r.code, r.stdout, r.stderr, c.code, c.want)
			}
		}
		var rows []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		}
		decode(t, ok(t, "--db", db, "ls", "--json"), &rows)
		if len(rows) != 1 || rows[0].ID != "taken" || rows[0].Name != "" {
			t.Errorf("ls after the refusals = %+v; want the one session made, unnamed", rows)
		}
	})
}

// TestNewMakesTheDatabase: new, the way a script starts, makes a SQLite
// file that does not exist, as import does.
func TestNewMakesTheDatabase(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	if _, err := os.Stat(db); err == nil {
		t.Fatalf("%s exists before the test", db)
	}
	id := strings.TrimSpace(ok(t, "--db", db, "new", "--cwd", filepath.Dir(db)))
	if out := ok(t, "--db", db, "ls"); !strings.Contains(out, id[:8]) {
		t.Errorf("ls after new on a fresh file:\n%s\nwant %s", out, id)
	}
}

// TestForkIDCwdJSON: fork takes the new session's --id and --cwd, as new
// and the HTTP API's fork do, and --json prints its info as info --json
// does; without --cwd the fork keeps the source's. An id pi refuses is
// exit status 2, one in use 1, and neither makes a session.
func TestForkIDCwdJSON(t *testing.T) {
	t.Parallel()
	elsewhere := t.TempDir()
	onCLIEngines(t, func(t *testing.T, db string) {
		ok(t, "--db", db, "import", demoFile)
		const src = "0198f2a4"
		out := ok(t, "--db", db, "fork", src, "--id", "retry-2", "--cwd", elsewhere, "--json")
		if info := ok(t, "--db", db, "info", "retry-2", "--json"); out != info {
			t.Errorf("fork --json printed\n%s\ninfo --json prints\n%s", out, info)
		}
		var in struct{ ID, Cwd, ParentSession string }
		decode(t, out, &in)
		if in.ID != "retry-2" || in.Cwd != elsewhere || !strings.HasPrefix(in.ParentSession, src) {
			t.Errorf("fork --id --cwd made %+v; want id retry-2, cwd %s, parent %s…", in, elsewhere, src)
		}
		var srcInfo struct{ Cwd string }
		decode(t, ok(t, "--db", db, "info", src, "--json"), &srcInfo)
		id := strings.TrimSpace(ok(t, "--db", db, "fork", src))
		decode(t, ok(t, "--db", db, "info", id, "--json"), &in)
		if in.Cwd != srcInfo.Cwd {
			t.Errorf("fork without --cwd made cwd %q; want the source's, %q", in.Cwd, srcInfo.Cwd)
		}
		for _, c := range []struct {
			args []string
			code int
			want string
		}{
			{[]string{"--id", "retry-2"}, 1, "session retry-2 already exists"},
			{[]string{"--id", "bad id"}, 2, `--id: invalid session header: id "bad id"`},
			{[]string{"--cwd", ""}, 2, `"--cwd" flag: empty`},
		} {
			r := runCmd(t, "", append([]string{"--db", db, "fork", src}, c.args...)...)
			if r.code != c.code || r.stdout != "" || !strings.Contains(r.stderr, c.want) {
				t.Errorf("fork %q: exit %d, stdout %q, stderr %q; want exit %d, an error with %q", c.args, r.code, r.stdout, r.stderr, c.code, c.want)
			}
		}
		var rows []json.RawMessage
		decode(t, ok(t, "--db", db, "ls", "--json"), &rows)
		if len(rows) != 3 {
			t.Errorf("ls lists %d sessions; want 3: the source and two forks", len(rows))
		}
	})
}
