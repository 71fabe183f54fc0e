package main

import (
	"testing"
)

// goldenFixtures are the sessions of the golden files: the demo session with
// fixed ids and times, and two sessions written by pi (several roots, a
// three-way fork, compactions, labels).
var goldenFixtures = []struct{ name, id, path string }{
	{"demo", "0198f2a4-5c1e-7d3a-9b2f-3e4d5c6b7a81", "../../view/testdata/demo.jsonl"},
	{"session-010", "01a237bc-c4d0-765b-aa2e-02c7b521b382", "../../testdata/pi/session-010.jsonl"},
	{"session-003", "01a237bc-c4aa-7424-823d-95976470926c", "../../testdata/pi/session-003.jsonl"},
}

// TestGoldenText checks the text output of ls, info, tree, branch and
// context against golden files, for sessions imported into a database, and
// checks that reading the same session straight from its file prints the
// same.
func TestGoldenText(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	for _, fx := range goldenFixtures {
		ok(t, "--db", db, "import", fx.path)
	}
	golden(t, "ls.txt", ok(t, "--db", db, "ls"))
	golden(t, "ls-cwd.txt", ok(t, "--db", db, "ls", "--cwd", "/home/user/project-2", "--limit", "5"))
	commands := []struct {
		file string
		args []string
	}{
		{"info", []string{"info"}},
		{"tree", []string{"tree"}},
		{"tree-all", []string{"tree", "--all"}},
		{"branch", []string{"branch"}},
		{"branch-full", []string{"branch", "--full"}},
		{"context", []string{"context"}},
	}
	for _, fx := range goldenFixtures {
		for _, c := range commands {
			t.Run(fx.name+"."+c.file, func(t *testing.T) {
				fromDB := ok(t, append([]string{"--db", db, c.args[0], fx.id[:13]}, c.args[1:]...)...)
				golden(t, fx.name+"."+c.file+".txt", fromDB)
				fromFile := ok(t, append([]string{"--db", db, c.args[0], fx.path}, c.args[1:]...)...)
				if fromFile != fromDB {
					t.Errorf("%s of %s differs from the imported session's:\n%s\nwant\n%s", c.args[0], fx.path, fromFile, fromDB)
				}
			})
		}
	}
	// A file pi 1.6.0 wrote, with hand-added context edits: tree marks what
	// the edits in effect at the leaf change, the same from the database
	// and from the file.
	const edited = "../../testdata/pi1/edited-00.jsonl"
	ok(t, "--db", db, "import", edited)
	for file, args := range map[string][]string{"tree": {"tree"}, "tree-all": {"tree", "--all"}} {
		fromDB := ok(t, append([]string{"--db", db, args[0], "01a2052b-1f1f"}, args[1:]...)...)
		golden(t, "pi1-edited-00."+file+".txt", fromDB)
		if fromFile := ok(t, append([]string{"--db", db, args[0], edited}, args[1:]...)...); fromFile != fromDB {
			t.Errorf("%v of %s differs from the imported session's:\n%s\nwant\n%s", args, edited, fromFile, fromDB)
		}
	}
	// --from starts at another entry: the demo's old branch.
	golden(t, "demo.context-from.txt", ok(t, "--db", db, "context", "0198f2a4-5", "--from", "f1047d9a"))
	golden(t, "demo.branch-from.txt", ok(t, "--db", db, "branch", "0198f2a4-5", "--from", "f104", "--full"))
}
