package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestLsNoMessages: a session without a user message with text (only a
// header here) is listed as pi's session list shows it, "(no messages)"
// where a name or first message goes, as ls --json gives its
// firstMessage; the table left the cell empty.
func TestLsNoMessages(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	path := filepath.Join(t.TempDir(), "empty.jsonl")
	header := `{"type":"session","version":3,"id":"0190e5c1-0000-7000-8000-0000000000ee","timestamp":"2026-12-01T10:00:00.000Z","cwd":"/p"}` + "\n"
	if err := os.WriteFile(path, []byte(header), 0o644); err != nil {
		t.Fatal(err)
	}
	ok(t, "--db", db, "import", path)
	out := ok(t, "--db", db, "ls")
	if !regexp.MustCompile(`(?m)^0190e5c1 +\(no messages\) +/p `).MatchString(out) {
		t.Errorf("ls:\n%s\nwant the session's row to show (no messages)", out)
	}
}
