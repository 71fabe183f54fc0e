package reliability_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

func init() {
	childRoles["resume-mem"] = resumeMemChild
}

// memSession describes the generated session of the memory tests: a user
// prompt, then tool results carrying payloads (images of payloadBytes),
// a small message the compaction keeps, the compaction, and a tail of
// small messages. The active context is the summary, the kept message and
// the tail: not one payload.
type memSession struct {
	id           string
	payloads     int
	payloadBytes int
	tail         int
}

const memKept = "keep0000"

// writeMemSession writes the session as a pi file at path and returns
// its size and the length of its longest line.
func writeMemSession(tb testing.TB, path string, ms memSession) (size int64, longest int) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	line := func(s string) {
		longest = max(longest, len(s)+1)
		w.WriteString(s)
		w.WriteByte('\n')
	}
	line(fmt.Sprintf(`{"type":"session","version":3,"id":%q,"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/memory"}`, ms.id))
	line(hMsg("prompt00", ""))
	prev := "prompt00"
	payload := string(imageResult("payload", ms.payloadBytes))
	for i := range ms.payloads {
		id := fmt.Sprintf("tool%04d", i)
		line(hEntry("message", id, prev, `"message":`+payload))
		prev = id
	}
	line(hMsg(memKept, prev))
	line(hEntry("compaction", "compact0", memKept, `"summary":"what the payloads were about","firstKeptEntryId":"`+memKept+`","tokensBefore":900000`))
	prev = "compact0"
	for i := range ms.tail {
		id := fmt.Sprintf("tail%04d", i)
		line(hMsg(id, prev))
		prev = id
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	fi, err := f.Stat()
	if err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return fi.Size(), longest
}

// runMeasured runs the sessiontree command and returns its peak resident
// memory and how long it took; it fails unless the command exits 0. See
// measureCLI.
func runMeasured(tb testing.TB, args ...string) (peak int64, took time.Duration, out string) {
	tb.Helper()
	peak, took, res := measureCLI(tb, cliRun{}, args...)
	if res.code != 0 {
		tb.Fatalf("sessiontree %q exited %d\n%s", args, res.code, res.stderr)
	}
	return peak, took, res.stdout
}

// measureCLI runs the sessiontree command as o says (its env, stdin and
// timeout) and returns its peak resident memory, how long it took and
// what it did. ru_maxrss of the command cannot be read directly: Go
// starts commands with vfork, and Linux then counts this test process's
// memory as the command's. So the command runs under GNU time (which
// forks) when /usr/bin/time exists, and otherwise the kernel's high-water
// mark of the command's own address space (VmHWM) is read every
// millisecond while it runs, which may miss a peak in its last moment.
func measureCLI(tb testing.TB, o cliRun, args ...string) (peak int64, took time.Duration, res cliResult) {
	tb.Helper()
	if o.timeout == 0 {
		o.timeout = 10 * time.Minute
	}
	bin := sessiontreeCommand(tb)
	timeOut := filepath.Join(tb.TempDir(), "maxrss")
	gnuTime := exec.Command("/usr/bin/time", "-f", "%M", "-o", timeOut, "true").Run() == nil
	cmd := exec.Command(bin, args...)
	if gnuTime {
		cmd = exec.Command("/usr/bin/time", append([]string{"-f", "%M", "-o", timeOut, bin}, args...)...)
	}
	cmd.Env = append(os.Environ(), o.env...)
	cmd.Stdin = o.stdin
	// A group of its own, so that a timeout kills the command, not only
	// GNU time above it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	killer := time.AfterFunc(o.timeout, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		if gnuTime {
			return
		}
		status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
		for {
			if hwm := vmHWM(status); hwm > peak {
				peak = hwm
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	err := cmd.Wait()
	took = time.Since(start)
	close(stop)
	<-done
	if !killer.Stop() {
		tb.Fatalf("sessiontree %q did not finish in %v (a hang?)", args, o.timeout)
	}
	res = cliResult{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	default:
		tb.Fatalf("sessiontree %q: %v\n%s", args, err, stderr.String())
	}
	if gnuTime {
		b, err := os.ReadFile(timeOut)
		if err != nil {
			tb.Fatal(err)
		}
		// GNU time notes a non-zero exit on a line of its own first.
		f := strings.Fields(string(b))
		if len(f) == 0 {
			tb.Fatalf("GNU time said %q", b)
		}
		kb, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		if err != nil {
			tb.Fatalf("GNU time said %q", b)
		}
		peak = kb << 10
	}
	if peak == 0 {
		tb.Skip("cannot measure a command's memory on this system")
	}
	return peak, took, res
}

// vmHWM reads the VmHWM line of a /proc/<pid>/status file, in bytes; 0
// when it cannot (the process is gone, or not yet exec'd: then its
// address space is still this process's, so only values read after the
// exec count, and the command's name is checked).
func vmHWM(status string) int64 {
	b, err := os.ReadFile(status)
	if err != nil || !strings.Contains(string(b), "Name:\tsessiontree") {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n << 10
			}
		}
	}
	return 0
}

