package main

import (
	"io"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOutputPipeIsWidened runs the command with its output on a pipe:
// the pipe's buffer is pipeBytes once it ran.
func TestOutputPipeIsWidened(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	before, err := unix.FcntlInt(r.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	cmd := command(t, "--help")
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, err := io.Copy(io.Discard, r); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	after, err := unix.FcntlInt(r.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	if before == pipeBytes || after != pipeBytes {
		t.Errorf("pipe buffer %d before the command, %d after; want %d after", before, after, pipeBytes)
	}
}
