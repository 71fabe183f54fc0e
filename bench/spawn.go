package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"time"
)

// The whole-process mode starts the commands it times from a child of its
// own, the spawner. A process's peak RSS (its rusage) starts at its
// parent's RSS: Go starts a process with CLONE_VM, so the exec replaces
// the parent's memory, whose high-water mark the kernel carries into the
// child's. The bench holds 25 to 30 MB and more (the generated session,
// its runtime); the spawner, started before anything is generated, holds
// some 14 MB, below what any command needs of its own (--help: 16 MB), so
// a command's peak is its own.

// spawnChildArg, as the bench binary's first argument, runs it as the
// spawner (spawnChild) instead of the benchmark.
const spawnChildArg = "-spawn-child"

// spawnRequest is a command line for the spawner to run; its stdout comes
// back only when Stdout is set (a large one would grow the spawner).
type spawnRequest struct {
	Bin    string   `json:"bin"`
	Args   []string `json:"args"`
	Stdout bool     `json:"stdout,omitempty"`
}

// spawnReply is what one run gave: its stdout, its wall time from start
// to exit, its peak RSS, or why it failed.
type spawnReply struct {
	Stdout []byte `json:"stdout"`
	Ns     int64  `json:"ns"`
	MaxRSS int64  `json:"maxRSS"`
	Err    string `json:"err,omitempty"`
}

// spawnChild is the spawner: it runs each request it reads from in and
// writes the reply to out, until the end of in. It returns the exit
// status.
func spawnChild(in io.Reader, out io.Writer) int {
	dec, enc := json.NewDecoder(in), json.NewEncoder(out)
	for {
		var req spawnRequest
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return 0
			}
			fmt.Fprintln(os.Stderr, "spawner:", err)
			return 1
		}
		debug.FreeOSMemory() // the previous reply's buffers
		start := time.Now()
		stdout, rss, err := timeProcess(context.Background(), req.Stdout, req.Bin, req.Args...)
		rep := spawnReply{Ns: time.Since(start).Nanoseconds(), MaxRSS: rss}
		if req.Stdout {
			rep.Stdout = stdout
		}
		if err != nil {
			rep.Err = err.Error()
		}
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintln(os.Stderr, "spawner:", err)
			return 1
		}
	}
}

// spawner is the bench's side of a spawner process.
type spawner struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	enc   *json.Encoder
	dec   *json.Decoder
}

// startSpawner starts the bench binary as a spawner.
func startSpawner(ctx context.Context) (*spawner, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self, spawnChildArg)
	stdin, stdout, err := startPiped(cmd, "the spawner")
	if err != nil {
		return nil, err
	}
	return &spawner{cmd: cmd, stdin: stdin, enc: json.NewEncoder(stdin), dec: json.NewDecoder(stdout)}, nil
}

// run runs bin with args in the spawner and returns its wall time and
// peak RSS, and its stdout when keepStdout.
func (s *spawner) run(keepStdout bool, bin string, args ...string) ([]byte, time.Duration, int64, error) {
	if err := s.enc.Encode(spawnRequest{Bin: bin, Args: args, Stdout: keepStdout}); err != nil {
		return nil, 0, 0, fmt.Errorf("spawner: %w", err)
	}
	var rep spawnReply
	if err := s.dec.Decode(&rep); err != nil {
		return nil, 0, 0, fmt.Errorf("spawner: %w", err)
	}
	if rep.Err != "" {
		return nil, 0, 0, errors.New(rep.Err)
	}
	return rep.Stdout, time.Duration(rep.Ns), rep.MaxRSS, nil
}

// close ends the spawner and waits for it.
func (s *spawner) close() error {
	return errors.Join(s.stdin.Close(), s.cmd.Wait())
}

// startPiped starts cmd, a child the bench talks to (what names it in an
// error), with pipes to its stdin and from its stdout; its stderr is the
// bench's.
func startPiped(cmd *exec.Cmd, what string) (io.WriteCloser, io.ReadCloser, error) {
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", what, err)
	}
	return stdin, stdout, nil
}