// memReport is what the resume-mem child measured.
type memReport struct {
	PeakHeap   uint64 `json:"peakHeap"`
	Allocated  uint64 `json:"allocated"`
	Messages   int    `json:"messages"`
	PathLength int    `json:"pathLength"`
	Entries    int64  `json:"entries"`
}

// resumeMemChild resumes a session as an agent does (open the store and
// the session, build the context, read the active branch and the stats)
// while sampling the Go heap, and prints the peak and the bytes
// allocated as "mem <json>".
func resumeMemChild(ctx context.Context, spec childSpec) error {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var mu sync.Mutex // guards peak
	peak := before.HeapAlloc
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			mu.Lock()
			peak = max(peak, s[0].Value.Uint64())
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()

	s, err := store.Open(ctx, spec.DB, store.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	st, err := s.OpenSession(ctx, spec.Session[:8]) // by prefix, as the command line does
	if err != nil {
		return err
	}
	sess := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	c, err := sess.Context(ctx, sessiontree.ContextOptions{})
	if err != nil {
		return err
	}
	branch, err := sess.Branch(ctx, "")
	if err != nil {
		return err
	}
	stats, err := sess.Stats(ctx)
	if err != nil {
		return err
	}

	close(stop)
	<-done
	runtime.ReadMemStats(&after) // exact: it flushes every P's cache
	mu.Lock()
	peak = max(peak, after.HeapAlloc)
	mu.Unlock()
	rep := memReport{PeakHeap: peak, Allocated: after.TotalAlloc - before.TotalAlloc,
		Messages: len(c.Messages), PathLength: len(branch), Entries: stats.Entries}
	b, _ := json.Marshal(rep)
	printLine("mem %s", b)
	return nil
}

// TestBoundedMemory generates a session whose tool results hold hundreds
// of megabytes of payloads before its compaction boundary (500 MB in the
// full run), imports it through the store with the sessiontree command,
// and resumes it. Resuming must not read the payloads: the Go heap of a
// process that opens the session and builds its context stays under 64
// MB and allocates far less than one tenth of the payloads, and the
// command's whole process stays under 64 MB resident. Importing streams:
// the import's peak memory does not grow with the file (a file four times
// larger costs at most about a chunk more), only with its longest line.
func TestBoundedMemory(t *testing.T) {
	// Every measure is of a child process (the command's peak RSS, the
	// resuming child's Go heap), which the tests running beside it do not
	// change.
	t.Parallel()
	// The command is built without the race detector and imports fast,
	// so these sizes do not shrink under it.
	if testing.Short() {
		// Its smallest run (48 MB, for the smaller file to pass the
		// import's 8 MB batch) costs 2 s of CPU.
		t.Skip("runs without -short: a session of 48 MB of payloads imported and resumed in bounded memory")
	}
	payloadMB := pick(0, 48, 500) // the smaller file must pass the import's 8 MB batch
	dir := t.TempDir()
	const limit = 64 << 20

	type result struct {
		file              int64
		longest           int
		importPeak        int64
		importTook        time.Duration
		resumePeak        int64
		db                string
		ms                memSession
		contextJSONLength int
	}
	run := func(name string, payloads int) result {
		ms := memSession{id: fmt.Sprintf("0190a000-0000-7000-8000-%012d", payloads), payloads: payloads, payloadBytes: 1 << 20, tail: 20}
		file := filepath.Join(dir, name+".jsonl")
		size, longest := writeMemSession(t, file, ms)
		db := filepath.Join(dir, name+".db")
		peak, took, out := runMeasured(t, "--db", db, "import", file)
		if !strings.Contains(out, "1 new") {
			t.Fatalf("import %s: %s", name, out)
		}
		if err := os.Remove(file); err != nil {
			t.Fatal(err)
		}
		resume, _, ctxOut := runMeasured(t, "--db", db, "context", ms.id[:8], "--json")
		return result{file: size, longest: longest, importPeak: peak, importTook: took, resumePeak: resume, db: db, ms: ms, contextJSONLength: len(ctxOut)}
	}
	small := run("small", payloadMB/4)
	big := run("big", payloadMB)

	// Resume in a process of its own, with the Go heap sampled.
	c := startChild(t, childSpec{Role: "resume-mem", DB: big.db, Session: big.ms.id})
	line := c.expect(t, "mem ", 2*time.Minute, nil)
	c.finish(t, time.Minute)
	var rep memReport
	if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "mem ")), &rep); err != nil {
		t.Fatal(err)
	}
	payloadBytes := uint64(big.ms.payloads * big.ms.payloadBytes)
	t.Logf("session: %d MB file, %d payloads of %d KB before the compaction, longest line %d KB",
		big.file>>20, big.ms.payloads, big.ms.payloadBytes>>10, big.longest>>10)
	t.Logf("resume (open + context + branch + stats): peak Go heap %.1f MB, %.1f MB allocated, %d context messages, path of %d, %d entries",
		mb(rep.PeakHeap), mb(rep.Allocated), rep.Messages, rep.PathLength, rep.Entries)
	t.Logf("`sessiontree context`: peak RSS %.1f MB (session of %d MB) and %.1f MB (session of %d MB)",
		mb(uint64(big.resumePeak)), big.file>>20, mb(uint64(small.resumePeak)), small.file>>20)
	t.Logf("`sessiontree import`: peak RSS %.1f MB for %d MB in %v, %.1f MB for %d MB in %v",
		mb(uint64(big.importPeak)), big.file>>20, big.importTook.Round(time.Millisecond), mb(uint64(small.importPeak)), small.file>>20, small.importTook.Round(time.Millisecond))

	// The context: the summary, the kept message, the tail; the path: the
	// kept message, the compaction, the tail.
	if want := 2 + big.ms.tail; rep.Messages != want || rep.PathLength != want {
		t.Errorf("context of %d messages, path of %d; want %d each", rep.Messages, rep.PathLength, want)
	}
	if rep.Entries != int64(big.ms.payloads+big.ms.tail+3) {
		t.Errorf("stats count %d entries; want %d", rep.Entries, big.ms.payloads+big.ms.tail+3)
	}
	if rep.PeakHeap > limit {
		t.Errorf("resume: peak Go heap %.1f MB; want under 64 MB", mb(rep.PeakHeap))
	}
	if rep.Allocated > payloadBytes/10 {
		t.Errorf("resume allocated %.1f MB, more than a tenth of the %d MB of payloads: it reads them", mb(rep.Allocated), payloadBytes>>20)
	}
	if big.resumePeak > limit {
		t.Errorf("`sessiontree context`: peak RSS %.1f MB; want under 64 MB", mb(uint64(big.resumePeak)))
	}
	if big.contextJSONLength > 64<<10 {
		t.Errorf("the context is %d bytes of JSON: payloads leaked into it", big.contextJSONLength)
	}
	// Streaming: four times the file, nearly the same memory. The import
	// holds one line and two chunks of at most 8 MB (one committed while
	// the next is read, store/importplan.go's chunksHeld), SQLite its page
	// cache; the smaller file's two chunks are 8 and 4 MB, so the larger
	// may hold a chunk's worth more, and the Go heap up to twice its live
	// size before a collection (measured under a load of 6: 10-26 MB more).
	if grow := big.importPeak - small.importPeak; grow > 32<<20 {
		t.Errorf("import peak RSS grew by %.1f MB from a %d MB file to a %d MB one; want it independent of the file size",
			mb(uint64(grow)), small.file>>20, big.file>>20)
	}
	if big.importPeak > 160<<20 {
		t.Errorf("import peak RSS %.1f MB for 1 MB lines; want it bounded by the line and the batch", mb(uint64(big.importPeak)))
	}
}

func mb(n uint64) float64 { return float64(n) / (1 << 20) }
