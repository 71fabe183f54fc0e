package pipkg_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sessiontree/sessiontree/internal/pipkg"
)

func TestPackage(t *testing.T) {
	for _, tc := range []struct{ version, want string }{
		{"1.6.0", "@earendil-works/pi-coding-agent"},
		{"2.0.1", "@earendil-works/pi-coding-agent"},
		{"0.73.1", "@mariozechner/pi-coding-agent"},
	} {
		if got := pipkg.Package(tc.version); got != tc.want {
			t.Errorf("Package(%q) = %q; want %q", tc.version, got, tc.want)
		}
	}
}

// TestInstalled checks where a release goes in a cache and how it is
// recognised: by its package.json's version.
func TestInstalled(t *testing.T) {
	cache := t.TempDir()
	dir, pkgDir := pipkg.Paths(cache, "1.6.0")
	if want := filepath.Join(cache, "pi-coding-agent-1.6.0", "node_modules", "@earendil-works", "pi-coding-agent"); pkgDir != want || filepath.Dir(filepath.Dir(filepath.Dir(pkgDir))) != dir {
		t.Fatalf("Paths = %s, %s; want the package at %s", dir, pkgDir, want)
	}
	if pipkg.Installed(pkgDir, "1.6.0") {
		t.Error("Installed on an empty cache = true")
	}
	if err := os.MkdirAll(pkgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkgDir, "package.json"), []byte(`{"name":"x","version":"1.5.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if pipkg.Installed(pkgDir, "1.6.0") {
		t.Error("Installed with another version's package.json = true")
	}
	// Without install, a missing release is not installed: ErrNotInstalled
	// (or ErrNoNode on a machine without node).
	_, _, err := pipkg.Ensure(context.Background(), cache, "1.6.0", false, t.Logf)
	if !errors.Is(err, pipkg.ErrNotInstalled) && !errors.Is(err, pipkg.ErrNoNode) {
		t.Errorf("Ensure(install=false) on a cache without it = %v; want ErrNotInstalled", err)
	}
	if err := os.WriteFile(filepath.Join(pkgDir, "package.json"), []byte(`{"name":"x","version":"1.6.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if !pipkg.Installed(pkgDir, "1.6.0") {
		t.Error("Installed with its package.json = false")
	}
}

// fakeNPM puts a node and an npm on PATH that install a release of the
// version asked for in about 100 ms (so that concurrent installs
// overlap), writing only its package.json, and counts its runs in
// the returned file.
func fakeNPM(t *testing.T) (runs string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake npm is a shell script")
	}
	bin := t.TempDir()
	runs = filepath.Join(bin, "runs")
	npm := `#!/bin/sh
echo run >> ` + runs + `
while [ "$1" != "--prefix" ]; do shift; done
prefix=$2
for a; do spec=$a; done
pkg=${spec%@*}; version=${spec##*@}
sleep 0.1
mkdir -p "$prefix/node_modules/$pkg"
printf '{"name":"%s","version":"%s"}' "$pkg" "$version" > "$prefix/node_modules/$pkg/package.json"
`
	for name, script := range map[string]string{"npm": npm, "node": "#!/bin/sh\n"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return runs
}

// TestEnsureConcurrentInstalls: installs of one release into one cache
// racing each other (as test packages, run side by side, do on a new
// machine) all succeed, each sees a whole release, and nothing is left
// beside it.
func TestEnsureConcurrentInstalls(t *testing.T) {
	runs := fakeNPM(t)
	cache := t.TempDir()
	const n = 4
	errs := make(chan error, n)
	for range n {
		go func() {
			_, pkgDir, err := pipkg.Ensure(context.Background(), cache, "1.6.0", true, t.Logf)
			if err == nil && !pipkg.Installed(pkgDir, "1.6.0") {
				err = errors.New("Ensure returned before the release was whole")
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if b, err := os.ReadFile(runs); err != nil || len(b) == 0 {
		t.Fatalf("the fake npm never ran (%v)", err)
	}
	left, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].Name() != "pi-coding-agent-1.6.0" {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("cache holds %v; want only pi-coding-agent-1.6.0", names)
	}
}

// TestEnsureReplacesBrokenInstall: a release folder without the
// package (left by an install that failed half way) is replaced by a
// whole install.
func TestEnsureReplacesBrokenInstall(t *testing.T) {
	fakeNPM(t)
	cache := t.TempDir()
	dir, _ := pipkg.Paths(cache, "1.6.0")
	if err := os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, pkgDir, err := pipkg.Ensure(context.Background(), cache, "1.6.0", true, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if !pipkg.Installed(pkgDir, "1.6.0") {
		t.Error("the broken install was not replaced")
	}
}

// outcome is a testing.TB that records whether ForTest skipped or failed
// it; both end its goroutine, as they end a test's.
type outcome struct {
	testing.TB
	skipped, failed bool
}

func (o *outcome) Helper()               {}
func (o *outcome) Logf(string, ...any)   {}
func (o *outcome) Skipf(string, ...any)  { o.skipped = true; runtime.Goexit() }
func (o *outcome) Fatalf(string, ...any) { o.failed = true; runtime.Goexit() }
func (o *outcome) run(f func(testing.TB)) *outcome {
	done := make(chan struct{})
	go func() { defer close(done); f(o) }()
	<-done
	return o
}

// TestForTestFailsOnlyUnderCI: when pi cannot be had (here an npm that
// fails, as on a machine without the registry), a test driving pi is
// skipped, except under CI=true, where it fails.
func TestForTestFailsOnlyUnderCI(t *testing.T) {
	fakeNPM(t) // a node on PATH
	failing := t.TempDir()
	if err := os.WriteFile(filepath.Join(failing, "npm"), []byte("#!/bin/sh\necho no registry >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", failing+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // an empty cache: pi must be installed
	t.Setenv("HOME", t.TempDir())
	for _, tc := range []struct {
		ci              string
		skipped, failed bool
	}{{"", true, false}, {"true", false, true}} {
		t.Setenv("CI", tc.ci)
		got := (&outcome{}).run(func(tb testing.TB) { pipkg.ForTest(tb, "1.6.0") })
		if got.skipped != tc.skipped || got.failed != tc.failed {
			t.Errorf("CI=%q: skipped %v, failed %v; want skipped %v, failed %v", tc.ci, got.skipped, got.failed, tc.skipped, tc.failed)
		}
	}
}
