package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestExportPage checks export --format md and html: a session of the
// database and the same session read from its file give the same page,
// -o writes the page and (for Markdown) its images beside it, and the
// flags that do not go together are refused.
func TestExportPage(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	for _, fx := range goldenFixtures {
		ok(t, "--db", db, "import", fx.path)
	}
	for _, fx := range goldenFixtures {
		for _, args := range [][]string{{"--format", "md"}, {"--format", "md", "--tree"}, {"--format", "html"}} {
			t.Run(fx.name+strings.Join(args, ""), func(t *testing.T) {
				fromDB := ok(t, append([]string{"--db", db, "export", fx.id[:13]}, args...)...)
				fromFile := ok(t, append([]string{"--db", db, "export", fx.path}, args...)...)
				if fromDB != fromFile {
					t.Errorf("export %s %v differs from the imported session's", fx.path, args)
				}
				if !strings.Contains(fromDB, fx.id) {
					t.Errorf("export %v does not name the session %s", args, fx.id)
				}
			})
		}
	}
	// The demo session's page matches view's golden file, which the
	// command only wires up.
	want, err := os.ReadFile("../../view/testdata/golden/demo.md")
	if err != nil {
		t.Fatal(err)
	}
	if got := ok(t, "--db", db, "export", "0198f2a4-5", "--format", "md", "--tree"); got != string(want) {
		t.Errorf("export --format md --tree of the demo differs from view/testdata/golden/demo.md:\n%s", got)
	}

	dir := t.TempDir()
	md := filepath.Join(dir, "share", "session-003.md")
	if out := ok(t, "--db", db, "export", "01a237bc-c4aa", "--format", "md", "-o", md); out != "" {
		t.Errorf("export -o printed %q; want nothing", out)
	}
	page, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	links := regexp.MustCompile(`\]\(<(session-003_images/[0-9a-f]+\.png)>\)`).FindAllStringSubmatch(string(page), -1)
	if len(links) == 0 {
		t.Fatalf("export -o %s links no image:\n%s", md, page)
	}
	for _, l := range links {
		if fi, err := os.Stat(filepath.Join(dir, "share", l[1])); err != nil || fi.Size() != 8 {
			t.Errorf("image %s beside the page: %v, %v; want the fixture's 8 bytes", l[1], fi, err)
		}
	}
	html := filepath.Join(dir, "session-003.html")
	ok(t, "--db", db, "export", "../../testdata/pi/session-003.jsonl", "--format", "html", "-o", html)
	if b, err := os.ReadFile(html); err != nil || !strings.HasPrefix(string(b), "<!DOCTYPE html>") {
		t.Errorf("export --format html -o: %q..., %v", b[:min(len(b), 40)], err)
	}
	if _, err := os.Stat(filepath.Join(dir, "session-003_images")); !os.IsNotExist(err) {
		t.Errorf("an HTML export wrote an images folder (%v); its images are inline", err)
	}

	// A page written to a device has no folder beside it for images.
	null := filepath.Join(dir, "null.md")
	if err := os.Symlink("/dev/null", null); err != nil {
		t.Fatal(err)
	}
	ok(t, "--db", db, "export", "01a237bc-c4aa", "--format", "md", "-o", null)
	if _, err := os.Stat(filepath.Join(dir, "null_images")); !os.IsNotExist(err) {
		t.Errorf("a page written to /dev/null wrote images beside its link (%v)", err)
	}

	bad := []struct {
		args []string
		msg  string
	}{
		{[]string{"--format", "pdf"}, `^sessiontree: --format must be jsonl, md or html, got "pdf"$`},
		{[]string{"--format", "md", "--for-pi"}, `^sessiontree: --for-pi is for --format jsonl$`},
		{[]string{"--format", "html", "--tree"}, `^sessiontree: --tree is for --format md`},
		{[]string{"--tree"}, `^sessiontree: --tree is for --format md`},
	}
	for _, b := range bad {
		r := runCmd(t, "", append([]string{"--db", db, "export", "0198f2a4-5"}, b.args...)...)
		if r.code != 2 || !regexp.MustCompile(b.msg).MatchString(strings.TrimSuffix(r.stderr, "\n")) || r.stdout != "" {
			t.Errorf("export %v: exit %d, stderr %q, stdout %q; want exit 2 and %s", b.args, r.code, r.stderr, r.stdout, b.msg)
		}
	}
}

// TestOutputIsNotASource checks that export -o and usage --chart refuse to
// write over a file the command reads: the database (through a link too,
// or its -wal file) or the session file exported. The atomic write would
// have replaced it: `export ID -o sessions.db` left one session's JSONL
// where the database was, every other session gone.
func TestOutputIsNotASource(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := newDB(t)
	ok(t, "--db", db, "import", "../../view/testdata/demo.jsonl")
	file := copyFile(t, "../../view/testdata/demo.jsonl", dir)
	link := filepath.Join(dir, "link.db")
	if err := os.Symlink(db, link); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, file)
	for _, args := range [][]string{
		{"--db", db, "export", "0198f2a4", "-o", db},
		{"--db", db, "export", "0198f2a4", "-o", link},
		{"--db", db, "export", "0198f2a4", "-o", db + "-wal"},
		{"--db", db, "export", "0198f2a4", "--format", "html", "-o", db},
		{"--db", db, "export", file, "--format", "md", "-o", file},
		{"--db", db, "usage", "--chart", db},
	} {
		r := runCmd(t, "", args...)
		if r.code != 2 || !strings.Contains(r.stderr, "is a file the command reads") {
			t.Errorf("sessiontree %q: exit %d, stderr %q; want exit 2 refusing to write over what it reads", args, r.code, r.stderr)
		}
	}
	if h := readFile(t, db); !strings.HasPrefix(h, "SQLite format 3\x00") {
		t.Errorf("%s after the refused writes starts %.40q; want the database kept", db, h)
	}
	if readFile(t, file) != before {
		t.Errorf("export %s -o %[1]s changed the session file", file)
	}
}
