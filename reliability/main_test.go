package reliability_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree/internal/childenv"
	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/storetest"
)

var fullFlag = flag.Bool("reliability.full", false,
	"run the full reliability suite: more crash rounds, more writers, 500 MB sessions, a 50 MB line (also SESSIONTREE_RELIABILITY_FULL=1)")

// level is how big the suite runs.
type level int

const (
	levelShort level = iota // go test -short: a smoke run
	levelCI                 // go test (what CI runs): every item at a size that fits a minute
	levelFull               // -reliability.full: the sizes of issue 8
)

func (l level) String() string { return [...]string{"short", "ci", "full"}[l] }

func currentLevel() level {
	switch {
	case *fullFlag || os.Getenv("SESSIONTREE_RELIABILITY_FULL") == "1":
		return levelFull
	case testing.Short():
		return levelShort
	}
	return levelCI
}

// pick returns the value for the current level.
func pick[T any](short, ci, full T) T {
	switch currentLevel() {
	case levelFull:
		return full
	case levelShort:
		return short
	}
	return ci
}

// pickSize is pick for sizes of data, divided by raceDivisor under the
// race detector except in the full run, which is meant to run without it.
func pickSize(short, ci, full int) int {
	n := pick(short, ci, full)
	if storetest.RaceEnabled && currentLevel() != levelFull {
		n /= raceDivisor
	}
	return n
}

// raceDivisor scales data down under the race detector.
const raceDivisor = 16

func TestMain(m *testing.M) {
	flag.Parse()
	var code int
	if os.Getenv(childEnv) != "" {
		// A child gets its database's URL from its parent: it must not
		// start a PostgreSQL server of its own.
		code = m.Run()
	} else {
		// A server for the postgres engine's tests (left out under
		// -short); the parallel tests, mostly waiting for their child
		// processes, run 4 per CPU.
		pgtest.SkipPostgresUnderShort()
		code = pgtest.MainWaiting(m)
	}
	os.Exit(code)
}

// childEnv carries a child process's job (a JSON childSpec). A child is
// this test binary run with -test.run=^TestChild$: see TestChild.
const childEnv = "SESSIONTREE_RELIABILITY_CHILD"

// childSpec is a child process's job.
type childSpec struct {
	Role    string `json:"role"`
	DB      string `json:"db,omitempty"`
	File    string `json:"file,omitempty"`
	Session string `json:"session,omitempty"`
	Sync    bool   `json:"sync,omitempty"`
	Seed    uint64 `json:"seed,omitempty"`
	N       int    `json:"n,omitempty"`
	Tag     string `json:"tag,omitempty"`
	Guard   bool   `json:"guard,omitempty"`
	Big     int    `json:"big,omitempty"`
}

// childRoles maps a role to the function a child runs. Each prints its
// protocol lines ("ready", "ack <id>", ...) on stdout with printLine and
// returns an error to fail.
var childRoles = map[string]func(ctx context.Context, spec childSpec) error{}

// TestChild is not a test: it is the body of the child processes the
// other tests start (crash loops, concurrent writers and readers, lock
// holders, memory probes). Run directly it skips.
func TestChild(t *testing.T) {
	raw := os.Getenv(childEnv)
	if raw == "" {
		t.Skip("run as a child process by the other tests")
	}
	var spec childSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		t.Fatalf("child spec: %v", err)
	}
	fn := childRoles[spec.Role]
	if fn == nil {
		t.Fatalf("unknown child role %q", spec.Role)
	}
	if err := fn(context.Background(), spec); err != nil {
		printLine("error %s", strings.ReplaceAll(err.Error(), "\n", " "))
		t.Fatal(err)
	}
}

var stdoutMu sync.Mutex

// printLine writes one protocol line to stdout with a single write, so
// that a line is either entirely in the pipe or not at all (writes of less
// than PIPE_BUF bytes to a pipe are atomic): a killed child never leaves
// half an acknowledgement.
func printLine(format string, args ...any) {
	line := fmt.Sprintf(format, args...) + "\n"
	stdoutMu.Lock()
	defer stdoutMu.Unlock()
	if _, err := os.Stdout.WriteString(line); err != nil {
		panic(err) // the parent is gone
	}
}

// child is a running child process.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	errb  *lockedBuffer
	done  chan struct{} // closed when stdout has been read to its end

	mu     sync.Mutex // guards queue
	queue  []string   // complete stdout lines not yet taken
	notify chan struct{}

	waitOnce sync.Once
	waitErr  error // cmd.Wait's result
}

// lockedBuffer collects a child's stderr.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() < 64<<10 {
		l.b.Write(p)
	}
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startChild runs this test binary as a child with spec. Its stdout is
// queued line by line, never blocking the child; a last fragment without
// a newline (a child killed in the middle of a write, which printLine
// avoids) is dropped.
func startChild(tb testing.TB, spec childSpec) *child {
	tb.Helper()
	raw, err := json.Marshal(spec)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestChild$", "-test.count=1", "-test.timeout=10m")
	cmd.Env = childenv.Env(childEnv + "=" + string(raw))
	c := &child{cmd: cmd, errb: &lockedBuffer{}, done: make(chan struct{}), notify: make(chan struct{}, 1)}
	cmd.Stderr = c.errb
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() {
		defer close(c.done)
		r := bufio.NewReaderSize(stdout, 64<<10)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return // a fragment without newline is not a line
			}
			c.mu.Lock()
			c.queue = append(c.queue, strings.TrimSuffix(line, "\n"))
			c.mu.Unlock()
			select {
			case c.notify <- struct{}{}:
			default:
			}
		}
	}()
	tb.Cleanup(c.kill)
	return c
}

