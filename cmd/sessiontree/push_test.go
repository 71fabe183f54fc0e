package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPushPull pushes the demo session to a new database, pulls it back
// into a third, checks both read as the source, and that a rerun copies
// nothing.
func TestPushPull(t *testing.T) {
	t.Parallel()
	src, team, other := newDB(t), newDB(t), newDB(t)
	ok(t, "--db", src, "import", "../../view/testdata/demo.jsonl")
	const sid = "0198f2a4-5c1e-7d3a-9b2f-3e4d5c6b7a81"

	out := ok(t, "--db", src, "push", "--to", team)
	want := sid + "  pushed 15 entries\n1 session: 1 pushed (15 entries), 0 up to date, 0 in conflict, 0 claimed, 0 failed, 0 skipped\n"
	if out != want {
		t.Errorf("push = %q; want %q", out, want)
	}
	out = ok(t, "--db", other, "pull", "--from", team, "0198f2")
	if want := sid + "  pulled 15 entries\n"; !strings.HasPrefix(out, want) {
		t.Errorf("pull = %q; want it to start %q", out, want)
	}
	wantLog := ok(t, "--db", src, "export", sid)
	for _, db := range []string{team, other} {
		if diff := cmp.Diff(wantLog, ok(t, "--db", db, "export", sid)); diff != "" {
			t.Errorf("export of %s differs from the source's (-source +copy):\n%s", db, diff)
		}
	}

	var rep struct {
		Sessions []struct {
			Session, Status string
			Pushed          int
		}
	}
	decode(t, ok(t, "--db", src, "push", "--to", team, "--json"), &rep)
	if len(rep.Sessions) != 1 || rep.Sessions[0].Status != "up-to-date" || rep.Sessions[0].Pushed != 0 || rep.Sessions[0].Session != sid {
		t.Errorf("rerun --json = %+v; want the session up to date", rep.Sessions)
	}
}

// TestPushConflictExits1 appends to both copies of a session: the push
// reports the conflict, copies nothing and exits 1.
func TestPushConflictExits1(t *testing.T) {
	t.Parallel()
	src, team := newDB(t), newDB(t)
	ok(t, "--db", src, "import", "../../view/testdata/demo.jsonl")
	ok(t, "--db", src, "push", "--to", team)
	for _, db := range []string{src, team} {
		if r := runCmd(t, `{"type":"custom","customType":"step","data":"`+db+`"}`+"\n", "--db", db, "append", "0198f2a4"); r.code != 0 {
			t.Fatalf("append to %s: exit %d, stderr %q", db, r.code, r.stderr)
		}
	}
	before := ok(t, "--db", team, "export", "0198f2a4")
	r := runCmd(t, "", "--db", src, "push", "--to", team)
	conflict := regexp.MustCompile(`^0198f2a4-\S+  conflict \(pushed 0 entries first\): session 0198f2a4-\S+ differs on the target: entry 16 is \w+, the source's \w+\n`)
	if r.code != 1 || !conflict.MatchString(r.stdout) || r.stderr != "sessiontree: 1 of 1 sessions not pushed in full\n" {
		t.Errorf("push: exit %d, stdout %q, stderr %q; want exit 1 and %s", r.code, r.stdout, r.stderr, conflict)
	}
	if after := ok(t, "--db", team, "export", "0198f2a4"); after != before {
		t.Error("the conflict changed the target")
	}
}

func TestPushUsage(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"push"}, "push needs --to DB"},
		{[]string{"pull", "x"}, "pull needs --from DB"},
		{[]string{"push", "--to", "mysql://db/x"}, `--to: unknown database URL scheme "mysql"`},
		{[]string{"pull", "--from", "mysql://db/x"}, `--from: unknown database URL scheme "mysql"`},
		{[]string{"pull", "--from", "postgres:/db/x"}, `--from: database postgres:/db/x: a PostgreSQL URL starts with postgres://`},
		{[]string{"push", "--to", "file:s.db"}, `--to: database file:s.db: a file URL starts with file://`},
	} {
		r := runCmd(t, "", append([]string{"--db", db}, tt.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.msg) {
			t.Errorf("sessiontree %q: exit %d, stderr %q; want 2 and %q", tt.args, r.code, r.stderr, tt.msg)
		}
	}
}

// TestPushPullSayTheirName: an error of pull says pull, one of push
// says push (the store's messages take the command's word).
func TestPushPullSayTheirName(t *testing.T) {
	t.Parallel()
	here, there := newDB(t), newDB(t)
	ok(t, "--db", there, "import", "../../view/testdata/demo.jsonl")
	for _, tt := range []struct{ args []string }{
		{[]string{"--db", here, "pull", "--from", there, "ffff"}},
		{[]string{"--db", there, "push", "--to", here, "ffff"}},
	} {
		r := runCmd(t, "", tt.args...)
		if want := "sessiontree: " + tt.args[2] + ": session ffff not found\n"; r.code != 1 || r.stderr != want {
			t.Errorf("sessiontree %q: exit %d, stderr %q; want 1 and %q", tt.args[2:], r.code, r.stderr, want)
		}
	}
}

// TestPushPullJSON: push --json and pull --json print one object, every
// session's result and the totals the text's last line says, on both
// engines; with no session, an empty array and zero totals.
func TestPushPullJSON(t *testing.T) {
	t.Parallel()
	onCLIEngines(t, func(t *testing.T, db string) {
		src, back, empty := newDB(t), newDB(t), newDB(t)
		ok(t, "--db", src, "import", "../../view/testdata/demo.jsonl")
		const sid = "0198f2a4-5c1e-7d3a-9b2f-3e4d5c6b7a81"
		type row struct {
			Session, Status string
			Pushed          int64
		}
		type totals struct {
			Sessions, Pushed, UpToDate, Conflict, Claimed, Failed, Skipped int
			Entries                                                        int64
		}
		var rep struct {
			Sessions []row
			Totals   totals
		}
		for _, c := range []struct {
			args     []string
			sessions []row
			totals   totals
		}{
			{[]string{"--db", src, "push", "--to", db}, []row{{sid, "pushed", 15}}, totals{Sessions: 1, Pushed: 1, Entries: 15}},
			{[]string{"--db", src, "push", "--to", db}, []row{{sid, "up-to-date", 0}}, totals{Sessions: 1, UpToDate: 1}},
			{[]string{"--db", back, "pull", "--from", db}, []row{{sid, "pushed", 15}}, totals{Sessions: 1, Pushed: 1, Entries: 15}},
		} {
			rep.Sessions, rep.Totals = nil, totals{}
			decode(t, ok(t, append(c.args, "--json")...), &rep)
			if diff := cmp.Diff(c.sessions, rep.Sessions); diff != "" {
				t.Errorf("%s --json: sessions differ (-want +got):\n%s", strings.Join(c.args[2:], " "), diff)
			}
			if rep.Totals != c.totals {
				t.Errorf("%s --json: totals %+v; want %+v", strings.Join(c.args[2:], " "), rep.Totals, c.totals)
			}
		}
		ok(t, "--db", empty, "import", t.TempDir())
		const none = `{"sessions":[],"totals":{"sessions":0,"entries":0,"pushed":0,"upToDate":0,"conflict":0,"claimed":0,"failed":0,"skipped":0}}` + "\n"
		if out := ok(t, "--db", empty, "push", "--to", db, "--json"); out != none {
			t.Errorf("push --json of no session = %q; want %q", out, none)
		}
	})
}
