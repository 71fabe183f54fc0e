package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestAppendClaim checks append --claim: a second holder and a plain
// append are refused, naming the holder, until the claim is released.
func TestAppendClaim(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ok(t, "--db", db, "import", "../../view/testdata/demo.jsonl")
	const sid = "0198f2a4"
	line := `{"type":"custom","customType":"step"}` + "\n"
	appendAs := func(args ...string) result {
		return runCmd(t, line, append([]string{"--db", db, "append", sid}, args...)...)
	}
	if r := appendAs("--claim", "agent-a"); r.code != 0 || len(strings.Fields(r.stdout)) != 1 {
		t.Fatalf("append --claim agent-a: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	refused := regexp.MustCompile(`^sessiontree: append custom: session 0198f2a4-\S+ is claimed by "agent-a" until \S+Z\n$`)
	if r := appendAs(); r.code != 1 || !refused.MatchString(r.stderr) {
		t.Errorf("append without --claim: exit %d, stderr %q; want exit 1, %s", r.code, r.stderr, refused)
	}
	refused = regexp.MustCompile(`^sessiontree: session 0198f2a4-\S+ is claimed by "agent-a" until \S+Z\n$`)
	if r := appendAs("--claim", "agent-b"); r.code != 1 || !refused.MatchString(r.stderr) || r.stdout != "" {
		t.Errorf("append --claim agent-b: exit %d, stdout %q, stderr %q; want exit 1, %s", r.code, r.stdout, r.stderr, refused)
	}
	// The holder may write again (its claim gets a new fence), then let go.
	if r := appendAs("--claim", "agent-a", "--release"); r.code != 0 {
		t.Fatalf("append --claim agent-a --release: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := appendAs("--claim", "agent-b", "--release"); r.code != 0 {
		t.Errorf("append --claim agent-b after the release: exit %d, stderr %q", r.code, r.stderr)
	}
	for _, bad := range [][]string{{"--release"}, {"--claim", "x", "--claim-ttl", "0s"}, {"--claim", "x", "--claim-ttl", "2ns"}} {
		if r := appendAs(bad...); r.code != 2 {
			t.Errorf("append %q: exit %d, stderr %q; want 2", bad, r.code, r.stderr)
		}
	}
}

// TestRmClaimed checks rm of a session another holder has a live claim
// on: refused, naming the holder, the session kept; --force deletes it.
func TestRmClaimed(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ok(t, "--db", db, "import", "../../view/testdata/demo.jsonl")
	const sid = "0198f2a4"
	if r := runCmd(t, `{"type":"custom","customType":"step"}`+"\n", "--db", db, "append", sid, "--claim", "agent-a"); r.code != 0 {
		t.Fatalf("append --claim agent-a: exit %d, stderr %q", r.code, r.stderr)
	}
	refused := regexp.MustCompile(`^sessiontree: delete sessions: delete session 0198f2a4-\S+: session 0198f2a4-\S+ is claimed by "agent-a" until \S+Z; nothing deleted \(--force deletes it anyway\)\n$`)
	if r := runCmd(t, "", "--db", db, "rm", "--yes", sid); r.code != 1 || !refused.MatchString(r.stderr) || r.stdout != "" {
		t.Errorf("rm of a claimed session: exit %d, stdout %q, stderr %q; want exit 1, %s", r.code, r.stdout, r.stderr, refused)
	}
	ok(t, "--db", db, "info", sid)
	if r := runCmd(t, "", "--db", db, "rm", "--yes", "--force", sid); r.code != 0 || r.stdout != "deleted 1 session\n" {
		t.Errorf("rm --force of a claimed session: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
