package reliability_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/sessiontree/sessiontree/internal/testdb"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/cli"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
)

func init() {
	childRoles["make-files"] = makeFilesChild
}

// makeFilesChild creates every kind of file the library writes, with the
// umask cleared so that only the modes the code asks for count: a
// database in missing folders (with its WAL and shared-memory files), a
// database in an empty file someone else made (0666, as a shell makes it
// under umask 0), an export in missing folders, a session file, a torn
// tail's sidecar, an upgraded legacy file.
func makeFilesChild(ctx context.Context, spec childSpec) error {
	syscall.Umask(0)
	dir := spec.File
	s, err := store.Open(ctx, filepath.Join(dir, "data", "nested", "sessions.db"), store.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	st, err := s.Create(ctx, store.CreateOptions{Cwd: "/private"})
	if err != nil {
		return err
	}
	if _, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).AppendMessage(ctx, userMessage("secret")); err != nil {
		return err
	}
	adopted := filepath.Join(dir, "adopted.db")
	if err := os.WriteFile(adopted, nil, 0o666); err != nil {
		return err
	}
	a, err := store.Open(ctx, adopted, store.Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	if _, err := a.Create(ctx, store.CreateOptions{Cwd: "/private"}); err != nil {
		return err
	}
	if err := s.ExportFile(ctx, st.ID(), filepath.Join(dir, "exports", "deep", "out.jsonl"), store.ExportOptions{}); err != nil {
		return err
	}
	if err := s.ExportFile(ctx, st.ID(), filepath.Join(dir, "exports", "deep", "out.jsonl"), store.ExportOptions{ForPi: true}); err != nil {
		return err // over an existing file: the rename replaces it
	}
	js, err := jsonl.Create(ctx, filepath.Join(dir, "session.jsonl"), sessiontree.SessionMeta{Cwd: "/private"}, jsonl.Options{})
	if err != nil {
		return err
	}
	if _, err := sessiontree.NewSession(js, sessiontree.SessionOptions{}).AppendMessage(ctx, userMessage("secret")); err != nil {
		return err
	}
	js.Close()
	torn := filepath.Join(dir, "torn.jsonl")
	if err := os.WriteFile(torn, append(hLines(hHeader, hMsg("aaaaaaaa", "")), `{"type":"mess`...), 0o600); err != nil {
		return err
	}
	if js, err = jsonl.Open(ctx, torn, jsonl.Options{}); err != nil {
		return err
	}
	js.Close()
	legacy := filepath.Join(dir, "legacy.jsonl")
	v2 := strings.Replace(hHeader, `"version":3`, `"version":2`, 1)
	if err := os.WriteFile(legacy, hLines(v2, hMsg("aaaaaaaa", "")), 0o600); err != nil {
		return err
	}
	if _, err := jsonl.Upgrade(ctx, legacy, jsonl.Options{}); err != nil {
		return err
	}
	// The database stays open (its WAL and shared-memory files exist
	// only then) until the parent has looked.
	printLine("done")
	waitStdin()
	return nil
}

// checkModes walks dir and checks that every file in it is 0600 and every
// folder 0700 (dir itself included), skipping names in except.
func checkModes(t *testing.T, dir string, except ...string) (files, dirs int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		for _, e := range except {
			if d.Name() == e {
				return nil
			}
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
			dirs++
		} else {
			files++
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v; want %v", path, fi.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, dirs
}

// TestFileModes creates every kind of file the library and the command
// write, with the umask cleared: database files (and their WAL and
// shared-memory files) and exported or written session files are 0600,
// the folders made for them 0700, whatever the umask.
func TestFileModes(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "lib")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	c := startChild(t, childSpec{Role: "make-files", File: dir})
	c.expect(t, "done", time.Minute, nil)
	files, dirs := checkModes(t, dir)
	c.finish(t, time.Minute)
	if files < 11 {
		t.Errorf("only %d files made; want two databases with their WAL and shm, two exports, three session files and a sidecar", files)
	}

	// The command, under umask 0 too (through sh, the one way to set it
	// for a command).
	cdir := filepath.Join(t.TempDir(), "cli")
	if err := os.Mkdir(cdir, 0o700); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "in.jsonl")
	writeFile(t, src, hLines(hHeader, hMsg("aaaaaaaa", "")))
	db := filepath.Join(cdir, "x", "y", "sessions.db")
	id := "0190a000-0000-7000-8000-00000000b0b0"
	bin := sessiontreeCommand(t)
	script := `umask 000 && "$0" --db "$1" import "$2" && "$0" --db "$1" export "$3" -o "$4" && "$0" --db "$1" demo >/dev/null &&
: > "$5" && "$0" --db "$5" import "$2" >/dev/null`
	r := runShell(t, script, bin, db, src, id, filepath.Join(cdir, "out", "again", "s.jsonl"), filepath.Join(cdir, "adopted.db"))
	if r != "" {
		t.Fatal(r)
	}
	f2, d2 := checkModes(t, cdir)
	t.Logf("%d files and %d folders made by the library, %d and %d by the command, under umask 0: all 0600 and 0700", files, dirs, f2, d2)
}

