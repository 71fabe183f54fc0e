package pipkg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

var (
	// ErrNoNode means node or npm is not installed.
	ErrNoNode = errors.New("node and npm are needed to run pi")
	// ErrNotInstalled means the release is not in the cache and the
	// caller asked not to install it.
	ErrNotInstalled = errors.New("pi is not installed in the cache")
)

// Package is the npm package pi release version was published as: the
// 0.x releases as @mariozechner/pi-coding-agent, from 1.0 on as
// @earendil-works/pi-coding-agent.
func Package(version string) string {
	if strings.HasPrefix(version, "0.") {
		return "@mariozechner/pi-coding-agent"
	}
	return "@earendil-works/pi-coding-agent"
}

// CacheDir is where pi releases are installed: cache, or
// sessiontree-bench in the user's cache directory.
func CacheDir(cache string) string {
	if cache != "" {
		return cache
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "sessiontree-bench")
}

// Paths are where release version lives in cache: its npm prefix and the
// package's own folder.
func Paths(cache, version string) (dir, pkgDir string) {
	dir = filepath.Join(CacheDir(cache), "pi-coding-agent-"+version)
	return dir, filepath.Join(dir, "node_modules", filepath.FromSlash(Package(version)))
}

// SessionManagerJS is the module scripts import from the package folder.
func SessionManagerJS(pkgDir string) string {
	return filepath.Join(pkgDir, "dist", "core", "session-manager.js")
}

// Installed reports whether pkgDir holds release version.
func Installed(pkgDir, version string) bool {
	b, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if err != nil {
		return false
	}
	var pkg struct{ Version string }
	return json.Unmarshal(b, &pkg) == nil && pkg.Version == version
}

// Ensure makes sure release version is in cache, installing it with npm
// when it is not and install is set (telling progress), and returns
// node's path and the package's folder. It fails with [ErrNoNode] without
// node (or without npm when it must install), and with [ErrNotInstalled]
// when the release is missing and install is not set.
func Ensure(ctx context.Context, cache, version string, install bool, progress func(string, ...any)) (node, pkgDir string, err error) {
	node, err = exec.LookPath("node")
	if err != nil {
		return "", "", ErrNoNode
	}
	pkg := Package(version)
	dir, pkgDir := Paths(cache, version)
	if Installed(pkgDir, version) {
		return node, pkgDir, nil
	}
	if !install {
		return "", "", fmt.Errorf("%s@%s in %s: %w", pkg, version, dir, ErrNotInstalled)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", "", ErrNoNode
	}
	progress("installing %s@%s into %s (npm)", pkg, version, dir)
	if err := npmInstall(ctx, npm, dir, pkg+"@"+version, func() bool { return Installed(pkgDir, version) }); err != nil {
		return "", "", err
	}
	if !Installed(pkgDir, version) {
		return "", "", fmt.Errorf("npm install %s@%s: package not found afterwards in %s", pkg, version, pkgDir)
	}
	return node, pkgDir, nil
}

// npmInstall runs npm to install spec into a new folder beside dir and
// then renames that folder to dir, so that a reader of dir sees either no
// release or a whole one, and installs racing each other (test packages
// run as processes side by side) do not write into one folder. The
// install that renames first wins; the others find a whole release there
// (installed reports it), leave it alone and remove their own folder. A
// dir that holds no whole release (left by an older, unsafe install) is
// moved aside and replaced.
func npmInstall(ctx context.Context, npm, dir, spec string, installed func() bool) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".installing-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), []byte(`{"private":true,"type":"module"}`+"\n"), 0o644); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", tmp, "--no-audit", "--no-fund",
		"--ignore-scripts", "--engine-strict=false", "--loglevel=error", spec)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm install %s: %w\n%s", spec, err, out)
	}
	err = os.Rename(tmp, dir)
	if err == nil || installed() {
		return nil
	}
	if stale, serr := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".stale-"); serr == nil {
		if os.Rename(dir, filepath.Join(stale, "old")) == nil {
			err = os.Rename(tmp, dir)
		}
		os.RemoveAll(stale)
	}
	if err == nil || installed() {
		return nil
	}
	return fmt.Errorf("npm install %s: %w", spec, err)
}
