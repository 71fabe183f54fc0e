package reliability_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree/store"
)

// TestCLILive runs `sessiontree tail` and `sessiontree append --claim` as
// separate processes on one database, on each engine (issue 15 items 3
// and 4): tail prints each entry the other processes commit, in order,
// as JSON lines; a claim refuses another holder and a plain append,
// naming the holder, until it is released; tail exits 0 on SIGINT.
func TestCLILive(t *testing.T) {
	t.Parallel()
	for _, eng := range dbEngines {
		t.Run(eng.name, func(t *testing.T) { cliLive(t, eng.target(t)) })
	}
}

func cliLive(t *testing.T, target string) {
	ctx := context.Background()
	s, err := openTarget(ctx, target, false)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Create(ctx, store.CreateOptions{Cwd: "/live"})
	if err != nil {
		t.Fatal(err)
	}
	id := st.ID()
	s.Close()
	line := `{"type":"custom","customType":"step"}` + "\n"
	appendAs := func(args ...string) cliResult {
		return runCLI(t, line, append([]string{"--db", target, "append", id}, args...)...)
	}
	var want []string
	appended := func(r cliResult, what string) {
		t.Helper()
		if r.code != 0 || len(strings.Fields(r.stdout)) != 1 {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q", what, r.code, r.stdout, r.stderr)
		}
		want = append(want, strings.TrimSpace(r.stdout))
	}
	refused := func(r cliResult, what string) {
		t.Helper()
		if r.code != 1 || !strings.Contains(r.stderr, `is claimed by "agent-a"`) || r.stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 naming agent-a", what, r.code, r.stdout, r.stderr)
		}
	}
	appended(appendAs("--claim", "agent-a"), "append --claim agent-a")

	// -n 1 prints the entry already there first: by then tail watches.
	tail := exec.Command(sessiontreeCommand(t), "--db", target, "tail", id, "-n", "1", "--json")
	stdout, err := tail.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb lockedBuffer
	tail.Stderr = &errb
	if err := tail.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if tail.ProcessState == nil {
			_ = tail.Process.Kill()
			_ = tail.Wait()
		}
	})
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	seen := 0
	expect := func() {
		t.Helper()
		for ; seen < len(want); seen++ {
			select {
			case l, ok := <-lines:
				var e struct{ ID string }
				if !ok || json.Unmarshal([]byte(l), &e) != nil || e.ID != want[seen] {
					t.Fatalf("tail line %d = %q (open %v); want entry %s\nstderr: %s", seen, l, ok, want[seen], errb.String())
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("tail printed no line %d (entry %s) within 10 s\nstderr: %s", seen, want[seen], errb.String())
			}
		}
	}
	expect()

	refused(appendAs(), "append without --claim")
	refused(appendAs("--claim", "agent-b"), "append --claim agent-b")
	appended(appendAs("--claim", "agent-a", "--release"), "append --claim agent-a --release")
	expect()
	appended(appendAs(), "append after the release")
	appended(appendAs("--claim", "agent-b", "--release"), "append --claim agent-b")
	expect()

	if err := tail.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for range lines {
	}
	if err := tail.Wait(); err != nil {
		t.Errorf("tail after SIGINT: %v; want exit 0\nstderr: %s", err, errb.String())
	}
}
