package reliability_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/sessiontree/sessiontree/internal/testdb"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/migrate"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/storetest"
)

func init() {
	childRoles["open-new"] = openNewChild
}

// openNewChild opens the stores at spec.DB/0/sessions.db,
// spec.DB/1/sessions.db, ... up to spec.N of them, which do not exist
// yet: each when the parent says go, the even ones at once, the k-th odd
// one after a pause of k×spec.Big microseconds. It says "ready" before
// each and "opened" after, and stops at the first that fails.
func openNewChild(ctx context.Context, spec childSpec) error {
	in := bufio.NewReader(os.Stdin)
	for k := range spec.N {
		printLine("ready")
		if _, err := in.ReadString('\n'); err != nil {
			return nil // the parent is done
		}
		if k%2 == 1 {
			time.Sleep(time.Duration(k/2*spec.Big) * time.Microsecond)
		}
		s, err := store.Open(ctx, filepath.Join(spec.DB, strconv.Itoa(k), "sessions.db"), store.Options{})
		if err != nil {
			return fmt.Errorf("database %d: %w", k, err)
		}
		if err := s.Close(); err != nil {
			return err
		}
		printLine("opened")
	}
	return nil
}

// TestConcurrentCreate starts several processes that open a series of
// database files that do not exist yet, each file by all of them at
// once: every other file at the same moment, so that they make it and
// switch it to WAL together, and the k-th of the others with the i-th
// process k×i×70µs after the first, up to a few milliseconds apart, so
// that some come while another one migrates.
// Every process opens every file (none refuses the file another is
// making as foreign, nor gives up on it as busy), each schema is made
// once, and each database is sound.
func TestConcurrentCreate(t *testing.T) {
	t.Parallel()
	procs, files := pick(6, 6, 8), pick(12, 60, 200)
	if storetest.RaceEnabled && currentLevel() != levelFull {
		files = 12 // each open takes ten times as long
	}
	migs, err := migrate.Load(migrate.Files)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var cs []*child
	for i := range procs {
		cs = append(cs, startChild(t, childSpec{Role: "open-new", DB: dir, N: files, Big: i * 70}))
	}
	alive := make([]bool, procs)
	var failed []string
	fail := func(i int, c *child) {
		alive[i] = false
		failed = append(failed, fmt.Sprintf("process %d: %v: %s", i, c.wait(), strings.Join(c.rest(), " | ")))
	}
	for i, c := range cs {
		alive[i] = true
		if line, ok, _ := c.next(time.Minute); !ok || line != "ready" {
			fail(i, c)
		}
	}
	for k := range files {
		for i, c := range cs {
			if alive[i] {
				if _, err := c.stdin.Write([]byte("go\n")); err != nil {
					t.Fatal(err)
				}
			}
		}
		for i, c := range cs {
			if !alive[i] {
				continue
			}
			want := []string{"opened", "ready"}
			if k == files-1 {
				want = want[:1]
			}
			for _, w := range want {
				if line, ok, _ := c.next(time.Minute); !ok || line != w {
					fail(i, c)
					break
				}
			}
		}
		path := filepath.Join(dir, strconv.Itoa(k), "sessions.db")
		s := checkDB(t, path, "")
		var n, versions int
		var appID int32
		err := testdb.View(context.Background(), s.Path(), func(tx *sqlx.Tx) error {
			if err := tx.Get(&n, `SELECT count(*) FROM schema_migrations`); err != nil {
				return err
			}
			if err := tx.Get(&versions, `SELECT count(DISTINCT version) FROM schema_migrations`); err != nil {
				return err
			}
			return tx.Get(&appID, `PRAGMA application_id`)
		})
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if n != len(migs) || versions != len(migs) || appID != engine.ApplicationID {
			t.Fatalf("%s: %d migration records of %d versions, application_id %#x; want each of the %d migrations once and %#x",
				path, n, versions, appID, len(migs), engine.ApplicationID)
		}
	}
	for i, c := range cs {
		if alive[i] {
			c.finish(t, time.Minute)
		}
	}
	if len(failed) > 0 {
		t.Fatalf("%d of %d processes opening new databases at once failed:\n%s", len(failed), procs, strings.Join(failed, "\n"))
	}
	t.Logf("%d processes opening the same %d new databases at once, 0 to %.1f ms apart: all opened, each schema made once",
		procs, files, float64((files/2)*(procs-1)*70)/1000)
}

