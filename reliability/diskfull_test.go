package reliability_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/store"
)

// fullDiskFiles writes n small pi files (about 4 KB each) into a new
// folder of dir and returns it.
func fullDiskFiles(t *testing.T, dir string, n int) string {
	t.Helper()
	src := filepath.Join(dir, "pi")
	if err := os.Mkdir(src, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		texts := make([]string, 8)
		for j := range texts {
			texts[j] = fmt.Sprintf("sardonyx %d %d %s", i, j, strings.Repeat("lorem ipsum dolor ", 25))
		}
		piFile(t, filepath.Join(src, fmt.Sprintf("s%04d.jsonl", i)), i+1, texts...)
	}
	return src
}

// TestFullDiskReport (issue 13, item 8): when the disk fills up during an
// import, every file's outcome is reported and the error that stops the
// search index after it comes after the report (the command used to
// print nothing, not even with --json, though most files had failed), and
// a full disk is named as such (sessiontree.ErrDiskFull, "disk full"), not
// as SQLite's code. What was committed before stays, whole: the database
// checks clean and, with room again, the same import finishes the rest.
func TestFullDiskReport(t *testing.T) {
	t.Parallel()
	// 60 files already fill the 256 KiB database, and the 1 MiB file
	// system, partway (some files new, some failed), which is what the
	// report must survive; the full run has the 200.
	n := pick(60, 60, 200)
	t.Run("store", func(t *testing.T) {
		// The database's size bounded (engine.Options.MaxSize, SQLite's
		// max_page_count) fills as a disk does.
		ctx := context.Background()
		dir := t.TempDir()
		src := fullDiskFiles(t, dir, n)
		db := filepath.Join(dir, "sessions.db")
		s, err := store.Open(ctx, db, store.Options{Engine: engine.Options{MaxSize: 256 << 10}})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := s.Import(ctx, []string{src}, store.ImportOptions{})
		if err != nil {
			t.Fatalf("Import on a full database: %v; want a report", err)
		}
		failed := rep.Count(store.OutcomeFailed)
		if len(rep.Files) != n || failed == 0 || rep.Count(store.OutcomeNew) == 0 {
			t.Fatalf("Import on a database that fills: %d files reported, %d new, %d failed; want all %d, some of each", len(rep.Files), rep.Count(store.OutcomeNew), failed, n)
		}
		for _, f := range rep.Files {
			if f.Outcome == store.OutcomeFailed && (!errors.Is(f.Err, sessiontree.ErrDiskFull) || !strings.Contains(f.Err.Error(), "disk full")) {
				t.Fatalf("%s failed with %v; want ErrDiskFull, saying disk full", f.Path, f.Err)
			}
		}
		if _, err := s.Index(ctx, store.IndexOptions{}); !errors.Is(err, sessiontree.ErrDiskFull) {
			t.Errorf("Index on a full database = %v; want ErrDiskFull", err)
		}
		s.Close()
		t.Logf("%d files into a database bounded at 256 KiB: %d new, %d failed with %v", n, rep.Count(store.OutcomeNew), failed, rep.Files[n-1].Err)

		s = checkDB(t, db, "") // room again
		defer s.Close()
		rep, err = s.Import(ctx, []string{src}, store.ImportOptions{})
		if err != nil || rep.Count(store.OutcomeNew) != failed || rep.Count(store.OutcomeUnchanged) != n-failed {
			t.Fatalf("Import again with room: %d new, %d unchanged, %v; want the %d failed new, the rest unchanged", rep.Count(store.OutcomeNew), rep.Count(store.OutcomeUnchanged), err, failed)
		}
		if _, err := s.Index(ctx, store.IndexOptions{}); err != nil {
			t.Fatal(err)
		}
		last := fmt.Sprintf(`"sardonyx %d "`, n-1) // in the last file, which failed
		res, err := s.Search(ctx, last, store.SearchOptions{Limit: store.MaxSearchLimit})
		if err != nil || len(res.Hits) != 8 {
			t.Errorf("Search(%s) after: %d hits, %v; want 8", last, len(res.Hits), err)
		}
	})
	t.Run("command", func(t *testing.T) {
		// A real full file system: a 1 MiB tmpfs, mounted in a mount
		// namespace of the command's own (unprivileged through a user
		// namespace where the system allows it), so the test needs no
		// root and leaves no mount behind.
		dir := t.TempDir()
		// An import commits small files many to a transaction, which
		// writes a page they share to the WAL once for all of them, not
		// once per file: the 60 files fit in the 1 MiB (10 did, one
		// transaction each), three times as many fill it partway.
		n := 3 * n
		src := fullDiskFiles(t, dir, n)
		mnt := filepath.Join(dir, "full")
		if err := os.Mkdir(mnt, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"import", "--json", src}, {"import", src}} {
			out, code := onFullDisk(t, mnt, append([]string{"--db", filepath.Join(mnt, "sessions.db")}, args...)...)
			// The report, then the error, in that order on one stream.
			i := strings.LastIndex(out, "\nsessiontree: ")
			if code != 1 || i < 0 {
				t.Fatalf("sessiontree %q on a full disk: exit %d\n%s\nwant exit 1 and the error last", args, code, head([]byte(out)))
			}
			report, last := out[:i+1], strings.TrimSpace(out[i+1:])
			if !strings.Contains(last, "disk full") || strings.Contains(last, "(13)") && !strings.Contains(last, "disk full:") {
				t.Errorf("sessiontree %q on a full disk ended with %q; want it to say disk full", args, last)
			}
			if args[1] == "--json" {
				var summary struct {
					Files, New, Failed int
					Failures           []struct{ Error string }
				}
				if err := json.Unmarshal([]byte(report), &summary); err != nil {
					t.Fatalf("sessiontree import --json on a full disk printed no report before the error: %v\n%s", err, head([]byte(out)))
				}
				if summary.Files != n || summary.Failed == 0 || summary.New == 0 {
					t.Errorf("report on a full disk: %d files, %d new, %d failed; want all %d, some of each", summary.Files, summary.New, summary.Failed, n)
				}
				for _, f := range summary.Failures {
					if !strings.Contains(f.Error, "disk full") {
						t.Errorf("a file failed with %q; want it to say disk full", f.Error)
						break
					}
				}
				t.Logf("import --json of %d files on a full 1 MiB disk: %d new, %d failed, then %q", n, summary.New, summary.Failed, last)
			} else if !strings.Contains(report, fmt.Sprintf("%d files: ", n)) {
				t.Errorf("sessiontree import on a full disk printed no summary before the error:\n%s", head([]byte(out)))
			}
		}
	})
}

