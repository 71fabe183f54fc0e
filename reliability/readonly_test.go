//go:build unix

package reliability_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/childenv"
	"github.com/sessiontree/sessiontree/store"
)

func init() {
	childRoles["hold-import"] = holdImportChild
	childRoles["read-only-store"] = readOnlyStoreChild
	childRoles["plain-sqlite-read"] = plainSQLiteReadChild
}

// holdImportChild imports spec.File into the store at spec.DB and waits,
// the database open, until the parent kills it: what it imported is in
// the -wal file only, as after a crash.
func holdImportChild(ctx context.Context, spec childSpec) error {
	s, err := store.Open(ctx, spec.DB, store.Options{})
	if err != nil {
		return err
	}
	if _, err := s.Import(ctx, []string{spec.File}, store.ImportOptions{}); err != nil {
		return err
	}
	printLine("imported")
	waitStdin()
	return s.Close()
}

// readOnlyStoreChild opens the store at spec.DB, which cannot be written,
// and checks what the library says: the store opens, DB.ReadOnly says
// why, reads and the check work, and every write fails with an error
// matching sessiontree.ErrReadOnly. It prints "ok" and the reason.
func readOnlyStoreChild(ctx context.Context, spec childSpec) error {
	s, err := store.Open(ctx, spec.DB, store.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	ro := s.DB().ReadOnly()
	if !errors.Is(ro, sessiontree.ErrReadOnly) {
		return fmt.Errorf("DB.ReadOnly() = %v; want an error matching ErrReadOnly", ro)
	}
	page, err := s.List(ctx, store.ListOptions{})
	if err != nil {
		return err
	}
	if len(page.Sessions) != spec.N {
		return fmt.Errorf("List() = %d sessions; want %d", len(page.Sessions), spec.N)
	}
	if err := s.Check(ctx, ""); err != nil {
		return fmt.Errorf("Check() = %v", err)
	}
	if _, err := s.Search(ctx, "logging", store.SearchOptions{}); err != nil {
		return fmt.Errorf("Search() = %v", err)
	}
	if _, err := s.Create(ctx, store.CreateOptions{}); !errors.Is(err, sessiontree.ErrReadOnly) {
		return fmt.Errorf("Create() = %v; want ErrReadOnly", err)
	}
	if _, err := s.Delete(ctx, page.Sessions[0].ID); !errors.Is(err, sessiontree.ErrReadOnly) {
		return fmt.Errorf("Delete() = %v; want ErrReadOnly", err)
	}
	if _, err := s.Import(ctx, []string{spec.File}, store.ImportOptions{}); !errors.Is(err, sessiontree.ErrReadOnly) {
		return fmt.Errorf("Import() = %v; want ErrReadOnly", err)
	}
	st, err := s.OpenSession(ctx, page.Sessions[0].ID)
	if err != nil {
		return err
	}
	if _, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).AppendMessage(ctx, userMessage("x")); !errors.Is(err, sessiontree.ErrReadOnly) {
		return fmt.Errorf("AppendMessage() = %v; want ErrReadOnly", err)
	}
	printLine("ok %s", ro)
	return nil
}

