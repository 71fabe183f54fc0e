package main

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestJSONOutputIsUTF8: the --json outputs of a session imported from a
// file that holds bytes that are not UTF-8 in a message
// (testdata/piedge/invalid-utf8) are UTF-8, as JSON must be, with U+FFFD
// where pi reads one: log, branch, tree and context wrote the bytes as
// stored, and so did tail --json.
func TestJSONOutputIsUTF8(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ok(t, "--db", db, "import", "../../testdata/piedge/invalid-utf8.jsonl")
	const id, pi = "0190e5c1", `"bad bytes: ` + "\ufffd\ufffd" + ` end"`
	check := func(what, out string) {
		t.Helper()
		if !utf8.ValidString(out) || !strings.Contains(out, pi) {
			t.Errorf("%s: want UTF-8 holding %s, got %q", what, pi, out)
		}
	}
	for _, cmd := range []string{"log", "branch", "tree", "context"} {
		check(cmd+" --json", ok(t, "--db", db, cmd, id, "--json"))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--db", db, "tail", id, "-n", "1", "--json"}, strings.NewReader(""), &out, &out)
	}()
	if !out.waitFor(10*time.Second, func(l []string) bool { return len(l) >= 1 }) {
		t.Fatalf("tail -n 1 printed %q; want a line", out.lines())
	}
	cancel()
	<-done
	check("tail --json", strings.Join(out.lines(), "\n"))
}