// onFullDisk runs the sessiontree command with a 1 MiB tmpfs mounted on
// dir, in a mount namespace of its own, and returns its stdout and
// stderr together, as written, and its exit status. It skips the test
// where the system allows no such namespace.
func onFullDisk(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	return onSmallDisk(t, dir, `exec "$@" 2>&1`, append([]string{sessiontreeCommand(t)}, args...)...)
}

// onSmallDisk runs the shell script with a 1 MiB tmpfs mounted on dir,
// in a mount namespace of its own, with dir as $0 and args as $1...; it
// returns what the script wrote, and its exit status, as onFullDisk does.
func onSmallDisk(t *testing.T, dir, script string, args ...string) (string, int) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("needs Linux mount namespaces")
	}
	unshare := []string{"unshare", "--user", "--map-root-user", "--mount"}
	if os.Geteuid() == 0 {
		unshare = []string{"unshare", "--mount"}
	}
	const mount = `mount -t tmpfs -o size=1m tmpfs "$0" || exit 125
`
	probe := exec.Command(unshare[0], append(unshare[1:], "sh", "-c", mount, dir)...)
	if out, err := probe.CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small file system in a namespace here (%v: %s)", err, out)
	}
	cmd := exec.Command(unshare[0], append(unshare[1:], append([]string{"sh", "-c", mount + script, dir}, args...)...)...)
	cmd.Env = append(os.Environ(), "SESSIONTREE_DB=/nonexistent/do-not-use.db")
	out, err := cmd.Output()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	t.Fatalf("%q on a full disk: %v", args, err)
	return "", 0
}

// TestFullDiskReads: a database closed before its file system filled up
// (by another program) is read on the full disk, by ls, check and
// context, and every write fails saying the file system is full. SQLite
// alone fails every statement there, reads included ("disk I/O error"):
// it makes the -shm file's first 32 KiB to read a database no process has
// open. No file is made beside the database, and with room again the
// writes work.
func TestFullDiskReads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mnt := filepath.Join(dir, "full")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	// Each step says its exit status after its output.
	const script = `st=$1; db="$0/sessions.db"; exec 2>&1
step() { "$st" --db "$db" "$@"; echo "== $1 exit $?"; }
step import "$2"
dd if=/dev/zero of="$0/fill" bs=4k 2>/dev/null
step ls; step check; step context "$3"
step name "$3" renamed; step import "$4"
echo "== files: $(ls -A "$0" | tr '\n' ' ')"
rm "$0/fill"
step name "$3" renamed; step ls
`
	out, _ := onSmallDisk(t, mnt, script, sessiontreeCommand(t), pi1File(walFile), walID, pi1File(roFile))
	steps := strings.Split(out, "== ")
	want := []struct{ prefix, has string }{
		{"import exit 0", ""},
		{"ls exit 0", walID[:8]},
		{"check exit 0", ""},
		{"context exit 0", ""},
		{"name exit 1", "file system is full"},
		{"import exit 1", "file system is full"},
		{"files: fill sessions.db \n", ""},
		{"name exit 0", ""},
		{"ls exit 0", "renamed"},
	}
	if len(steps) != len(want)+1 {
		t.Fatalf("on a full disk: %d steps; want %d:\n%s", len(steps)-1, len(want), out)
	}
	for i, w := range want {
		step, prev := steps[i+1], steps[i]
		if !strings.HasPrefix(step, w.prefix) || !strings.Contains(prev, w.has) {
			t.Errorf("step %d: %q after %q; want %q after output holding %q", i+1, head([]byte(step)), head([]byte(prev)), w.prefix, w.has)
		}
	}
}
