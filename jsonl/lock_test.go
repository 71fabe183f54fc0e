//go:build unix

package jsonl_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/childenv"
	"github.com/sessiontree/sessiontree/jsonl"
)

// helperEnv tells a re-run test binary to act as a second process.
const helperEnv = "JSONL_LOCK_HELPER"

// TestLockHelper is the second process of TestLockAcrossProcesses. It
// does nothing (and passes) unless the environment asks for it: with "hold:<path>" it
// opens path for writing, says "locked", and keeps the lock until its
// standard input closes; with "try:<path>" it tries to open path for
// writing and says what happened.
func TestLockHelper(t *testing.T) {
	cmd, path, ok := strings.Cut(os.Getenv(helperEnv), ":")
	if !ok {
		return
	}
	ctx := context.Background()
	switch cmd {
	case "hold":
		st, err := jsonl.Open(ctx, path, jsonl.Options{})
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println("locked")
		io.Copy(io.Discard, os.Stdin)
		if _, err := st.Append(ctx, sessiontree.Draft{Type: sessiontree.TypeCustom, Fields: []byte(`{"customType":"from-helper"}`)}, sessiontree.AppendOptions{}); err != nil {
			fmt.Println("error:", err)
		}
		st.Close()
	case "try":
		st, err := jsonl.Open(ctx, path, jsonl.Options{})
		switch {
		case errors.Is(err, sessiontree.ErrLocked):
			fmt.Println("locked out:", err)
		case err != nil:
			fmt.Println("error:", err)
		default:
			fmt.Println("opened")
			st.Close()
		}
	}
}

func helper(t *testing.T, arg string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelper$", "-test.count=1")
	cmd.Env = childenv.Env(helperEnv + "=" + arg)
	return cmd
}

// TestLockAcrossProcesses runs the test binary again as a second process:
// each side is locked out while the other writes, and readers never are.
func TestLockAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	path := writeFile(t, lines(testHeader, msg("aaaaaaaa", "")))

	// We hold the lock: the other process is locked out.
	st, err := jsonl.Open(ctx, path, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := helper(t, "try:"+path).Output()
	if err != nil || !strings.Contains(string(out), "locked out: ") || !strings.Contains(string(out), "session is locked by another writer") {
		t.Errorf("second process while we write: %v\n%s", err, out)
	}
	st.Close()
	out, err = helper(t, "try:"+path).Output()
	if err != nil || !strings.Contains(string(out), "opened") {
		t.Errorf("second process after we closed: %v\n%s", err, out)
	}

	// The other process holds it: we are locked out, readers are not.
	cmd := helper(t, "hold:"+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case l := <-lines:
		if l != "locked" {
			t.Fatalf("helper said %q; want locked", l)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("helper did not take the lock")
	}
	if _, err := jsonl.Open(ctx, path, jsonl.Options{}); !errors.Is(err, sessiontree.ErrLocked) {
		t.Errorf("Open while another process writes: error = %v; want ErrLocked", err)
	}
	done := make(chan error, 1)
	go func() {
		r, err := jsonl.Open(ctx, path, jsonl.Options{ReadOnly: true})
		if err == nil {
			r.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("read-only Open while another process writes: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("read-only Open blocked on the writer's lock")
	}
	stdin.Close()
	for l := range lines {
		if strings.HasPrefix(l, "error:") {
			t.Errorf("helper: %s", l)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	// The lock went with the process; its entry is there.
	w := open(t, path, jsonl.Options{Mode: jsonl.Strict})
	if got := logIDs(t, w); len(got) != 2 {
		t.Errorf("Log() = %v; want the helper's entry too", got)
	}
}
