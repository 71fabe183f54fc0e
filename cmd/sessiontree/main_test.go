package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/store"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// The fixed clock of the golden files: an hour and a half after the demo
// fixture's last entry.
var testNow = time.Date(2026, 3, 1, 11, 31, 39, 0, time.UTC)

func TestMain(m *testing.M) {
	// Multi-process tests run this test binary as the command itself.
	if os.Getenv(asMainEnv) == "1" {
		os.Exit(runMain())
	}
	now = func() time.Time { return testNow }
	openStore = sharedStores.open
	// No test may touch the user's own database.
	os.Setenv("SESSIONTREE_DB", filepath.Join(os.TempDir(), "sessiontree-test-must-not-be-used.db"))
	// PostgreSQL for the tests of --db postgres://... (internal/pgtest),
	// which -short leaves out.
	pgtest.SkipPostgresUnderShort()
	os.Exit(pgtest.Main(m))
}

// asMainEnv makes the test binary run as the sessiontree command.
const asMainEnv = "SESSIONTREE_TEST_AS_MAIN"

// result is what one run printed and returned.
type result struct {
	stdout, stderr string
	code           int
}

// runCmd runs the command in-process with stdin as input.
func runCmd(t testing.TB, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return result{out.String(), errb.String(), code}
}

// ok runs the command and fails the test unless it exits 0.
func ok(t testing.TB, args ...string) string {
	t.Helper()
	r := runCmd(t, "", args...)
	if r.code != 0 {
		t.Fatalf("sessiontree %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
	}
	if r.stderr != "" {
		t.Errorf("sessiontree %s: stderr %q; want nothing", strings.Join(args, " "), r.stderr)
	}
	return r.stdout
}

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", name, diff)
	}
}

// newDB returns the path of a fresh database in a temporary directory.
func newDB(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sessions.db")
	t.Cleanup(func() { sharedStores.close(t, path) })
	return path
}

// sharedStores keeps one open store per database file for the in-process
// runs of a test (see openStore). mu guards m.
var sharedStores = &storeCache{m: map[string]*store.Store{}, asked: map[string]store.Options{}}

type storeCache struct {
	mu sync.Mutex
	m  map[string]*store.Store
	// asked are the options the last command asked for, by path.
	asked map[string]store.Options
}

func (c *storeCache) open(ctx context.Context, path string, opts store.Options) (*store.Store, func() error, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked[path] = opts
	if s, ok := c.m[path]; ok {
		return s, func() error { return nil }, nil
	}
	opts.Engine.CheckLookups = afterTestCheck.Engine.CheckLookups
	s, err := store.OpenURL(ctx, path, opts)
	if err != nil {
		return nil, nil, err
	}
	c.m[path] = s
	return s, func() error { return nil }, nil
}

// afterTestCheck opens the shared stores, which are checked after their
// test, with a tenth of the index comparison's default bound: the race
// detector makes each trigram lookup some fifty times dearer, and the
// comparison itself is the engine's to test (store/indexcheck_test.go).
var afterTestCheck = store.Options{Engine: engine.Options{CheckLookups: 500}}

// forget takes the shared store of path out of the cache and returns it.
func (c *storeCache) forget(path string) *store.Store {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.m[path]
	delete(c.m, path)
	return s
}

// close closes the shared store of path, checking the database first.
func (c *storeCache) close(t testing.TB, path string) {
	s := c.forget(path)
	if s == nil {
		return
	}
	if err := s.Check(context.Background(), ""); err != nil {
		t.Errorf("check %s after the test: %v", path, err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("close %s: %v", path, err)
	}
}

// copyFile copies src into dir and returns the copy's path.
func copyFile(t testing.TB, src, dir string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// decode parses JSON output, failing the test on error.
func decode(t testing.TB, out string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("output is not JSON: %v\n%.300s", err, out)
	}
}

// TestSentenceTermText checks an error quoting session text (an id, a
// line of a file) shows its escape sequences harmlessly on stderr.
func TestSentenceTermText(t *testing.T) {
	t.Parallel()
	got := sentence(fmt.Errorf("entry %s: bad", "x\x1b]52;c;aGk=\a\x1b[2J\u009b"))
	got2 := sentence(errors.New("session \x1b[2Jab\x07 not found"))
	for _, s := range []string{got, got2} {
		if strings.ContainsAny(s, "\x1b\a\u009b") {
			t.Errorf("sentence = %q; want its control characters as U+FFFD", s)
		}
	}
	if want := "session \uFFFD[2Jab\uFFFD not found"; got2 != want {
		t.Errorf("sentence = %q; want %q", got2, want)
	}
}

// TestVersion: --version prints what the binary was built from and the
// Go release, and exits 0.
func TestVersion(t *testing.T) {
	out := ok(t, "--version")
	if !strings.HasPrefix(out, "sessiontree ") || !strings.Contains(out, runtime.Version()) || strings.Count(out, "\n") != 1 {
		t.Errorf("--version printed %q; want one line: sessiontree, the build, %s", out, runtime.Version())
	}
}