// runShell runs script with sh and returns its output when it fails.
func runShell(t *testing.T, script string, args ...string) string {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", script}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Sprintf("sh: %v\n%s", err, out)
	}
	return ""
}

// hostileStrings are texts that break code which builds SQL (or FTS5
// queries, or LIKE patterns) by pasting strings together.
var hostileStrings = []string{
	`'; DROP TABLE entries; --`,
	`" OR "1"="1`,
	`') OR 1=1; --`,
	`Robert'); DELETE FROM sessions WHERE ('1'='1`,
	`100%`,
	`under_score`,
	`%`,
	`_`,
	`\`,
	`\%\_`,
	`*`,
	`NEAR(a b)`,
	`"unbalanced`,
	`a\x00b NUL inside`,
	"tab\tand\nnewline",
	`日本語のテキスト`,
	`emoji 🎉 and \u2028`,
}

// heldSession makes a session as an import stores one, whose id Create
// would refuse (sessiontree.CheckNewSessionID) but a store may hold.
func heldSession(ctx context.Context, s *store.Store, meta sessiontree.SessionMeta, md json.RawMessage) (sessiontree.DatabaseSession, error) {
	var st sessiontree.DatabaseSession
	err := s.Database().Update(ctx, func(tx sessiontree.DatabaseTx) (err error) {
		st, err = tx.NewSession(meta, md)
		return err
	})
	return st, err
}

// headerText is h as a session id or cwd may hold it: a NUL, which
// neither may (sessiontree.CheckSessionMeta), spelled out.
func headerText(h string) string { return strings.ReplaceAll(h, "\x00", `\x00`) }

