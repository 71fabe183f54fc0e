package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCwdDotInLinkedFolder: pi records a session's cwd as Node's
// process.cwd() gives it, the physical path, even when the shell's
// working directory is reached through a symbolic link (a linked ~/src,
// say). ls --cwd . and search --cwd . in that folder made "." absolute
// with $PWD, the linked path, and so listed none of the sessions pi had
// written there; demo recorded the linked path, which pi never writes.
func TestCwdDotInLinkedFolder(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real, link := filepath.Join(base, "real"), filepath.Join(base, "link")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "s.jsonl")
	lines := `{"type":"session","version":3,"id":"01a2b3c4-0000-7000-8000-000000000001","timestamp":"2026-11-23T12:00:00.000Z","cwd":"` + real + `"}
{"type":"message","id":"aa000001","parentId":null,"timestamp":"2026-11-23T12:00:01.000Z","message":{"role":"user","content":"linked folders"}}
`
	if err := os.WriteFile(file, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	db := newDB(t)
	ok(t, "--db", db, "import", file)
	t.Chdir(link) // sets $PWD to the linked path, as a shell does
	var rows []struct{ ID, Cwd string }
	decode(t, ok(t, "--db", db, "ls", "--cwd", ".", "--json"), &rows)
	if len(rows) != 1 || rows[0].Cwd != real {
		t.Errorf("ls --cwd . in %s = %+v; want the session of %s", link, rows, real)
	}
	var hits []struct{ SessionID string }
	decode(t, ok(t, "--db", db, "search", "linked", "--cwd", ".", "--json"), &hits)
	if len(hits) != 1 {
		t.Errorf("search --cwd . in %s = %+v; want its one hit", link, hits)
	}
	ok(t, "--db", db, "demo")
	decode(t, ok(t, "--db", db, "ls", "--cwd", real, "--json"), &rows)
	if len(rows) != 2 {
		t.Errorf("after demo in %s, ls --cwd %s = %+v; want 2 sessions (demo's cwd as pi records it)", link, real, rows)
	}
}
