// Package oldbuild runs an engine of an older commit of this module
// beside the current one, for the tests of version skew: a process that
// opened a database before a newer one migrated it, and writes on.
//
// [Build] builds the program in writer/main.go (kept out of this
// module's build by its build tag) against the module's files as commit
// rev left them, read from the repository with git archive, and keeps
// the binary in the user's cache folder, so that the engine's and
// pgengine's tests, and later runs, build it once. [Start] runs it; the
// test sends it commands and reads its answers ([Writer.Do]). The tests
// skip themselves where there is no repository with the commit (a copy
// of the sources without their history) or no go command.
package oldbuild

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BeforeShapeInGo is the last commit before the SQLite engine kept the
// tree's counts in Go (migration 19 dropped the trigger that kept them):
// its SQLite schema is 18, its PostgreSQL schema 6, so it derives names,
// usage days and the tree's counts by rules since changed.
const BeforeShapeInGo = "c319416"

//go:embed writer/main.go
var writerSource []byte

// Build returns the path of the writer built at commit rev, building it
// when the cache holds none; it skips t when it cannot.
func Build(t testing.TB, rev string) string {
	t.Helper()
	root, err := gitOutput("", "rev-parse", "--show-toplevel")
	if err != nil {
		t.Skipf("no git repository to build commit %s from: %v", rev, err)
	}
	root = strings.TrimSpace(root)
	if _, err := gitOutput(root, "cat-file", "-e", rev+"^{commit}"); err != nil {
		t.Skipf("the repository has no commit %s (a shallow clone?)", rev)
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build an older engine with")
	}
	sum := sha256.Sum256(writerSource)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	bin := filepath.Join(cache, "sessiontree-oldbuild", rev+"-"+hex.EncodeToString(sum[:6]))
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if err := build(root, rev, bin); err != nil {
		t.Fatalf("build the writer at %s: %v", rev, err)
	}
	return bin
}

// build extracts rev's files into a temporary folder, builds the writer
// there and moves it to bin (a rename: a test binary building it at the
// same time finds a whole file or none).
func build(root, rev, bin string) error {
	dir, err := os.MkdirTemp("", "oldbuild-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	archive, err := gitOutput(root, "archive", "--format=tar", rev)
	if err != nil {
		return err
	}
	if err := extract(strings.NewReader(archive), dir); err != nil {
		return err
	}
	main := filepath.Join(dir, "cmd", "oldbuildwriter", "main.go")
	if err := os.MkdirAll(filepath.Dir(main), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(main, writerSource, 0o644); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return err
	}
	tmp := bin + fmt.Sprintf(".%d", os.Getpid())
	cmd := exec.Command("go", "build", "-o", tmp, main)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod -buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	return os.Rename(tmp, bin)
}

// extract writes the regular files of the tar stream r under dir.
func extract(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg || strings.Contains(h.Name, "..") {
			continue
		}
		path := filepath.Join(dir, filepath.FromSlash(h.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return err
		}
	}
}

func gitOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, stderr.Bytes())
	}
	return string(out), nil
}

// Writer is a running older writer. It is not safe for concurrent use.
type Writer struct {
	t   testing.TB
	in  io.WriteCloser
	out *bufio.Scanner
}

// Start runs the writer at bin until the test ends.
func Start(t testing.TB, bin string) *Writer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cancel()
			<-done
		}
		cancel()
	})
	return &Writer{t: t, in: in, out: bufio.NewScanner(out)}
}

// Do sends command line and returns the writer's answer: "ok" or
// "error: ...".
func (w *Writer) Do(line string) string {
	w.t.Helper()
	if _, err := fmt.Fprintln(w.in, line); err != nil {
		w.t.Fatalf("older writer: %s: %v", line, err)
	}
	if !w.out.Scan() {
		w.t.Fatalf("older writer: %s: no answer (%v)", line, w.out.Err())
	}
	return w.out.Text()
}

// Must is Do of a command that must succeed.
func (w *Writer) Must(line string) {
	w.t.Helper()
	if got := w.Do(line); got != "ok" {
		w.t.Fatalf("older writer: %s: %s", line, got)
	}
}
