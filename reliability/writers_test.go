package reliability_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/store"
)

// Helpers of the tests of issue 13, "unlucky and hostile conditions from
// outside": huge entries, held locks, full disks, reads while another
// process writes.

func init() {
	childRoles["hold-write-lock"] = holdWriteLockChild
}

// holdWriteLockChild takes the database's write lock, as a long write of
// another process would (an import's chunk, a catch-up of the search
// index, a tool of the user's), says "locked", and holds it until stdin
// closes; it writes nothing.
func holdWriteLockChild(ctx context.Context, spec childSpec) error {
	s, err := store.Open(ctx, spec.DB, store.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	return s.DB().Update(ctx, func(*engine.Tx) error {
		printLine("locked")
		waitStdin()
		return nil
	})
}

// holdWriteLock starts a process holding the write lock of the database
// at path and returns the function that makes it let go.
func holdWriteLock(t *testing.T, path string) (release func()) {
	t.Helper()
	c := startChild(t, childSpec{Role: "hold-write-lock", DB: path})
	c.expect(t, "locked", time.Minute, nil)
	released := false
	return func() {
		if !released {
			released = true
			c.finish(t, time.Minute)
		}
	}
}

// piFile writes a pi session file of id (a UUID's last 12 hex digits) at
// path, with a user message per text, each the child of the one before.
func piFile(t *testing.T, path string, id int, texts ...string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `{"type":"session","version":3,"id":"0190a000-0000-7000-8000-%012d","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/outside"}`+"\n", id)
	parent := "null"
	for i, text := range texts {
		eid := fmt.Sprintf("%08x", i+1)
		fmt.Fprintf(&b, `{"type":"message","id":"%s","parentId":%s,"timestamp":"2026-01-01T00:00:%02d.%03dZ","message":{"role":"user","content":%s,"timestamp":1}}`+"\n",
			eid, parent, i/1000%60, i%1000, jsonText(text))
		parent = `"` + eid + `"`
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// jsonText is s as a JSON string.
func jsonText(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}

// timedCLI runs the sessiontree command and returns its result and how
// long it took.
func timedCLI(t *testing.T, args ...string) (cliResult, time.Duration) {
	t.Helper()
	start := time.Now()
	r := runCLI(t, "", args...)
	return r, time.Since(start)
}

// bgCLI is the sessiontree command running in the background, its
// stderr read line by line as it comes.
type bgCLI struct {
	cmd    *exec.Cmd
	stdout strings.Builder
	lines  chan string // stderr, line by line; closed at its end
	start  time.Time
}

// startCLI starts the sessiontree command in the background.
func startCLI(t *testing.T, args ...string) *bgCLI {
	t.Helper()
	b := &bgCLI{cmd: exec.Command(sessiontreeCommand(t), args...), lines: make(chan string, 1024)}
	b.cmd.Env = append(os.Environ(), "SESSIONTREE_DB=/nonexistent/do-not-use.db")
	b.cmd.Stdout = &b.stdout
	stderr, err := b.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	b.start = time.Now()
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(b.lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			b.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		if b.cmd.ProcessState == nil {
			_ = b.cmd.Process.Kill()
			_ = b.cmd.Wait()
		}
	})
	return b
}

// waitLine waits up to timeout for a stderr line containing s.
func (b *bgCLI) waitLine(s string, timeout time.Duration) (string, bool) {
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-b.lines:
			if !ok {
				return "", false
			}
			if strings.Contains(line, s) {
				return line, true
			}
		case <-deadline:
			return "", false
		}
	}
}

// wait waits for the command to end and returns its exit status, the rest
// of its stderr and how long it ran in all.
func (b *bgCLI) wait(t *testing.T, timeout time.Duration) (code int, stderr []string, took time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		for line := range b.lines {
			stderr = append(stderr, line)
		}
		done <- b.cmd.Wait()
	}()
	select {
	case <-done:
	case <-time.After(timeout):
		_ = b.cmd.Process.Kill()
		<-done
		t.Fatalf("sessiontree %q did not finish within %v (a hang?)", b.cmd.Args[1:], timeout)
	}
	return b.cmd.ProcessState.ExitCode(), stderr, time.Since(b.start)
}

// interrupt sends the command SIGINT, as Ctrl-C does.
func (b *bgCLI) interrupt(t *testing.T) {
	t.Helper()
	if err := b.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
}

// dbPath is a fresh database path in a test's temporary directory.
func dbPath(t *testing.T) string {
	return filepath.Join(t.TempDir(), "sessions.db")
}
