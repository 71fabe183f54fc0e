package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestImport checks the summary of import when output is piped (no
// progress bar, no escape codes), idempotence, growth, and the damage
// modes.
func TestImport(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	dir := t.TempDir()
	for _, name := range []string{"session-002.jsonl", "session-010.jsonl", "legacy-v1-linear.jsonl"} {
		copyFile(t, "../../testdata/pi/"+name, dir)
	}
	r := runCmd(t, "", "--db", db, "import", dir)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("import: exit %d, stderr %q; want 0 and nothing (no progress bar when piped)", r.code, r.stderr)
	}
	if strings.ContainsAny(r.stdout, "\x1b\r") {
		t.Errorf("piped import printed escape codes or carriage returns: %q", r.stdout)
	}
	summary := regexp.MustCompile(`^3 files: 3 new, 0 grown, 0 unchanged, 0 failed; 66 entries added in [0-9.]+s \([0-9.]+ MB/s, [0-9,]+ entries/s\)\n` +
		`indexed 66 entries for search in [0-9.]+s \([0-9,]+ entries/s\)\n$`)
	if !summary.MatchString(r.stdout) {
		t.Errorf("import printed %q; want the summary and the indexing line", r.stdout)
	}
	if out := ok(t, "--db", db, "import", dir); !strings.HasPrefix(out, "3 files: 0 new, 0 grown, 3 unchanged, 0 failed; 0 entries added") ||
		strings.Contains(out, "indexed") {
		t.Errorf("second import printed %q; want every file unchanged and nothing indexed", out)
	}
	// pi appends to its files: a grown file imports only its new line.
	grown := filepath.Join(dir, "session-010.jsonl")
	f, err := os.OpenFile(grown, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"custom","customType":"x","id":"feed0001","parentId":"40c4e799","timestamp":"2026-12-02T18:00:00.000Z"}` + "\n")
	f.Close()
	if out := ok(t, "--db", db, "import", dir); !strings.HasPrefix(out, "3 files: 0 new, 1 grown, 2 unchanged, 0 failed; 1 entry added") {
		t.Errorf("import after growth printed %q; want one grown file with one entry", out)
	}

	// A damaged file: --strict fails it, --lenient imports around the bad
	// line; both name the file and the line.
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	lines := strings.SplitAfter(readFile(t, "../../testdata/pi/session-008.jsonl"), "\n")
	lines[len(lines)-2] = "not json\n"
	writeFile(t, bad, strings.Join(lines, ""))
	r = runCmd(t, "", "--db", db, "import", "--strict", bad)
	if r.code != 1 || !strings.Contains(r.stdout, "1 failed") || !strings.Contains(r.stdout, bad+": failed: ") ||
		!strings.Contains(r.stdout, bad+":"+itoa(len(lines)-1)+":") {
		t.Errorf("import --strict of a damaged file: exit %d, stdout %q; want exit 1 and the file and line listed", r.code, r.stdout)
	}
	if r.stderr != "sessiontree: 1 of 1 files could not be imported\n" {
		t.Errorf("import --strict stderr %q", r.stderr)
	}
	r = runCmd(t, "", "--db", db, "import", "--lenient", bad, "--json")
	var s struct {
		New      int
		Entries  int
		Problems []struct {
			File string
			Line int
		}
	}
	decode(t, r.stdout, &s)
	if r.code != 0 || s.New != 1 || len(s.Problems) != 1 || s.Problems[0].File != bad || s.Problems[0].Line != len(lines)-1 {
		t.Errorf("import --lenient --json: exit %d, %+v; want the file imported and its bad line reported", r.code, s)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t testing.TB, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEditing drives the commands that change a session: goto, label,
// name, append, fork, export and rm.
func TestEditing(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ok(t, "--db", db, "import", "../../view/testdata/demo.jsonl")
	const sid = "0198f2a4-5c1e-7d3a-9b2f-3e4d5c6b7a81"
	at := func(args ...string) string { t.Helper(); return ok(t, append([]string{"--db", db}, args...)...) }
	leaf := func() string {
		var info struct{ LeafID *string }
		decode(t, at("info", sid, "--json"), &info)
		if info.LeafID == nil {
			return ""
		}
		return *info.LeafID
	}

	// goto with a summary prints the summary's id, which becomes the leaf.
	id := strings.TrimSpace(at("goto", "0198f2a4-5c1e", "2c6b", "--summary", "Paging is for later."))
	if leaf() != id || len(id) != 8 {
		t.Errorf("goto --summary printed %q, leaf %q; want the new summary as leaf", id, leaf())
	}
	if out := at("goto", sid, "root"); out != "" || leaf() != "" {
		t.Errorf("goto root printed %q, leaf %q; want nothing and a null leaf", out, leaf())
	}
	at("goto", sid, "73c2e19f")

	// label and name; no text clears a label.
	at("label", sid, "d86f", "  final answer  ")
	at("name", sid, "line\nbreaks")
	tree := at("tree", sid)
	if !strings.Contains(tree, "d86f4b07 [final answer] assistant") {
		t.Errorf("tree after label does not show it:\n%s", tree)
	}
	at("label", sid, "d86f4b07")
	if strings.Contains(at("tree", sid), "[final answer]") {
		t.Errorf("label without text did not clear the label")
	}
	var info struct{ Name *string }
	decode(t, at("info", sid, "--json"), &info)
	if info.Name == nil || *info.Name != "line breaks" {
		t.Errorf("name = %v; want %q", info.Name, "line breaks")
	}
	if r := runCmd(t, "", "--db", db, "label", sid, "ffffffff", "x"); r.code != 1 || r.stderr != "sessiontree: Entry ffffffff not found\n" {
		t.Errorf("label of a missing entry: exit %d, %q", r.code, r.stderr)
	}

	// append prints one id per entry, each under the one before.
	in := `{"type":"message","message":{"role":"user","content":"Add --limit too."}}` + "\n\n" +
		`{"type":"thinking_level_change","thinkingLevel":"high"}` + "\n" +
		`{"type":"custom","customType":"note","data":{"keep":[1,2.50,"x"]},"id":"cafe0001","timestamp":"2026-03-01T11:00:00.000Z"}` + "\n"
	r := runCmd(t, in, "--db", db, "append", sid)
	ids := strings.Fields(r.stdout)
	if r.code != 0 || len(ids) != 3 || ids[2] != "cafe0001" {
		t.Fatalf("append: exit %d, stdout %q, stderr %q; want 3 ids, the last cafe0001", r.code, r.stdout, r.stderr)
	}
	var branch []json.RawMessage
	decode(t, at("branch", sid, "--json"), &branch)
	last := string(branch[len(branch)-1])
	want := `{"type":"custom","id":"cafe0001","parentId":"` + ids[1] + `","timestamp":"2026-03-01T11:00:00.000Z","customType":"note","data":{"keep":[1,2.50,"x"]}}`
	if last != want {
		t.Errorf("appended entry = %s; want %s", last, want)
	}
	var c struct{ ThinkingLevel string }
	decode(t, at("context", sid, "--json"), &c)
	if c.ThinkingLevel != "high" {
		t.Errorf("thinking level after append = %q; want high", c.ThinkingLevel)
	}
	// A bad line stops append; what came before it is committed and printed.
	r = runCmd(t, `{"type":"custom","customType":"ok"}`+"\n"+`{"type":"message","parentId":"x","message":{}}`+"\n", "--db", db, "append", sid)
	if r.code != 1 || len(strings.Fields(r.stdout)) != 1 || !strings.Contains(r.stderr, "input line 2:") {
		t.Errorf("append with a bad second line: exit %d, stdout %q, stderr %q; want one id and an error for line 2", r.code, r.stdout, r.stderr)
	}

	// fork: the default copies the active branch; --before a user message
	// stops at its parent; --tree copies everything.
	forked := strings.TrimSpace(at("fork", sid))
	var fi struct {
		ParentSession *string
		LeafID        *string
	}
	decode(t, at("info", forked, "--json"), &fi)
	if fi.ParentSession == nil || *fi.ParentSession != sid {
		t.Errorf("fork's parentSession = %v; want %s", fi.ParentSession, sid)
	}
	before := strings.TrimSpace(at("fork", sid, "--before", "c04e9a55"))
	var entries []struct{ ID string }
	decode(t, at("branch", before, "--json", "--full"), &entries)
	// The two entries before the prompt, and nothing else: as in pi's
	// fork, a name set later on is not carried over.
	if len(entries) != 2 || entries[0].ID != "3f9a0c12" || entries[1].ID != "8b21d4e7" {
		t.Errorf("fork --before c04e9a55 has branch %v; want the two entries before the prompt", entries)
	}
	if r := runCmd(t, "", "--db", db, "fork", sid, "--before", "d86f4b07"); r.code != 1 || !strings.Contains(r.stderr, "not a user message") {
		t.Errorf("fork --before an assistant message: exit %d, %q; want a refusal", r.code, r.stderr)
	}
	whole := strings.TrimSpace(at("fork", sid, "--tree"))
	if a, b := at("tree", sid, "--all"), at("tree", whole, "--all"); a != b {
		t.Errorf("fork --tree draws differently from its source:\n%s\nwant\n%s", b, a)
	}

	// export to a file reads back the same, straight from the file.
	file := filepath.Join(t.TempDir(), "out", "exported.jsonl")
	at("export", sid, "-o", file)
	if a, b := at("context", sid, "--json"), at("context", file, "--json"); a != b {
		t.Errorf("exported file's context differs:\n%s\nwant\n%s", b, a)
	}
	if out := at("export", sid); out != readFile(t, file) {
		t.Errorf("export to stdout differs from export -o")
	}
	if r := runCmd(t, "", "--db", db, "export", file); r.code != 1 || !strings.Contains(r.stderr, "import") {
		t.Errorf("export of a file: exit %d, %q; want a refusal that says to import it", r.code, r.stderr)
	}
	pi := at("export", sid, "--for-pi")
	if strings.Contains(pi, `"type":"leaf"`) {
		t.Errorf("export --for-pi wrote leaf entries")
	}

	// rm deletes without asking when not on a terminal.
	if out := at("rm", forked, before); out != "deleted 2 sessions\n" {
		t.Errorf("rm printed %q", out)
	}
	if r := runCmd(t, "", "--db", db, "info", forked); r.code != 1 {
		t.Errorf("info after rm: exit %d; want 1", r.code)
	}
	if out := at("check"); out != "ok: the database\n" {
		t.Errorf("check printed %q", out)
	}
}

// TestDemo runs the README's first command against a fresh database in the
// user's data directory, found through XDG_DATA_HOME.
func TestDemo(t *testing.T) {
	data := t.TempDir()
	t.Setenv("SESSIONTREE_DB", "")
	t.Setenv("XDG_DATA_HOME", data)
	db := filepath.Join(data, "sessiontree", "sessions.db")
	t.Cleanup(func() { sharedStores.close(t, db) })
	out := ok(t, "demo")
	if !strings.Contains(out, "Created session ") || !strings.Contains(out, db) {
		t.Errorf("demo output does not name the session and %s:\n%s", db, out)
	}
	for _, want := range []string{"[the request] user: Add a --json flag", "(leaf) session_info name: ls --json flag",
		"|\\\n| o ", "[branchSummary · from ", "Starting over: only --json"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	fi, err := os.Stat(filepath.Dir(db))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("data directory mode = %v; want 0700", fi.Mode().Perm())
	}
	if ls := ok(t, "ls"); !strings.Contains(ls, "ls --json flag") {
		t.Errorf("ls after demo does not list the demo session:\n%s", ls)
	}
	ok(t, "check")
	// The demo's ids are fixed, those the docs name: a second demo into
	// the same database shows the one made before, as it is (here with
	// an entry omitted since), saying so and how to make it again.
	if !strings.Contains(out, "Created session 0198f2a4-5c1e-7d3a-9b2f-3e4d5c6b7a81 ") {
		t.Errorf("demo output does not name the demo session 0198f2a4-5c1e-7d3a-9b2f-3e4d5c6b7a81:\n%s", out)
	}
	ok(t, "edit", "0198f2a4", "d86f4b07", "--omit")
	again := ok(t, "demo")
	if !strings.Contains(again, db+" holds the demo session 0198f2a4-5c1e-7d3a-9b2f-3e4d5c6b7a81 already") ||
		!strings.Contains(again, "sessiontree rm 0198f2a4") || !strings.Contains(again, "(omitted)") || strings.Contains(again, "Created session") {
		t.Errorf("a second demo printed:\n%s\nwant the demo made before, with its edit, and how to make it again", again)
	}
	if info := ok(t, "info", "0198f2a4", "--json"); !strings.Contains(info, `"entryCount":15`) {
		t.Errorf("info of the demo after a second demo:\n%s\nwant its 14 entries and the edit", info)
	}
}

// TestSearch finds text across sessions and marks hits off the active
// branch.
func TestSearch(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ok(t, "--db", db, "import", "../../view/testdata/demo.jsonl", "../../testdata/pi/session-003.jsonl")
	var hits []struct {
		SessionID, EntryID string
		OnActiveBranch     bool
	}
	decode(t, ok(t, "--db", db, "search", "paging", "--json"), &hits)
	found := map[string]bool{}
	for _, h := range hits {
		found[h.EntryID] = h.OnActiveBranch
	}
	// The branch summary is on the active branch; the abandoned branch's
	// prompt and answer are not.
	want := map[string]bool{"4a1ce8d2": true, "2c6b8e04": false, "f1047d9a": false}
	for id, active := range want {
		if got, ok := found[id]; !ok || got != active {
			t.Errorf("search paging: entry %s found %v, on active branch %v; want found, %v", id, ok, got, active)
		}
	}
	text := ok(t, "--db", db, "search", "paging", "--session", "0198f2a4")
	if !regexp.MustCompile(`(?m)^\*  0198f2a4  4a1ce8d2  branch_summary  1 hour ago  .*\[paging\]`).MatchString(text) ||
		!regexp.MustCompile(`(?m)^o  0198f2a4  2c6b8e04  user `).MatchString(text) {
		t.Errorf("search text output:\n%s", text)
	}
	if out := ok(t, "--db", db, "search", "paging", "--cwd", "/nowhere"); out != "no hits\n" {
		t.Errorf("search in another cwd printed %q; want no hits", out)
	}
	var none []any
	decode(t, ok(t, "--db", db, "search", "zzzzqqq", "--json"), &none)
	if none == nil || len(none) != 0 {
		t.Errorf("search --json without hits = %v; want []", none)
	}
	if r := runCmd(t, "", "--db", db, "search", "x", "--session", "../../view/testdata/demo.jsonl"); r.code != 1 || !strings.Contains(r.stderr, "import") {
		t.Errorf("search --session FILE: exit %d, %q; want a refusal", r.code, r.stderr)
	}
}

// TestComplete checks shell completion of SESSION arguments: ids from the
// database with their names, and .jsonl files for paths.
func TestComplete(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ok(t, "--db", db, "import", "../../view/testdata/demo.jsonl")
	// Cobra reports the directive on stderr, for debugging completions.
	complete := func(args ...string) string {
		t.Helper()
		r := runCmd(t, "", append([]string{"--db", db, "__complete"}, args...)...)
		if r.code != 0 {
			t.Fatalf("__complete %v: exit %d, %q", args, r.code, r.stderr)
		}
		return r.stdout
	}
	out := complete("tree", "0198")
	if !strings.HasPrefix(out, "0198f2a4-5c1e-7d3a-9b2f-3e4d5c6b7a81\tls --json flag\n") {
		t.Errorf("completion of a session id:\n%s", out)
	}
	if out := complete("tree", "0198f2a4-5c1e-7d3a-9b2f-3e4d5c6b7a81", ""); strings.Contains(out, "0198") {
		t.Errorf("tree completes a second SESSION:\n%s", out)
	}
	if out := complete("info", "./"); !strings.HasPrefix(out, "jsonl\n:8\n") {
		t.Errorf("completion of a path:\n%s", out)
	}
}

// TestImportDefaultFolder imports pi's sessions folder, found through
// PI_CODING_AGENT_DIR, and says so when there is none.
func TestImportDefaultFolder(t *testing.T) {
	db := newDB(t)
	agent := t.TempDir()
	t.Setenv("PI_CODING_AGENT_DIR", agent)
	if out := ok(t, "--db", db, "import"); out != "no pi session files in "+filepath.Join(agent, "sessions")+" (give files or folders to import)\n" {
		t.Errorf("import without pi history printed %q", out)
	}
	project := filepath.Join(agent, "sessions", "--home-user-project-2--")
	if err := os.MkdirAll(project, 0o700); err != nil {
		t.Fatal(err)
	}
	copyFile(t, "../../testdata/pi/session-002.jsonl", project)
	if out := ok(t, "--db", db, "import"); !strings.HasPrefix(out, "1 file: 1 new, 0 grown, 0 unchanged, 0 failed; 33 entries added") {
		t.Errorf("import of pi's folder printed %q", out)
	}
}

// TestEdit drives edit: each of pi's refusals with its message and exit
// status 1, bad flag combinations with status 2, a session file refused as
// read-only, and edits that take an entry out of the context and put new
// content in, seen in context and tree.
func TestEdit(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ok(t, "--db", db, "import", "../../view/testdata/demo.jsonl")
	const sid = "0198f2a4-5c1e-7d3a-9b2f-3e4d5c6b7a81"
	refusals := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"bad replacement", []string{"d86f", "--content-json", `{"content":"x"}`}, 1, "Context edit replacement must be null or contain string/array content"},
		{"replacement not JSON", []string{"d86f", "--content-json", "text"}, 1, "Context edit replacement must be null or contain string/array content"},
		{"empty replacement", []string{"d86f", "--content-json", ""}, 1, "Context edit replacement must be null or contain string/array content"},
		// pi checks the replacement before the target.
		{"bad replacement of a missing entry", []string{"ffffffff", "--content-json", "5"}, 1, "Context edit replacement must be null or contain string/array content"},
		{"missing entry", []string{"ffffffff", "--omit"}, 1, "Entry ffffffff not found"},
		{"off the active branch", []string{"2c6b", "--content", "x"}, 1, "Entry 2c6b8e04 is not on the active branch"},
		{"not editable: model change", []string{"3f9a", "--omit"}, 1, "Entry 3f9a0c12 does not contribute editable model content"},
		{"not editable: branch summary", []string{"4a1ce8d2", "--omit"}, 1, "Entry 4a1ce8d2 does not contribute editable model content"},
		{"empty entry", []string{"", "--omit"}, 2, "empty entry id: bad argument"},
		{"no flag", []string{"d86f"}, 2, "give exactly one of --omit, --content and --content-json"},
		{"two flags", []string{"d86f", "--omit", "--content", "x"}, 2, "give exactly one of --omit, --content and --content-json"},
		{"three flags", []string{"d86f", "--omit", "--content", "x", "--content-json", `"y"`}, 2, "give exactly one of --omit, --content and --content-json"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, "", append([]string{"--db", db, "edit", sid}, tt.args...)...)
			if r.code != tt.code || r.stderr != "sessiontree: "+tt.msg+"\n" || r.stdout != "" {
				t.Errorf("edit %v: exit %d, stdout %q, stderr %q; want %d and %q", tt.args, r.code, r.stdout, r.stderr, tt.code, tt.msg)
			}
		})
	}
	if r := runCmd(t, "", "--db", db, "edit", "../../view/testdata/demo.jsonl", "d86f", "--omit"); r.code != 1 || !strings.HasSuffix(r.stderr, "read-only; import it to change it\n") {
		t.Errorf("edit of a session file: exit %d, %q; want the read-only refusal", r.code, r.stderr)
	}
	if got := ok(t, "--db", db, "info", sid, "--json"); !strings.Contains(got, `"entryCount":15,`) {
		t.Errorf("a refused edit wrote something: %s", got)
	}

	type message struct {
		Role    string
		Content json.RawMessage
	}
	contextOf := func() []message {
		t.Helper()
		var c struct{ Messages []message }
		decode(t, ok(t, "--db", db, "context", sid, "--json"), &c)
		return c.Messages
	}
	before := contextOf()
	last := before[len(before)-1]
	if last.Role != "assistant" {
		t.Fatalf("the demo's context ends with %s; want the assistant's answer", last.Role)
	}

	// --omit drops the answer from the context; the log keeps it.
	id := strings.TrimSpace(ok(t, "--db", db, "edit", sid, "d86f", "--omit"))
	if len(id) != 8 {
		t.Fatalf("edit printed %q; want the new entry's id", id)
	}
	if got := contextOf(); len(got) != len(before)-1 {
		t.Errorf("context after --omit has %d messages; want %d", len(got), len(before)-1)
	}
	tree := ok(t, "--db", db, "tree", sid)
	for _, want := range []string{"* d86f4b07 (omitted) assistant: Starting over", "* " + id + " (leaf) context_edit d86f4b07 omit"} {
		if !strings.Contains(tree, want) {
			t.Errorf("tree after --omit lacks %q:\n%s", want, tree)
		}
	}
	var entries []json.RawMessage
	decode(t, ok(t, "--db", db, "branch", sid, "--json"), &entries)
	want := `"type":"context_edit","id":"` + id + `","parentId":"73c2e19f","timestamp":`
	if got := string(entries[len(entries)-1]); !strings.Contains(got, want) || !strings.HasSuffix(got, `"targetId":"d86f4b07","replacement":null}`) {
		t.Errorf("stored edit = %s; want a context_edit of d86f4b07 with replacement null", got)
	}

	// A later edit wins: a text replacement of an assistant message becomes
	// one text block, as pi stores it.
	ok(t, "--db", db, "edit", sid, "d86f4b07", "--content", "Redacted <answer>.")
	got := contextOf()
	if len(got) != len(before) || string(got[len(got)-1].Content) != `[{"type":"text","text":"Redacted <answer>."}]` {
		t.Errorf("context after --content ends with %s; want the text block", got[len(got)-1].Content)
	}
	if tree := ok(t, "--db", db, "tree", sid); !strings.Contains(tree, "* d86f4b07 (edited) assistant: Starting over") {
		t.Errorf("tree after --content does not mark the entry edited:\n%s", tree)
	}
	// The user's prompt takes a JSON array as it is.
	ok(t, "--db", db, "edit", sid, "c04e", "--content-json", `[{"type":"text","text":"Add --json."}]`)
	got = contextOf()
	for _, m := range got {
		if m.Role == "user" && strings.Contains(string(m.Content), "ls command") {
			t.Errorf("context still holds the edited prompt: %s", m.Content)
		}
	}
	ok(t, "--db", db, "check", sid)
}

// TestEditContentAsPi checks the bytes edit --content stores: the text as
// pi's JSON.stringify writes it, U+2028, U+2029, <, > and & as they are,
// quotes, backslashes and control characters escaped. encoding/json wrote
// U+2028 and U+2029 as \u2028 and \u2029, an entry other than pi's.
func TestEditContentAsPi(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ok(t, "--db", db, "import", "../../view/testdata/demo.jsonl")
	const sid = "0198f2a4-5c1e-7d3a-9b2f-3e4d5c6b7a81"
	ok(t, "--db", db, "edit", sid, "d86f4b07", "--content", "a\u2028b\u2029 <c> & \"d\"\\\n\x01")
	var entries []json.RawMessage
	decode(t, ok(t, "--db", db, "branch", sid, "--json"), &entries)
	// JSON.stringify("a\u2028b\u2029 <c> & \"d\"\\\n\x01") in node.
	const want = `"targetId":"d86f4b07","replacement":{"content":[{"type":"text","text":"a` + "\u2028b\u2029" +
		` <c> & \"d\"\\\n\u0001"}]}}`
	if got := string(entries[len(entries)-1]); !strings.HasSuffix(got, want) {
		t.Errorf("stored edit = %s; want it to end %s, as pi writes it", got, want)
	}
}
