package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestInfoMetadata: info shows the metadata a session was made with, as
// ls --json does: info --json as given (null when none, as for a pi
// file), the text output on one "metadata" line, compacted, only when
// there is metadata; a fork without --metadata carries its source's.
func TestInfoMetadata(t *testing.T) {
	t.Parallel()
	onCLIEngines(t, func(t *testing.T, db string) {
		const given = "{ \"ticket\": 7,\n  \"note\": \"two\\nlines\" }"
		id := strings.TrimSpace(ok(t, "--db", db, "new", "--metadata", given))
		plain := strings.TrimSpace(ok(t, "--db", db, "new"))
		var in struct {
			Metadata json.RawMessage `json:"metadata"`
		}
		decode(t, ok(t, "--db", db, "info", id, "--json"), &in)
		var got, want any
		if err := json.Unmarshal(in.Metadata, &got); err != nil {
			t.Fatalf("info --json metadata %q: %v", in.Metadata, err)
		}
		_ = json.Unmarshal([]byte(given), &want)
		if !cmp.Equal(got, want) {
			t.Errorf("info --json metadata = %s; want %s", in.Metadata, given)
		}
		if out := ok(t, "--db", db, "info", plain, "--json"); !strings.Contains(out, `"metadata":null`) {
			t.Errorf("info --json of a session without metadata = %s; want \"metadata\":null", out)
		}

		wantLine := "metadata     {\"ticket\":7,\"note\":\"two\\nlines\"}\n"
		if out := ok(t, "--db", db, "info", id); !strings.Contains(out, wantLine) {
			t.Errorf("info shows\n%s\nwant the line %q", out, wantLine)
		}
		if out := ok(t, "--db", db, "info", plain); strings.Contains(out, "metadata") {
			t.Errorf("info of a session without metadata shows\n%s\nwant no metadata line", out)
		}

		forked := strings.TrimSpace(ok(t, "--db", db, "fork", id))
		if out := ok(t, "--db", db, "info", forked); !strings.Contains(out, wantLine) {
			t.Errorf("info of a fork shows\n%s\nwant its source's metadata, %q", out, wantLine)
		}
	})
	if out := ok(t, "info", "../../testdata/pi/session-002.jsonl", "--json"); !strings.Contains(out, `"metadata":null`) {
		t.Errorf("info --json of a pi file = %s; want \"metadata\":null", out)
	}
}

// TestEmptyOutputs: tree, branch and log say a session has no entries
// where they printed nothing, as context says "(no messages)"; their
// --json prints its empty array. A branch whose leaf is before the first
// entry, a log page after the last entry and a tree of leaf moves alone
// say what they are.
func TestEmptyOutputs(t *testing.T) {
	t.Parallel()
	onCLIEngines(t, func(t *testing.T, db string) {
		empty := strings.TrimSpace(ok(t, "--db", db, "new"))
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"tree", empty}, "(no entries)\n"},
			{[]string{"tree", empty, "--all"}, "(no entries)\n"},
			{[]string{"branch", empty}, "(no entries)\n"},
			{[]string{"branch", empty, "--full"}, "(no entries)\n"},
			{[]string{"log", empty}, "(no entries)\n"},
			{[]string{"log", empty, "--after", "3"}, "(no entries after entry 3)\n"},
			{[]string{"tree", empty, "--json"}, "[]\n"},
			{[]string{"branch", empty, "--json"}, "[]\n"},
			{[]string{"log", empty, "--json"}, "[]\n"},
		} {
			if out := ok(t, append([]string{"--db", db}, c.args...)...); out != c.want {
				t.Errorf("%s = %q; want %q", strings.Join(c.args, " "), out, c.want)
			}
		}

		ok(t, "--db", db, "goto", empty, "root") // a leaf entry, the one entry
		if out := ok(t, "--db", db, "tree", empty); out != "(no entries but moves of the leaf, which --all shows)\n" {
			t.Errorf("tree of leaf moves alone = %q", out)
		}
		if out := ok(t, "--db", db, "tree", empty, "--all"); strings.Contains(out, "no entries") {
			t.Errorf("tree --all of leaf moves alone = %q; want the leaf entry drawn", out)
		}

		id := strings.TrimSpace(ok(t, "--db", db, "new", "--name", "one entry"))
		ok(t, "--db", db, "goto", id, "root")
		if out := ok(t, "--db", db, "branch", id); out != "(no entries on the branch: the leaf is before the first entry)\n" {
			t.Errorf("branch with the leaf before the first entry = %q", out)
		}
		if out := ok(t, "--db", db, "log", id, "--after", "2"); out != "(no entries after entry 2)\n" {
			t.Errorf("log --after 2 of two entries = %q", out)
		}
		if out := ok(t, "--db", db, "log", id, "--after", "1"); strings.Contains(out, "no entries") || strings.Count(out, "\n") != 1 {
			t.Errorf("log --after 1 of two entries = %q; want the second", out)
		}
	})
	// A pi file of a header alone, as pi writes one before the first
	// message, read without the engines.
	file := filepath.Join(t.TempDir(), "empty.jsonl")
	header := `{"type":"session","version":3,"id":"01a237bc-0000-7000-8000-000000000001","timestamp":"2026-12-01T00:00:00.000Z","cwd":"/x"}` + "\n"
	if err := os.WriteFile(file, []byte(header), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"tree", "branch", "log"} {
		if out := ok(t, cmd, file); out != "(no entries)\n" {
			t.Errorf("%s of a header-only file = %q; want %q", cmd, out, "(no entries)\n")
		}
	}
}
