package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/sessiontree/sessiontree/store"
)

// An import measured as a whole process (issue 17: "using both cores,
// memory bounded by the largest line plus a constant"): the bench binary
// runs itself as a child (importChildArg) that opens a fresh store,
// imports the files with store.Import, as `sessiontree import` does
// before its index catch-up, and reports
//
//   - its CPU: the process's user and system time (getrusage, every
//     thread: the import's goroutines, the runtime's, the garbage
//     collector's) over the import's wall time;
//   - its peak RSS: the process's own high-water mark (VmHWM in
//     /proc/self/status) read at the end, which counts everything the
//     process ever held resident: Go runtime, heap, SQLite's page cache
//     and allocations (outside the Go heap), the binary's pages. Not its
//     rusage maxrss, which Linux starts at the spawning process's peak
//     (see spawn.go); the high-water mark belongs to the address space
//     the exec made.
//
// Nothing else runs in the child, so all of it is the import's.

// importChildArg, as the bench binary's first argument, runs it as an
// import child (importChild) instead of the benchmark.
const importChildArg = "-import-child"

// importRequest is what the import child imports, into which database.
type importRequest struct {
	DB    string   `json:"db"`
	Files []string `json:"files"`
}

// importReply is what the import child measured.
type importReply struct {
	// Ns is the wall time of store.Import; CPUNs the process's user and
	// system time during it.
	Ns    int64 `json:"ns"`
	CPUNs int64 `json:"cpuNs"`
	// WaitNs is how long the process's threads waited, runnable, for a
	// CPU during it (the run-queue delay of /proc/self/task/*/schedstat);
	// -1 when the kernel does not say.
	WaitNs int64 `json:"waitNs"`
	// PeakRSS is the process's peak RSS over its whole life; BaseRSS its
	// RSS once the store was open, before the import.
	PeakRSS int64  `json:"peakRSS"`
	BaseRSS int64  `json:"baseRSS"`
	Entries int    `json:"entries"`
	Err     string `json:"err,omitempty"`
}

// cores is the CPU time over the wall time: how many cores the import
// kept busy on average.
func (r importReply) cores() float64 {
	if r.Ns <= 0 {
		return 0
	}
	return float64(r.CPUNs) / float64(r.Ns)
}

// importChild is the import child: it reads one request from in, imports
// and writes the reply to out. It returns the exit status.
func importChild(in io.Reader, out io.Writer) int {
	var req importRequest
	rep := importReply{}
	if err := json.NewDecoder(in).Decode(&req); err != nil {
		rep.Err = err.Error()
	} else if err := childImport(context.Background(), req, &rep); err != nil {
		rep.Err = err.Error()
	}
	if err := json.NewEncoder(out).Encode(rep); err != nil {
		fmt.Fprintln(os.Stderr, "import child:", err)
		return 1
	}
	return 0
}

// childImport opens a fresh store at req.DB and imports req.Files into
// it, measuring (see importReply).
func childImport(ctx context.Context, req importRequest, rep *importReply) error {
	s, err := store.Open(ctx, req.DB, store.Options{})
	if err != nil {
		return err
	}
	rep.BaseRSS = procStatus("VmRSS")
	cpu0, err := processCPU()
	if err != nil {
		return errors.Join(err, s.Close())
	}
	wait0 := runWait()
	t0 := time.Now()
	ir, err := s.Import(ctx, req.Files, store.ImportOptions{})
	rep.Ns = time.Since(t0).Nanoseconds()
	cpu1, cerr := processCPU()
	rep.CPUNs, rep.Entries, rep.WaitNs = int64(cpu1-cpu0), ir.Entries, -1
	if wait1 := runWait(); wait0 >= 0 && wait1 >= 0 {
		rep.WaitNs = wait1 - wait0
	}
	rep.PeakRSS = procStatus("VmHWM")
	return errors.Join(err, cerr, s.Close())
}

// runWait sums the time every thread of the process has waited, runnable,
// for a CPU: the second field of /proc/self/task/*/schedstat, in ns. -1
// when the kernel keeps no such statistics.
func runWait() int64 {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return -1
	}
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/schedstat")
		if err != nil {
			continue // a thread that ended meanwhile
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			return -1
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return -1
		}
		sum += n
	}
	return sum
}

// importInChild imports files into a fresh store at db in a child
// process (see the top of this file) and returns what it measured.
func importInChild(ctx context.Context, db string, files []string) (importReply, error) {
	self, err := os.Executable()
	if err != nil {
		return importReply{}, err
	}
	cmd := exec.CommandContext(ctx, self, importChildArg)
	stdin, stdout, err := startPiped(cmd, "the import child")
	if err != nil {
		return importReply{}, err
	}
	var rep importReply
	werr := json.NewEncoder(stdin).Encode(importRequest{DB: db, Files: files})
	werr = errors.Join(werr, stdin.Close())
	derr := json.NewDecoder(stdout).Decode(&rep)
	if err := errors.Join(werr, derr, cmd.Wait()); err != nil {
		return rep, fmt.Errorf("import child: %w", err)
	}
	if rep.Err != "" {
		return rep, fmt.Errorf("import child: %s", rep.Err)
	}
	return rep, nil
}