// TestHostileStrings feeds ids, names, labels, working directories,
// metadata and search text full of quotes, SQL, LIKE wildcards and NUL
// bytes through the store and the command line: everything must come
// back exactly as given (but a NUL in a name or label, a space there by
// sessiontree.DerivedText; a session id or cwd with one is refused),
// filters must match literally, and the
// database must be unharmed. Every SQL statement being parameterized is shown by
// behaviour, not by reading the code.
func TestHostileStrings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), `dir with 'quotes' "and" %25 ? # spaces`, "sessions.db")
	s := openStore(t, path, store.Options{})
	var tables int
	if err := testdb.View(ctx, s.Path(), func(tx *sqlx.Tx) error { return tx.GetContext(ctx, &tables, `SELECT count(*) FROM sqlite_master`) }); err != nil {
		t.Fatal(err)
	}
	plain, err := s.Create(ctx, store.CreateOptions{Cwd: "/plain"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sessiontree.NewSession(plain, sessiontree.SessionOptions{}).SetName(ctx, "plain name"); err != nil {
		t.Fatal(err)
	}

	// Each session is exported and imported again into other.
	other := openStore(t, filepath.Join(t.TempDir(), "other.db"), store.Options{})
	ids := map[string]string{} // hostile string -> session id
	tried := 0
	for i, h := range hostileStrings {
		h := strings.ReplaceAll(h, `\x00`, "\x00")
		sid := fmt.Sprintf("sid-%02d-%s", i, headerText(h))
		meta, _ := json.Marshal(map[string]string{"note": h})
		if h != headerText(h) {
			// A session id or cwd holds no NUL, on every engine.
			_, err := s.Create(ctx, store.CreateOptions{ID: fmt.Sprintf("sid-%02d-%s", i, h), Cwd: "/cwd/" + h})
			var me *sessiontree.InvalidSessionMetaError
			if !errors.As(err, &me) || me.Field != "id" {
				t.Fatalf("Create(id %q) = %v; want an InvalidSessionMetaError naming the id", h, err)
			}
		}
		st, err := heldSession(ctx, s, sessiontree.SessionMeta{ID: sid, Cwd: "/cwd/" + headerText(h)}, meta)
		if err != nil {
			t.Fatalf("NewSession(id %q) = %v", sid, err)
		}
		ids[h] = sid
		sess := sessiontree.NewSession(st, sessiontree.SessionOptions{})
		e, err := sess.AppendMessage(ctx, userMessage("find me: "+h))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sess.SetLabel(ctx, e.ID, "label "+h); err != nil {
			t.Fatal(err)
		}
		if _, err := sess.SetName(ctx, "name "+h); err != nil {
			t.Fatal(err)
		}
		// An entry whose id is the hostile string, through the batch
		// append an import uses.
		raw, _ := json.Marshal(map[string]any{"type": "message", "id": "id-" + h, "parentId": e.ID, "timestamp": "2026-01-01T00:00:00.000Z",
			"message": map[string]any{"role": "user", "content": "entry with a hostile id"}})
		be, err := sessiontree.DecodeEntry(raw)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.AppendBatch(ctx, []sessiontree.Entry{be}); err != nil {
			t.Fatalf("AppendBatch(id %q) = %v", be.ID, err)
		}
		tried += 7 // id, cwd, metadata, message, label, name, entry id
	}

	for h, sid := range ids {
		t.Run(fmt.Sprintf("%q", h), func(t *testing.T) {
			in, err := s.Info(ctx, sid)
			// A name or label keeps a NUL as a space (sessiontree.DerivedText).
			if err != nil || in.ID != sid || in.Cwd != "/cwd/"+headerText(h) || in.Name != sessiontree.DerivedText(sessiontree.CleanName("name "+h)) {
				t.Fatalf("Info(%q) = %+v, %v", sid, in, err)
			}
			var m map[string]string
			if err := json.Unmarshal(in.Metadata, &m); err != nil || m["note"] != h {
				t.Errorf("metadata = %s, %v; want the note back", in.Metadata, err)
			}
			if got, err := s.Resolve(ctx, sid); err != nil || got != sid {
				t.Errorf("Resolve(%q) = %q, %v", sid, got, err)
			}
			page, err := s.List(ctx, store.ListOptions{Cwd: "/cwd/" + headerText(h)})
			if err != nil || len(page.Sessions) != 1 || page.Sessions[0].ID != sid {
				t.Errorf("List(Cwd %q) = %v, %v; want exactly the one session", "/cwd/"+headerText(h), sessionIDs(page), err)
			}
			name := sessiontree.CleanName(h) // line breaks became spaces
			page, err = s.List(ctx, store.ListOptions{Name: name, Limit: store.MaxListLimit})
			if err != nil {
				t.Fatal(err)
			}
			for _, row := range page.Sessions {
				if !strings.Contains(strings.ToLower(row.Name), strings.ToLower(sessiontree.DerivedText(name))) {
					t.Errorf("List(Name %q) returned %q, named %q: the filter is not literal", name, row.ID, row.Name)
				}
			}
			if !containsID(page, sid) {
				t.Errorf("List(Name %q) = %v; want %q among them", name, sessionIDs(page), sid)
			}
			st, err := s.OpenSession(ctx, sid)
			if err != nil {
				t.Fatal(err)
			}
			e, err := st.Entry(ctx, "id-"+h)
			if err != nil || e.ID != "id-"+h {
				t.Fatalf("Entry(%q) = %v, %v", "id-"+h, e.ID, err)
			}
			if got, err := cli.ResolveEntry(ctx, st, "id-"+h); err != nil || got != e.ID {
				t.Errorf("ResolveEntry(%q) = %q, %v", "id-"+h, got, err)
			}
			labels, err := st.Labels(ctx)
			if err != nil || len(labels) != 1 {
				t.Fatalf("Labels() = %v, %v", labels, err)
			}
			for _, l := range labels {
				if want := sessiontree.DerivedText("label " + h); l != want {
					t.Errorf("label %q; want %q", l, want)
				}
			}
			// Search: literally, the hostile text is found in its session
			// (three characters or more make a trigram; shorter ones are
			// scanned for); as FTS5 syntax it is an answer or ErrBadQuery.
			res, err := s.Search(ctx, "find me: "+h, store.SearchOptions{Literal: true, Limit: store.MaxSearchLimit})
			if err != nil {
				t.Errorf("Search(%q, literal) = %v", h, err)
			} else if !hasHit(res.Hits, sid) {
				t.Errorf("Search(%q, literal) = %d hits, none in %q", h, len(res.Hits), sid)
			}
			if _, err := s.Search(ctx, h, store.SearchOptions{}); err != nil && !errors.Is(err, store.ErrBadQuery) {
				t.Errorf("Search(%q) = %v; want hits or ErrBadQuery", h, err)
			}
			if _, err := s.Search(ctx, "find", store.SearchOptions{SessionID: sid, Cwd: "/cwd/" + headerText(h)}); err != nil {
				t.Errorf("Search(session %q) = %v", sid, err)
			}
			// Export and import again, into another store: the same bytes.
			var out bytes.Buffer
			if err := s.Export(ctx, sid, &out, store.ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "export.jsonl")
			writeFile(t, file, out.Bytes())
			rep, err := other.Import(ctx, []string{file}, store.ImportOptions{Mode: jsonl.Strict})
			if err != nil || rep.Count(store.OutcomeNew) != 1 {
				t.Fatalf("re-import of the export = %+v, %v", rep.Files, err)
			}
			var again bytes.Buffer
			if err := other.Export(ctx, sid, &again, store.ExportOptions{}); err != nil || !bytes.Equal(out.Bytes(), again.Bytes()) {
				t.Errorf("export, import, export changed the session (%v)", err)
			}
		})
	}

	// Nothing was dropped, deleted or added behind the store's back.
	var after, sessions, entries int
	err = testdb.View(ctx, s.Path(), func(tx *sqlx.Tx) error {
		if err := tx.GetContext(ctx, &after, `SELECT count(*) FROM sqlite_master`); err != nil {
			return err
		}
		if err := tx.GetContext(ctx, &sessions, `SELECT count(*) FROM sessions`); err != nil {
			return err
		}
		return tx.GetContext(ctx, &entries, `SELECT count(*) FROM entries`)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Four entries a session (message, label, name, batch entry), and
	// the plain session's name.
	if after != tables || sessions != len(hostileStrings)+1 || entries != 4*len(hostileStrings)+1 {
		t.Errorf("after: %d schema objects (want %d), %d sessions (want %d), %d entries (want %d)",
			after, tables, sessions, len(hostileStrings)+1, entries, 4*len(hostileStrings)+1)
	}
	if err := s.Check(ctx, ""); err != nil {
		t.Errorf("Check() = %v", err)
	}
	t.Logf("%d hostile strings, %d values stored through the store, each read back by id, prefix, cwd, name, label, search, export and import", len(hostileStrings), tried)
}

func sessionIDs(p store.Page) []string {
	var out []string
	for _, s := range p.Sessions {
		out = append(out, s.ID)
	}
	return out
}

func containsID(p store.Page, id string) bool {
	for _, s := range p.Sessions {
		if s.ID == id {
			return true
		}
	}
	return false
}

func hasHit(hits []store.Hit, sid string) bool {
	for _, h := range hits {
		if h.SessionID == sid {
			return true
		}
	}
	return false
}

// TestHostileStringsCommandLine does the same through the sessiontree
// command: a session file whose id, cwd, entry ids, labels and name are
// hostile is imported; then names, labels, listing filters, searches and
// SESSION arguments full of quotes and SQL go through the command's
// arguments. Everything round-trips; nothing breaks.
func TestHostileStringsCommandLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "sessions.db")
	evil := `'; DROP TABLE entries; --`
	sid := `0190a000-0000-7000-8000-'quoted"`
	var lines []string
	lines = append(lines, fmt.Sprintf(`{"type":"session","version":3,"id":%s,"timestamp":"2026-01-01T00:00:00.000Z","cwd":%s}`,
		mustJSON(sid), mustJSON("/cwd/"+evil)))
	prev := any(nil)
	for i, h := range hostileStrings {
		h = strings.ReplaceAll(h, `\x00`, "\x00")
		id := fmt.Sprintf("e%02d%s", i, h)
		b, _ := json.Marshal(map[string]any{"type": "message", "id": id, "parentId": prev, "timestamp": "2026-01-01T00:00:01.000Z",
			"message": map[string]any{"role": "user", "content": "say " + h}})
		lines = append(lines, string(b))
		b, _ = json.Marshal(map[string]any{"type": "label", "id": fmt.Sprintf("l%02d%s", i, h), "parentId": id, "timestamp": "2026-01-01T00:00:01.000Z",
			"targetId": id, "label": "label " + h})
		lines = append(lines, string(b))
		prev = fmt.Sprintf("l%02d%s", i, h)
	}
	file := filepath.Join(dir, "evil.jsonl")
	writeFile(t, file, []byte(strings.Join(lines, "\n")+"\n"))

	cliOK(t, "", "--db", db, "import", "--strict", file)
	exported := cliOK(t, "", "--db", db, "export", sid)
	if exported != strings.Join(lines, "\n")+"\n" {
		t.Errorf("export after import differs from the file")
	}
	cliOK(t, "", "--db", db, "name", sid, evil)
	// ENTRY arguments are ids or prefixes without white space; "e04" is
	// the prefix of "e04100%", and "e0_" (a LIKE wildcard) matches nothing.
	cliOK(t, "", "--db", db, "label", sid, "e04", `"; DELETE FROM labels; --`)
	if r := runCLI(t, "", "--db", db, "label", sid, "e0_", "x"); r.code != 1 || !strings.Contains(r.stderr, "not found") {
		t.Errorf("label with ENTRY e0_: exit %d %q; want not found", r.code, r.stderr)
	}
	if r := runCLI(t, "", "--db", db, "label", sid, "e0%", "x"); r.code != 1 || !strings.Contains(r.stderr, "not found") {
		t.Errorf("label with ENTRY e0%%: exit %d %q; want not found", r.code, r.stderr)
	}
	var info struct {
		ID   string `json:"id"`
		Name string `json:"name"`
		Cwd  string `json:"cwd"`
	}
	decodeJSON(t, cliOK(t, "", "--db", db, "info", sid, "--json"), &info)
	if info.ID != sid || info.Name != evil || info.Cwd != "/cwd/"+evil {
		t.Errorf("info = %+v", info)
	}
	var rows []store.SessionInfo
	decodeJSON(t, cliOK(t, "", "--db", db, "ls", "--cwd", "/cwd/"+evil, "--json"), &rows)
	if len(rows) != 1 || rows[0].ID != sid {
		t.Errorf("ls --cwd = %v", rows)
	}
	for _, pattern := range []string{"%", "_", evil, `'`} {
		rows = nil
		decodeJSON(t, cliOK(t, "", "--db", db, "ls", "--name", pattern, "--json"), &rows)
		if want := strings.Contains(evil, pattern); (len(rows) == 1) != want {
			t.Errorf("ls --name %q = %d rows; want the session: %v", pattern, len(rows), want)
		}
	}
	tried := 0
	for i, h := range hostileStrings {
		if strings.Contains(h, `\x00`) {
			continue // an argument cannot hold a NUL byte
		}
		if testing.Short() && i%3 != 0 {
			// -short: a third of them (quotes and SQL, a LIKE wildcard,
			// escaped wildcards, an unbalanced FTS5 quote, CJK text), 3
			// commands each, of the 48 commands that take 2 s of CPU.
			continue
		}
		tried++
		var hits []store.Hit
		decodeJSON(t, cliOK(t, "", "--db", db, "search", "--literal", "--json", "--limit", "1000", "say "+h), &hits)
		if len(hits) == 0 {
			t.Errorf("search --literal %q found nothing", "say "+h)
		}
		r := runCLI(t, "", "--db", db, "search", "--json", h)
		if r.code != 0 && !strings.Contains(r.stderr, "query") {
			t.Errorf("search %q: exit %d %s", h, r.code, r.stderr)
		}
		// As a SESSION argument: not found, or refused as a bad argument
		// (spaces), never anything worse.
		r = runCLI(t, "", "--db", db, "info", h)
		if r.code == 0 || !strings.Contains(r.stderr, "not found") && !strings.Contains(r.stderr, "white space") {
			t.Errorf("info %q: exit %d %q; want not found", h, r.code, r.stderr)
		}
	}
	var tree json.RawMessage
	decodeJSON(t, cliOK(t, "", "--db", db, "tree", sid, "--json"), &tree)
	for _, h := range hostileStrings {
		if !strings.Contains(h, `\x00`) && !bytes.Contains(tree, mustJSONString(h)) {
			t.Errorf("tree --json lacks %q", h)
		}
	}
	if out := cliOK(t, "", "--db", db, "check"); !strings.HasPrefix(out, "ok:") {
		t.Errorf("check = %q", out)
	}
	t.Logf("a session file of %d hostile ids and labels imported and exported byte for byte; %d hostile searches and SESSION arguments", 2*len(hostileStrings), tried)
}

func decodeJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
}

// mustJSON is s as a JSON string.
func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// mustJSONString is s as a JSON string's inside, as the tree's JSON
// writes it.
func mustJSONString(s string) []byte {
	b, _ := json.Marshal(s)
	return b[1 : len(b)-1]
}
