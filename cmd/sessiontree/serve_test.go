package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree/server"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/storetest"
)

// testToken is the token of the servers these tests start.
const testToken = "test-token"

// newAPI serves the database db (the store the in-process runs share)
// and returns the server's URL.
func newAPI(t testing.TB, db string) string {
	t.Helper()
	s, _, err := openStore(context.Background(), db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := server.New(s, server.Options{Token: testToken, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

// get fetches path with the test token and returns the body, failing
// unless the answer is 200 with JSON.
func get(t testing.TB, base, path string) string {
	t.Helper()
	return getWith(t, testToken, base, path)
}

// getWith is get with another token.
func getWith(t testing.TB, token, base, path string) string {
	t.Helper()
	req, err := http.NewRequest("GET", base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d %s", path, resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("GET %s: Content-Type %q; want application/json", path, ct)
	}
	return string(body)
}

// TestServeAnswersAsTheCommand checks that every GET of the API answers,
// byte for byte, what the matching command prints with --json, for every
// session file pi wrote (testdata/pi and testdata/pi1), imported: ls,
// info, tree, branch (at the leaf and from an entry, cut and full),
// context (with and without its projection, at the leaf and from an
// entry) and search; and that the entries, page after page, are the
// entry lines export writes.
func TestServeAnswersAsTheCommand(t *testing.T) {
	t.Parallel()
	db := newPiDB(t)
	api := newAPI(t, db)
	if got, want := get(t, api, "/api/sessions?limit=1000"), ok(t, "--db", db, "ls", "--json", "--limit", "1000"); got != want {
		t.Errorf("GET /api/sessions differs from ls --json:\n got %.300s\nwant %.300s", got, want)
	}
	for _, dir := range piDirs {
		for _, fx := range storetest.PiFixtures(t, dir) {
			id := fx.Want.SessionID
			t.Run(filepath.Base(dir)+"/"+fx.Name, func(t *testing.T) {
				var full []struct{ ID string }
				decode(t, ok(t, "--db", db, "branch", id, "--full", "--json"), &full)
				from := ""
				if len(full) > 0 {
					from = full[len(full)/2].ID
				}
				checks := []struct {
					path string
					args []string
				}{
					{"", []string{"info"}},
					{"/tree", []string{"tree"}},
					{"/branch", []string{"branch"}},
					{"/branch?full=1", []string{"branch", "--full"}},
					{"/context", []string{"context"}},
					{"/context?projection=1", []string{"context", "--projection"}},
				}
				if from != "" {
					checks = append(checks,
						struct {
							path string
							args []string
						}{"/branch?from=" + from, []string{"branch", "--from", from}},
						struct {
							path string
							args []string
						}{"/context?projection=1&from=" + from, []string{"context", "--projection", "--from", from}})
				}
				for _, c := range checks {
					args := append([]string{"--db", db, c.args[0], id, "--json"}, c.args[1:]...)
					want := ok(t, args...)
					if got := get(t, api, "/api/sessions/"+id+c.path); got != want {
						t.Errorf("GET %s differs from %s:\n got %.300s\nwant %.300s", c.path, strings.Join(c.args, " "), got, want)
					}
				}
				checkEntriesPages(t, api, db, id)
			})
		}
	}
	for _, q := range []string{"the", "error OR test", "日本"} {
		want := ok(t, "--db", db, "search", q, "--json", "--limit", "50")
		if got := get(t, api, "/api/search?limit=50&q="+url.QueryEscape(q)); got != want {
			t.Errorf("GET /api/search?q=%s differs from search --json:\n got %.300s\nwant %.300s", q, got, want)
		}
	}
}

// checkEntriesPages reads the session's entries three at a time, following
// X-Next-Cursor: each page is what log --json prints for it, and together
// they are the entry lines of export.
func checkEntriesPages(t *testing.T, api, db, id string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(ok(t, "--db", db, "export", id), "\n"), "\n")[1:]
	var got []string
	after := "0"
	for page := 0; after != ""; page++ {
		if page > len(lines) {
			t.Fatalf("entries: more pages than entries")
		}
		req, _ := http.NewRequest("GET", api+"/api/sessions/"+id+"/entries?limit=3&after="+after, nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if want := ok(t, "--db", db, "log", id, "--json", "--limit", "3", "--after", after); string(body) != want {
			t.Errorf("entries after %s differ from log --json:\n got %.300s\nwant %.300s", after, body, want)
		}
		var entries []json.RawMessage
		if err := json.Unmarshal(body, &entries); err != nil {
			t.Fatalf("entries after %s: %v", after, err)
		}
		for _, e := range entries {
			got = append(got, string(e))
		}
		after = resp.Header.Get(server.NextCursorHeader)
	}
	if strings.Join(got, "\n") != strings.Join(lines, "\n") {
		t.Errorf("entries of %s differ from export's lines: got %d entries, want %d", id, len(got), len(lines))
	}
}

// TestServeEventsFromAnotherProcess listens to a session's events and
// appends to it with another sessiontree process: the entry arrives as an
// event with the id append printed.
func TestServeEventsFromAnotherProcess(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ok(t, "--db", db, "import", "../../view/testdata/demo.jsonl")
	api := newAPI(t, db)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", api+"/api/sessions/0198f2a4/events", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("events: Content-Type %q", ct)
	}
	events := bufio.NewReader(resp.Body)
	if line, err := events.ReadString('\n'); err != nil || !strings.HasPrefix(line, ":") {
		t.Fatalf("events: first line %q, %v; want the opening comment", line, err)
	}
	cmd := command(t, "--db", db, "append", "0198f2a4")
	cmd.Stdin = strings.NewReader(`{"type":"message","message":{"role":"user","content":"from another process"}}` + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("append in another process: %v", err)
	}
	id := strings.TrimSpace(string(out))
	var ev []string
	for len(ev) < 3 || ev[len(ev)-1] != "" {
		line, err := events.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the event: %v (read %q)", err, ev)
		}
		line = strings.TrimSuffix(line, "\n")
		if !strings.HasPrefix(line, ":") && (line != "" || len(ev) > 0) {
			ev = append(ev, line)
		}
	}
	var e struct{ ID, Type string }
	if len(ev) != 4 || ev[0] != "id: 16" || ev[1] != "event: entry" || json.Unmarshal([]byte(strings.TrimPrefix(ev[2], "data: ")), &e) != nil {
		t.Fatalf("event = %q; want id 16, an entry event and its JSON", ev)
	}
	if e.ID != id || e.Type != "message" {
		t.Errorf("event entry = %+v; want the message %s", e, id)
	}
}

// TestServeCommand runs serve as its own process on a free port: it
// prints the URL with the token, answers with that token, and exits 0 on
// SIGTERM. On loopback it says nothing on stderr; on every interface it
// warns, and a browser that cannot be opened is a warning too.
func TestServeCommand(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ok(t, "--db", db, "import", "../../view/testdata/demo.jsonl")
	for _, c := range []struct {
		name     string
		args     []string
		env      []string
		warnings []string
	}{
		{"loopback", []string{"--addr", "127.0.0.1:0"}, nil, nil},
		{"every interface, no browser", []string{"--addr", "0.0.0.0:0", "--open"}, []string{"PATH=" + t.TempDir()},
			[]string{"warning: listening on 0.0.0.0:", "warning: open a browser"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := command(t, append([]string{"--db", db, "serve"}, c.args...)...)
			cmd.Env = append(cmd.Env, append(c.env, "SESSIONTREE_TOKEN=from-env")...)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil {
				t.Fatalf("serve printed no URL: %v", err)
			}
			_, u, found := strings.Cut(strings.TrimSpace(line), " at ")
			pu, perr := url.Parse(u)
			if !found || perr != nil || pu.Query().Get("token") != "from-env" || pu.Hostname() != "127.0.0.1" {
				t.Fatalf("serve printed %q; want the URL with the token of $SESSIONTREE_TOKEN", line)
			}
			base := pu.Scheme + "://" + pu.Host
			if body := getWith(t, "from-env", base, "/api/sessions/0198f2a4"); !strings.Contains(body, `"entryCount":15`) {
				t.Errorf("GET info = %.200s", body)
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("serve after SIGTERM: %v (stderr %q)", err, stderr.String())
				}
			case <-time.After(20 * time.Second):
				t.Fatal("serve did not stop on SIGTERM")
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if len(c.warnings) == 0 && stderr.Len() != 0 || len(c.warnings) > 0 && len(lines) != len(c.warnings) {
				t.Fatalf("stderr = %q; want %d warnings", stderr.String(), len(c.warnings))
			}
			for i, w := range c.warnings {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("stderr line %d = %q; want it to start %q", i+1, lines[i], w)
				}
			}
		})
	}
}

// TestServeRefusesLimits checks that serve refuses, as a usage error
// naming the flag, a bound that would not bound: New takes 0 for its
// default, which --max-streams 0 must not silently mean.
func TestServeRefusesLimits(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	for _, flag := range [][]string{{"--body-timeout", "0s"}, {"--body-timeout", "-1s"}, {"--max-streams", "0"}, {"--max-streams", "-3"}} {
		r := runCmd(t, "", append([]string{"--db", db, "serve", "--addr", "127.0.0.1:0"}, flag...)...)
		if r.code != 2 || !strings.HasPrefix(r.stderr, "sessiontree: "+flag[0]+" ") {
			t.Errorf("serve %s %s: exit %d, stderr %q; want 2 and a line naming the flag", flag[0], flag[1], r.code, r.stderr)
		}
	}
}

// TestServeRefusesToken checks that serve refuses, as a usage error
// naming the flag, a token the page's header could not carry.
func TestServeRefusesToken(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	r := runCmd(t, "", "--db", db, "serve", "--addr", "127.0.0.1:0", "--token", "a;b")
	if r.code != 2 || !strings.HasPrefix(r.stderr, "sessiontree: --token (or $SESSIONTREE_TOKEN): ") || !strings.Contains(r.stderr, `';'`) {
		t.Errorf("serve --token 'a;b': exit %d, stderr %q; want 2 and a line naming --token and ';'", r.code, r.stderr)
	}
}
