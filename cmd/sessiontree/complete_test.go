package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
)

// TestCompleteHostileIDs checks that completion offers only ids the
// command takes as ids and that show as they are: a session file may hold
// any id, and a candidate goes to the user's shell, which lists it on the
// terminal and inserts it on the command line. An id with an escape
// sequence or a bidi override would act on the terminal (and reorder the
// command line after it), one with a tab or a line break would break the
// completion protocol's line, one with white space the command refuses,
// and one with "/" or ending in .jsonl the command reads as a file path.
func TestCompleteHostileIDs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := newDB(t)
	hostile := []string{"zz/cd", "zzx.jsonl", "zz\u202ecd", "zz\u2066cd", "zz\x1b[2J", "zz\u009b2J", "zz\tq", "zz\nq", "zz q"}
	for i, id := range append(hostile, "zzok") {
		head, _ := json.Marshal(map[string]any{"type": "session", "version": 3, "id": id, "timestamp": "2025-06-01T09:00:00.000Z", "cwd": "/w"})
		file := filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i))
		writeFile(t, file, string(head)+"\n"+`{"type":"message","id":"e1","parentId":null,"timestamp":"2025-06-01T09:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}`+"\n")
		ok(t, "--db", db, "import", file)
	}
	r := runCmd(t, "", "--db", db, "__complete", "tree", "zz")
	if r.code != 0 {
		t.Fatalf("__complete tree zz: exit %d, %q", r.code, r.stderr)
	}
	if want := "zzok\thi\n:4\n"; r.stdout != want {
		t.Errorf("__complete tree zz printed %q; want %q (only the id the command takes as it is)", r.stdout, want)
	}
}