// plainSQLiteReadChild reads the database at spec.DB through SQLite with
// no options, as this program did before it opened databases it cannot
// write read-only: in a writable folder, SQLite makes the -wal and -shm
// files with the database file's mode.
func plainSQLiteReadChild(ctx context.Context, spec childSpec) error {
	u := url.URL{Scheme: "file", Path: spec.DB}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return err
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sessions`).Scan(&n); err != nil {
		return err
	}
	printLine("sessions %d", n)
	return nil
}

// bystander runs commands as a user that file modes hold for: this
// process's own user, or, when that is root (which they do not hold
// for), nobody through runuser.
type bystander struct {
	prefix   []string // runuser -u nobody --, or nothing
	uid, gid int
	dir      string // a folder the bystander may enter, holding the binaries
	cli      string // the sessiontree command, in dir
	test     string // this test binary, in dir
}

// newBystander finds the bystander and gives it copies of the command
// and of this test binary in a folder of its own (the test's temporary
// folders are closed to other users). It skips the test, saying why,
// when this process is root and cannot run anything as another user.
func newBystander(t *testing.T) *bystander {
	t.Helper()
	b := &bystander{uid: os.Getuid(), gid: os.Getgid()}
	if os.Geteuid() == 0 {
		runuser, err := exec.LookPath("runuser")
		if err != nil {
			t.Skip("running as root, which file modes do not hold for, without runuser to run the commands as another user")
		}
		u, err := user.Lookup("nobody")
		if err != nil {
			t.Skipf("running as root, which file modes do not hold for, and there is no user nobody to run the commands as: %v", err)
		}
		b.uid, _ = strconv.Atoi(u.Uid)
		b.gid, _ = strconv.Atoi(u.Gid)
		b.prefix = []string{runuser, "-u", "nobody", "--"}
		if out, err := exec.Command(runuser, "-u", "nobody", "--", "true").CombinedOutput(); err != nil {
			t.Skipf("running as root, which file modes do not hold for, and runuser cannot run a command as nobody here: %v %s", err, out)
		}
	}
	dir, err := os.MkdirTemp("", "reliability-readonly-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Give back what the test took away, so that the folder can go.
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(p, 0o755)
			}
			return nil
		})
		os.RemoveAll(dir)
	})
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b.dir = dir
	b.cli = filepath.Join(dir, "sessiontree")
	b.test = filepath.Join(dir, "reliability.test")
	copyExecutable(t, sessiontreeCommand(t), b.cli)
	copyExecutable(t, os.Args[0], b.test)
	return b
}

func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// folder makes a folder for a case, which the bystander may enter.
func (b *bystander) folder(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(b.dir, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// give makes dir and everything in it the bystander's.
func (b *bystander) give(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, b.uid, b.gid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// run runs the sessiontree command as the bystander.
func (b *bystander) run(t *testing.T, args ...string) cliResult {
	t.Helper()
	return b.exec(t, nil, b.cli, args...)
}

// child runs this test binary's child role as the bystander, to its
// end, and returns its output lines.
func (b *bystander) child(t *testing.T, spec childSpec) ([]string, error) {
	t.Helper()
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	r := b.exec(t, []string{childEnv + "=" + string(raw)}, b.test, "-test.run=^TestChild$", "-test.count=1", "-test.timeout=2m")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 {
		return lines, fmt.Errorf("child %s exited %d:\n%s\n%s", spec.Role, r.code, r.stdout, r.stderr)
	}
	return lines, nil
}

func (b *bystander) exec(t *testing.T, env []string, bin string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv := append(append(append([]string{}, b.prefix...), bin), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = b.dir
	cmd.Env = childenv.Env(append([]string{"SESSIONTREE_DB=/nonexistent/do-not-use.db"}, env...)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := cliResult{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	default:
		t.Fatalf("%q: %v", argv, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("%q did not finish in time (a hang?)", argv)
	}
	return res
}

// snapshot describes every file in dir: name, mode, size and a hash of
// its bytes, one line each; the bytes of a -shm file, shared memory that
// readers write their marks to, do not count.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%s %v", strings.TrimPrefix(p, dir), fi.Mode())
		if fi.Mode().IsRegular() && !strings.HasSuffix(p, "-shm") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %d %x", len(b), sha256.Sum256(b))
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

const (
	roFile   = "real-00.jsonl" // the session the database holds
	roID     = "01a2064d-5dc3-73d4-9a5c-e26f823323b7"
	walFile  = "tiny-user.jsonl" // the session a killed writer left in the -wal file
	walID    = "01a202ad-3c3d-7db9-b1ff-76b6d4d24a39"
	roSearch = "logging" // a word of the first session's
)

// pi1File is the absolute path of a file of testdata/pi1 (the bystander
// runs in a folder of its own).
func pi1File(name string) string {
	p, err := filepath.Abs(filepath.Join("..", "testdata", "pi1", name))
	if err != nil {
		panic(err)
	}
	return p
}

// TestReadOnlyDatabase: a database that cannot be written, because it is
// on a read-only mount, in a folder the user may not write, or its file is
// 0400, each after a clean close, with a -wal and -shm file left by a
// writer that was killed, and with that -wal file alone. Every read
// command works (ls, info, tree, context, branch, search, check, export)
// and sees what the -wal file holds; every write command fails with one
// line saying the database is read-only, and why; the library opens it
// and its writes fail with an error matching sessiontree.ErrReadOnly; and
// no file is made or changed. (In a read-only folder whose -wal and -shm
// files are there and the user's, SQLite can write the database, and
// does.)
func TestReadOnlyDatabase(t *testing.T) {
	t.Parallel()
	b := newBystander(t)
	export, err := os.ReadFile(pi1File(roFile))
	if err != nil {
		t.Fatal(err)
	}
	conditions := []struct {
		name   string
		mount  bool
		make   func(dir, db string) error
		reason string
	}{
		{"read-only folder", false, func(dir, db string) error { return os.Chmod(dir, 0o555) }, "its folder is not writable"},
		{"file 0400", false, func(dir, db string) error { return os.Chmod(db, 0o400) }, "the file is not writable"},
		{"read-only mount", true, func(dir, db string) error { return remountReadOnly(dir) }, "it is on a read-only file system"},
	}
	leftovers := []string{"clean", "-wal and -shm", "-wal alone"}
	for ci, cond := range conditions {
		for li, left := range leftovers {
			if testing.Short() && li != ci {
				continue // -short: each condition once, each with other leftovers
			}
			t.Run(cond.name+"/"+left, func(t *testing.T) {
				// Each case has a folder and a database of its own; together
				// they wait for their commands and children, one at a time
				// they waited 9 times over (45 s of the race run's wall).
				t.Parallel()
				dir := b.folder(t, strings.NewReplacer(" ", "-", "/", "-").Replace(cond.name+"-"+left))
				if cond.mount {
					if err := mountTmpfs(dir); err != nil {
						t.Skipf("a read-only mount cannot be made here: %v", err)
					}
					t.Cleanup(func() { unmount(dir) })
				}
				db := filepath.Join(dir, "sessions.db")
				cliOK(t, "", "--db", db, "import", pi1File(roFile))
				cliOK(t, "", "--db", db, "search", roSearch) // the index caught up
				sessions := 1
				if left != "clean" {
					c := startChild(t, childSpec{Role: "hold-import", DB: db, File: pi1File(walFile)})
					c.expect(t, "imported", time.Minute, nil)
					c.kill()
					sessions++
					if left == "-wal alone" {
						if err := os.Remove(db + "-shm"); err != nil {
							t.Fatal(err)
						}
					}
				}
				b.give(t, dir)
				if err := cond.make(dir, db); err != nil {
					t.Fatal(err)
				}
				before := snapshot(t, dir)

				// Every read command, for one leftover of each condition
				// in the CI run (all in the full run): the others read
				// through the same read-only open, which ls, check and
				// search, reading each part of the store, show working.
				steps := [][]string{{"ls", "--json"}, {"check"}, {"search", roSearch}}
				if currentLevel() == levelFull || currentLevel() == levelCI && left == "-wal alone" {
					steps = append(steps, []string{"info", roID}, []string{"tree", roID}, []string{"context", roID},
						[]string{"branch", roID}, []string{"export", roID})
				}
				for _, args := range steps {
					r := b.run(t, append([]string{"--db", db}, args...)...)
					if r.code != 0 {
						t.Errorf("sessiontree %s exited %d on a read-only database:\n%s%s", args[0], r.code, r.stdout, r.stderr)
						continue
					}
					switch args[0] {
					case "ls":
						var rows []struct{ ID string }
						decodeJSON(t, r.stdout, &rows)
						var got []string
						for _, row := range rows {
							got = append(got, row.ID)
						}
						sort.Strings(got)
						want := []string{roID}
						if sessions == 2 {
							want = []string{walID, roID} // sorted
						}
						if strings.Join(got, " ") != strings.Join(want, " ") {
							t.Errorf("ls lists %v; want %v (the second in the -wal file only)", got, want)
						}
					case "check":
						if !strings.HasPrefix(r.stdout, "ok:") {
							t.Errorf("check on a read-only database:\n%s", r.stdout)
						}
					case "search":
						if !strings.Contains(r.stdout, roID[:8]) {
							t.Errorf("search %s found nothing in %s:\n%s", roSearch, roID, r.stdout)
						}
					case "export":
						if r.stdout != string(export) {
							t.Errorf("export from a read-only database is not the file imported")
						}
					}
				}
				if cond.name == "read-only folder" && left == "-wal and -shm" {
					// The one writable case: the files a write needs are
					// there, the user's, and SQLite writes to them.
					if r := b.run(t, "--db", db, "name", roID, "renamed"); r.code != 0 {
						t.Errorf("name in a read-only folder with writable -wal and -shm files exited %d:\n%s", r.code, r.stderr)
					}
					if r := b.run(t, "--db", db, "info", roID); !strings.Contains(r.stdout, "renamed") {
						t.Errorf("info after the rename:\n%s%s", r.stdout, r.stderr)
					}
					if !t.Failed() {
						t.Logf("%d sessions read by %d commands, and written to: the -wal and -shm files were there to write", sessions, len(steps))
					}
					return
				}
				writes := [][]string{{"name", roID, "renamed"}, {"rm", roID}, {"import", pi1File(walFile)}, {"demo"}}
				if currentLevel() == levelShort || currentLevel() == levelCI && left != "-wal alone" {
					writes = writes[:2]
				}
				for _, args := range writes {
					r := b.run(t, append([]string{"--db", db}, args...)...)
					msg := strings.TrimSpace(r.stderr)
					if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(msg, "is read-only: "+cond.reason) ||
						strings.Contains(msg, "attempt to write") || strings.Contains(msg, "unable to open") {
						t.Errorf("sessiontree %s on a read-only database exited %d with\n%s\nwant 1 and one line saying it is read-only because %s",
							args[0], r.code, r.stderr, cond.reason)
					}
				}
				lines, err := b.child(t, childSpec{Role: "read-only-store", DB: db, File: pi1File(walFile), N: sessions})
				if err != nil {
					t.Error(err)
				} else if t.Failed() {
					t.Logf("library: %s", lines)
				}
				if after := snapshot(t, dir); after != before {
					t.Errorf("the folder changed:\nbefore:\n%s\nafter:\n%s", before, after)
				}
				if !t.Failed() {
					t.Logf("%d sessions read by %d commands and the library, %d writes refused (%s), no file made or changed",
						sessions, len(steps), len(writes)+4, cond.reason)
				}
			})
		}
	}
}

// TestReadOnlyFileWritableAgain: with the database file at 0400, check
// reports no damage and leaves no file behind (SQLite, opened for
// writing, would make a -wal and a -shm file at 0400); once the file is
// 0600 again, writes and the check work, also after a plain SQLite reader
// (this program before) left those 0400 files: the next writable open
// gives them the database file's mode.
func TestReadOnlyFileWritableAgain(t *testing.T) {
	t.Parallel()
	b := newBystander(t)
	dir := b.folder(t, "writable-again")
	db := filepath.Join(dir, "sessions.db")
	cliOK(t, "", "--db", db, "import", pi1File(roFile))
	b.give(t, dir)
	if err := os.Chmod(db, 0o400); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	if r := b.run(t, "--db", db, "check"); r.code != 0 || !strings.HasPrefix(r.stdout, "ok:") {
		t.Errorf("check of a database file at 0400 exited %d:\n%s%s\nwant ok", r.code, r.stdout, r.stderr)
	}
	if after := snapshot(t, dir); after != before {
		t.Errorf("check of a database file at 0400 changed the folder:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	// What a plain SQLite reader leaves.
	if _, err := b.child(t, childSpec{Role: "plain-sqlite-read", DB: db}); err != nil {
		t.Fatal(err)
	}
	for _, side := range []string{"-wal", "-shm"} {
		if fi, err := os.Stat(db + side); err != nil || fi.Mode().Perm() != 0o400 {
			t.Fatalf("after a plain SQLite read of a 0400 file: %s: %v %v; want a 0400 file", side, fi.Mode(), err)
		}
	}
	if err := os.Chmod(db, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"name", roID, "renamed"}, {"check"}, {"info", roID}} {
		r := b.run(t, append([]string{"--db", db}, args...)...)
		if r.code != 0 {
			t.Errorf("sessiontree %s after chmod 600 exited %d:\n%s%s", args[0], r.code, r.stdout, r.stderr)
		}
		if args[0] == "info" && !strings.Contains(r.stdout, "renamed") {
			t.Errorf("info after the rename:\n%s", r.stdout)
		}
	}
	for _, side := range []string{"-wal", "-shm"} {
		if fi, err := os.Stat(db + side); err == nil && fi.Mode().Perm() != 0o600 {
			t.Errorf("%s is %v after a writable open; want 0600 or gone", side, fi.Mode())
		}
	}
}

// TestReadOnlyThroughLink: a database named through a symbolic link
// whose target is in a folder the user may not write, with a -wal file a
// killed writer left beside the target. SQLite places the -wal and -shm
// files beside the file the link leads to, so that is where the checks of
// what can be written, and the choice of how to read, must look: ls
// through the link lists the session in the -wal file too, and a write
// says the database is read-only because its folder is not writable (it
// failed with "unable to open database file", the -wal file beside the
// link missing and the link's folder writable). No file is made or
// changed. With the link's folder read-only too, the read saw the
// database file alone, without the -wal file's session, and said nothing.
func TestReadOnlyThroughLink(t *testing.T) {
	t.Parallel()
	b := newBystander(t)
	dir := b.folder(t, "target")
	db := filepath.Join(dir, "sessions.db")
	cliOK(t, "", "--db", db, "import", pi1File(roFile))
	c := startChild(t, childSpec{Role: "hold-import", DB: db, File: pi1File(walFile)})
	c.expect(t, "imported", time.Minute, nil)
	c.kill()
	if err := os.Remove(db + "-shm"); err != nil {
		t.Fatal(err)
	}
	links := b.folder(t, "links")
	link := filepath.Join(links, "sessions.db")
	if err := os.Symlink(db, link); err != nil {
		t.Fatal(err)
	}
	b.give(t, b.dir)
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	// The link's folder writable, then not: either way the -wal file
	// beside the link is missing.
	for _, linksMode := range []os.FileMode{0o755, 0o555} {
		if err := os.Chmod(links, linksMode); err != nil {
			t.Fatal(err)
		}
		r := b.run(t, "--db", link, "ls", "--json")
		var rows []struct{ ID string }
		if r.code == 0 {
			decodeJSON(t, r.stdout, &rows)
		}
		if r.code != 0 || len(rows) != 2 {
			t.Errorf("link's folder %v: ls through the link exited %d with %d sessions; want 2 (one in the -wal file only)\n%s%s",
				linksMode, r.code, len(rows), r.stdout, r.stderr)
		}
		r = b.run(t, "--db", link, "name", roID, "renamed")
		if r.code != 1 || !strings.Contains(r.stderr, "is read-only: its folder is not writable") {
			t.Errorf("link's folder %v: name through the link exited %d with\n%s\nwant 1, saying the database is read-only as its folder is not writable",
				linksMode, r.code, r.stderr)
		}
	}
	if after := snapshot(t, dir); after != before {
		t.Errorf("the folder changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
