package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/sessiontree/sessiontree/internal/childenv"
)

// command returns the test binary set up to run as sessiontree.
func command(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = childenv.Env(asMainEnv + "=1")
	return cmd
}

// TestAppendPrintsEachIDOnCommit feeds append one line at a time and reads
// each id back before sending the next: the id is out as soon as the entry
// is committed, not when the input ends.
func TestAppendPrintsEachIDOnCommit(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ok(t, "--db", db, "import", "../../view/testdata/demo.jsonl")
	cmd := command(t, "--db", db, "append", "0198f2a4")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	var ids []string
	for i := range 3 {
		fmt.Fprintf(stdin, `{"type":"custom","customType":"step","data":{"i":%d}}`+"\n", i)
		line, err := out.ReadString('\n') // blocks until append prints
		if err != nil {
			t.Fatalf("reading id %d: %v (stderr %q)", i, err, stderr.String())
		}
		ids = append(ids, strings.TrimSpace(line))
	}
	stdin.Close()
	if rest, _ := io.ReadAll(out); len(rest) != 0 {
		t.Errorf("append printed %q after the input ended", rest)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("append: %v (stderr %q)", err, stderr.String())
	}
	branch := ok(t, "--db", db, "branch", "0198f2a4", "--full")
	for _, id := range ids {
		if !strings.Contains(branch, " "+id+" ") {
			t.Errorf("entry %s is not on the active branch:\n%s", id, branch)
		}
	}
}

// TestConcurrentAppendProcesses runs several append processes on one
// session at once: every entry is kept, and together they make one chain.
func TestConcurrentAppendProcesses(t *testing.T) {
	t.Parallel()
	const procs, each = 4, 25
	db := newDB(t)
	ok(t, "--db", db, "import", "../../view/testdata/demo.jsonl")
	const sid = "0198f2a4-5c1e-7d3a-9b2f-3e4d5c6b7a81"
	var wg sync.WaitGroup
	outs := make([]string, procs)
	errs := make([]error, procs)
	for p := range procs {
		wg.Go(func() {
			var in strings.Builder
			for i := range each {
				fmt.Fprintf(&in, `{"type":"message","message":{"role":"user","content":"process %d line %d"}}`+"\n", p, i)
			}
			cmd := command(t, "--db", db, "append", sid)
			cmd.Stdin = strings.NewReader(in.String())
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				err = fmt.Errorf("%w: %s", err, stderr.String())
			}
			outs[p], errs[p] = string(out), err
		})
	}
	wg.Wait()
	printed := map[string]bool{}
	for p := range procs {
		if errs[p] != nil {
			t.Fatalf("append process %d: %v", p, errs[p])
		}
		ids := strings.Fields(outs[p])
		if len(ids) != each {
			t.Errorf("append process %d printed %d ids; want %d", p, len(ids), each)
		}
		for _, id := range ids {
			printed[id] = true
		}
	}
	if len(printed) != procs*each {
		t.Fatalf("%d distinct ids printed; want %d", len(printed), procs*each)
	}
	// One chain: the active branch ends with every appended entry, each
	// under the one appended before it.
	var branch []struct{ ID, ParentID string }
	decode(t, ok(t, "--db", db, "branch", sid, "--full", "--json"), &branch)
	if len(branch) < procs*each {
		t.Fatalf("active branch has %d entries; want at least %d", len(branch), procs*each)
	}
	tail := branch[len(branch)-procs*each:]
	for i, e := range tail {
		if !printed[e.ID] {
			t.Errorf("branch entry %s was not printed by any append", e.ID)
		}
		if i > 0 && e.ParentID != tail[i-1].ID {
			t.Errorf("entry %s has parent %s; want %s (one chain)", e.ID, e.ParentID, tail[i-1].ID)
		}
	}
	if out := ok(t, "--db", db, "check", sid); !strings.HasPrefix(out, "ok:") {
		t.Errorf("check after concurrent appends: %q", out)
	}
}
