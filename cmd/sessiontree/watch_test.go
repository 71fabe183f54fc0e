package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestImportWatch runs import --watch as a process: it imports the file
// there, says it is watching, imports a line appended to the file and
// says so, lets the command line read the database meanwhile, and on
// SIGTERM stops with status 0 and prints what it did.
func TestImportWatch(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	dir := filepath.Join(t.TempDir(), "--home-me-app--")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "demo.jsonl")
	demo, err := os.ReadFile("../../view/testdata/demo.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, demo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := command(t, "--db", db, "import", "--watch", filepath.Dir(dir))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var said []string
	waitLine := func(what string) {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("import --watch ended before saying %q; it said %q", what, said)
				}
				said = append(said, l)
				if strings.Contains(l, what) {
					return
				}
			case <-timeout:
				t.Fatalf("import --watch did not say %q within 30s; it said %q", what, said)
			}
		}
	}
	waitLine("imported 15 entries from 1 file; watching for changes")

	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	line := `{"type":"message","id":"feedbeef","parentId":null,"timestamp":"2026-12-01T10:00:00.000Z","message":{"role":"user","content":"a zebracorn walks in","timestamp":1796119200000}}` + "\n"
	if _, err := io.WriteString(f, line); err != nil {
		t.Fatal(err)
	}
	f.Close()
	waitLine(file + ": 1 entry into 0198f2a4")
	if out := ok(t, "--db", db, "search", "zebracorn"); !strings.Contains(out, "feedbeef") {
		t.Errorf("search while watching = %q; want the appended entry", out)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("import --watch after SIGTERM: %v; stderr %q", err, said)
	}
	entries := strings.Count(string(demo), "\n") // the header's line counts for the one appended
	want := "followed 1 file for "
	if out := stdout.String(); !strings.HasPrefix(out, want) || !strings.Contains(out, ": "+strconv.Itoa(entries)+" entries imported from 1 file, 1 new session, 0 problems\n") {
		t.Errorf("import --watch printed %q; want %q... with %d entries from 1 file", out, want, entries)
	}
}
