package pipkg_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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