// next returns the next stdout line; ok is false at the end of output or
// when timeout passes first (then timedOut is true).
func (c *child) next(timeout time.Duration) (line string, ok, timedOut bool) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		c.mu.Lock()
		if len(c.queue) > 0 {
			line = c.queue[0]
			c.queue = c.queue[1:]
			c.mu.Unlock()
			return line, true, false
		}
		c.mu.Unlock()
		select {
		case <-c.notify:
		case <-c.done:
			c.mu.Lock()
			n := len(c.queue)
			c.mu.Unlock()
			if n == 0 {
				return "", false, false
			}
		case <-timer.C:
			return "", false, true
		}
	}
}

// expect waits for a line starting with prefix and returns it; other
// lines are passed to other (may be nil). It fails on the end of output,
// on an "error" line and on timeout.
func (c *child) expect(tb testing.TB, prefix string, timeout time.Duration, other func(string)) string {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		line, ok, timedOut := c.next(time.Until(deadline))
		switch {
		case timedOut:
			tb.Fatalf("child did not say %q within %v (a hang?)\nstderr:\n%s", prefix, timeout, c.errb)
		case !ok:
			tb.Fatalf("child ended before %q: %v\nstderr:\n%s", prefix, c.wait(), c.errb)
		case strings.HasPrefix(line, prefix):
			return line
		case strings.HasPrefix(line, "error "):
			tb.Fatalf("child: %s\nstderr:\n%s", line, c.errb)
		case other != nil:
			other(line)
		}
	}
}

// rest waits for the end of the child's output and returns every line
// not yet taken.
func (c *child) rest() []string {
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.queue
	c.queue = nil
	return out
}

// wait waits for the child to exit and returns cmd.Wait's error.
func (c *child) wait() error {
	<-c.done // stdout must be read to its end before Wait
	c.waitOnce.Do(func() { c.waitErr = c.cmd.Wait() })
	return c.waitErr
}

// kill kills the child with SIGKILL (os.Process.Kill) and reaps it.
func (c *child) kill() {
	_ = c.cmd.Process.Kill()
	_ = c.stdin.Close()
	_ = c.wait()
}

// finish closes the child's stdin, waits for it to exit, and fails if it
// did not exit cleanly; it returns its remaining lines.
func (c *child) finish(tb testing.TB, timeout time.Duration) []string {
	tb.Helper()
	_ = c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(timeout):
		c.kill()
		tb.Fatalf("child did not finish within %v (a hang?)\nstderr:\n%s", timeout, c.errb)
	}
	lines := c.rest()
	if err := c.wait(); err != nil {
		tb.Fatalf("child failed: %v\nstdout:\n%s\nstderr:\n%s", err, strings.Join(lines, "\n"), c.errb)
	}
	return lines
}

var (
	cliOnce sync.Once
	cliPath string
	cliErr  error
)

// sessiontreeCommand builds the sessiontree command once per run and
// returns its path: the same path for every run of this checkout (a
// folder of the temporary directory named by the module's), so that go
// build, finding it up to date, does not link it again (1.7 s of CPU, and
// far more wall time on a loaded machine). go build moves a new link into
// place, so a run still executing the old one is not disturbed.
func sessiontreeCommand(tb testing.TB) string {
	tb.Helper()
	cliOnce.Do(func() {
		root, err := filepath.Abs("..")
		if err != nil {
			cliErr = err
			return
		}
		sum := sha256.Sum256([]byte(root))
		dir := filepath.Join(os.TempDir(), "sessiontree-reliability-cli-"+hex.EncodeToString(sum[:6]))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			cliErr = err
			return
		}
		cliPath = filepath.Join(dir, "sessiontree")
		if runtime.GOOS == "windows" {
			cliPath += ".exe"
		}
		cmd := exec.Command("go", "build", "-o", cliPath, "github.com/sessiontree/sessiontree/cmd/sessiontree")
		out, err := cmd.CombinedOutput()
		if err != nil {
			cliErr = fmt.Errorf("go build ./cmd/sessiontree: %v\n%s", err, out)
		}
	})
	if cliErr != nil {
		tb.Fatal(cliErr)
	}
	return cliPath
}

// cliResult is one run of the sessiontree command.
type cliResult struct {
	stdout, stderr string
	code           int
}

// runCLI runs the sessiontree command with a timeout.
func runCLI(tb testing.TB, stdin string, args ...string) cliResult {
	tb.Helper()
	return runCLIWith(tb, cliRun{stdin: strings.NewReader(stdin)}, args...)
}

// cliRun says how runCLIWith runs the command.
type cliRun struct {
	env     []string      // variables added to the environment
	stdin   io.Reader     // nil: none
	stdout  io.Writer     // nil: collected in the result
	timeout time.Duration // after it the command is killed and the test fails; 0: two minutes
}

// runCLIWith runs the sessiontree command as o says.
func runCLIWith(tb testing.TB, o cliRun, args ...string) cliResult {
	tb.Helper()
	if o.timeout == 0 {
		o.timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, sessiontreeCommand(tb), args...)
	cmd.Stdin = o.stdin
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if o.stdout != nil {
		cmd.Stdout = o.stdout
	}
	cmd.Env = append(append(os.Environ(), "SESSIONTREE_DB=/nonexistent/do-not-use.db"), o.env...)
	err := cmd.Run()
	res := cliResult{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		tb.Fatalf("sessiontree %q did not finish in %v (a hang?)", args, o.timeout)
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	default:
		tb.Fatalf("sessiontree %q: %v", args, err)
	}
	return res
}

// cliOK runs the sessiontree command and fails unless it exits 0.
func cliOK(tb testing.TB, stdin string, args ...string) string {
	tb.Helper()
	r := runCLI(tb, stdin, args...)
	if r.code != 0 {
		tb.Fatalf("sessiontree %q exited %d\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
	}
	return r.stdout
}
