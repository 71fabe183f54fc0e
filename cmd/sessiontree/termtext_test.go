package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBidiNameTextAndJSON checks a session name holding a right-to-left
// override: ls's text shows it as U+FFFD, so the name cannot reverse the
// columns after it, and ls --json keeps it exact.
func TestBidiNameTextAndJSON(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ok(t, "--db", db, "import", "../../view/testdata/demo.jsonl")
	const name = "evil\u202e\u2066 name"
	ok(t, "--db", db, "name", "0198f2a4", name)
	if out := ok(t, "--db", db, "ls"); !strings.Contains(out, "evil\uFFFD\uFFFD name  ") || strings.ContainsAny(out, "\u202e\u2066") {
		t.Errorf("ls printed %q; want the name's bidi controls as U+FFFD", out)
	}
	var rows []struct{ Name string }
	decode(t, ok(t, "--db", db, "ls", "--json"), &rows)
	if len(rows) != 1 || rows[0].Name != name {
		t.Errorf("ls --json names = %+v; want %q exactly", rows, name)
	}
}

// TestCheckOKTermText checks `check PREFIX` names the session it checked,
// whose full id a session file may fill with escape sequences, with them
// shown as U+FFFD.
func TestCheckOKTermText(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, file, `{"type":"session","version":3,"id":"yy\u001b]52;c;aGk=\u0007\u001b[2J","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}`+"\n")
	db := newDB(t)
	ok(t, "--db", db, "import", file)
	if out, want := ok(t, "--db", db, "check", "yy"), "ok: session yy\uFFFD]52;c;aGk=\uFFFD\uFFFD[2J\n"; out != want {
		t.Errorf("check yy printed %q; want %q", out, want)
	}
}