// TestConcurrentImports runs the import of one folder of pi's files in
// several processes at once, three times over: into an empty store (the
// files hold the first half of their lines), once the files have grown to
// their whole, and again with nothing new. Every process exits 0, each
// file is new (then grown) to exactly one of them and unchanged to the
// others, and the store holds each session once, with every entry of its
// file, and passes the check.
func TestConcurrentImports(t *testing.T) {
	t.Parallel()
	procs := pick(2, 4, 4)
	src := filepath.Join(t.TempDir(), "sessions")
	files := piFiles(t)
	if err := os.MkdirAll(src, 0o700); err != nil {
		t.Fatal(err)
	}
	growing := 0 // files whose first half is not all of them
	write := func(half bool) {
		for name, ls := range files {
			if half {
				if h := len(ls)/2 + 1; h < len(ls) {
					ls = ls[:h]
					growing++
				}
			}
			writeFile(t, filepath.Join(src, name), []byte(strings.Join(ls, "")))
		}
	}
	db := filepath.Join(t.TempDir(), "sessions.db")
	cliOK(t, "", "--db", db, "import", t.TempDir()) // the store exists; only the imports race
	for _, round := range []struct {
		name       string
		half       bool
		new, grown int
	}{{"new", true, len(files), 0}, {"grown", false, 0, -1}, {"unchanged", false, 0, 0}} {
		write(round.half)
		if round.grown < 0 {
			round.grown = growing
		}
		var wg sync.WaitGroup
		results := make([]cliResult, procs)
		for i := range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = runCLI(t, "", "--db", db, "import", "--json", src)
			}()
		}
		wg.Wait()
		var newFiles, grown, unchanged int
		for i, r := range results {
			if r.code != 0 {
				t.Fatalf("%s: import %d of %d at once exited %d\nstdout:\n%s\nstderr:\n%s", round.name, i+1, procs, r.code, r.stdout, r.stderr)
			}
			var sum struct {
				New, Grown, Unchanged, Failed, Conflicts int
			}
			if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
				t.Fatalf("import --json: %v\n%s", err, r.stdout)
			}
			if sum.Failed != 0 || sum.Conflicts != 0 {
				t.Fatalf("%s: import %d: %d failed, %d conflicts; want none\n%s", round.name, i+1, sum.Failed, sum.Conflicts, r.stdout)
			}
			newFiles += sum.New
			grown += sum.Grown
			unchanged += sum.Unchanged
		}
		if newFiles != round.new || grown != round.grown || unchanged != procs*len(files)-round.new-round.grown {
			t.Fatalf("%s: %d files new, %d grown and %d unchanged over %d imports of %d files at once; want %d new, %d grown, the rest unchanged",
				round.name, newFiles, grown, unchanged, procs, len(files), round.new, round.grown)
		}
	}
	if out := cliOK(t, "", "--db", db, "check"); !strings.HasPrefix(out, "ok:") {
		t.Fatalf("check after concurrent imports:\n%s", out)
	}
	var rows []struct {
		ID      string
		Entries int
	}
	decodeJSON(t, cliOK(t, "", "--db", db, "ls", "--json", "--limit", "1000"), &rows)
	seen := map[string]bool{}
	entries := 0
	for _, r := range rows {
		if seen[r.ID] {
			t.Errorf("session %s is in the store twice", r.ID)
		}
		seen[r.ID] = true
		entries += r.Entries
	}
	want := 0
	for _, ls := range files {
		want += len(ls) - 1 // the header is not an entry
	}
	if len(rows) != len(files) || entries != want {
		t.Errorf("%d sessions with %d entries in the store; want one per file, %d, with %d entries", len(rows), entries, len(files), want)
	}
	t.Logf("%d processes importing %d files at once, new, grown and unchanged: all exited 0, each file imported once, %d sessions of %d entries, check clean",
		procs, len(files), len(rows), entries)
}

// piFiles reads the session files pi wrote (testdata/pi1): their lines,
// each with its newline, by file name.
func piFiles(t *testing.T) map[string][]string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("..", "testdata", "pi1", "*.jsonl"))
	if err != nil || len(names) == 0 {
		t.Fatalf("testdata/pi1: %v (%d files)", err, len(names))
	}
	out := map[string][]string{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(n)] = strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	}
	return out
}
