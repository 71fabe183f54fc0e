package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree/store"
)

// TestLsSaysWhenItCut: ls without --limit lists the newest
// store.DefaultListLimit sessions and, when there are more, says so on
// stderr (the JSON on stdout stays an array of those rows), so that a
// script iterating ls --json does not miss the older ones unawares; an
// explicit --limit, met or not, and a list that fits say nothing.
func TestLsSaysWhenItCut(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	for range store.DefaultListLimit {
		ok(t, "--db", db, "new")
	}
	var rows []json.RawMessage
	decode(t, ok(t, "--db", db, "ls", "--json"), &rows) // exactly the default: no note
	ok(t, "--db", db, "new", "--id", "one-more")
	for _, asJSON := range []bool{false, true} {
		args := []string{"--db", db, "ls"}
		if asJSON {
			args = append(args, "--json")
		}
		r := runCmd(t, "", args...)
		if r.code != 0 || r.stderr != "note: the 50 most recently updated sessions; there are more (--limit 0 lists all)\n" {
			t.Errorf("%q with %d sessions: exit %d, stderr %q; want 0 and a note that there are more", args, store.DefaultListLimit+1, r.code, r.stderr)
		}
		if asJSON {
			decode(t, r.stdout, &rows)
			if len(rows) != store.DefaultListLimit {
				t.Errorf("ls --json listed %d rows; want %d", len(rows), store.DefaultListLimit)
			}
		} else if n := strings.Count(r.stdout, "\n"); n != store.DefaultListLimit+1 {
			t.Errorf("ls printed %d lines; want a header and %d rows", n, store.DefaultListLimit)
		}
	}
	decode(t, ok(t, "--db", db, "ls", "--json", "--limit", "0"), &rows)
	if len(rows) != store.DefaultListLimit+1 {
		t.Errorf("ls --limit 0 listed %d rows; want all %d", len(rows), store.DefaultListLimit+1)
	}
	decode(t, ok(t, "--db", db, "ls", "--json", "--limit", "3"), &rows)
	if len(rows) != 3 {
		t.Errorf("ls --limit 3 listed %d rows; want 3", len(rows))
	}
}
