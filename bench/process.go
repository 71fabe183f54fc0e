package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// Whole-process mode (-process, issue 17): what a person or a harness
// actually runs. The sessiontree binary is built (or -sessiontree names
// one), a session of Options.ProcessShape (compacted unless
// -process-shape says otherwise) and Options.ProcessSize entries is
// generated and imported into a database, and each command runs as a fresh process,
// Options.Runs times, the commands' order rotating each round. Times are
// wall clock from the start of the process to its exit; RSS is the
// process's peak (its rusage, see spawn.go). The floor is the process start itself
// (`sessiontree --help`); beside it, the engine's in-process resume and,
// with -vs-pi, pi's own loader in its warm node process.

// processCommand is one command line timed as a whole process.
type processCommand struct {
	name string
	args func(db, session string) []string
	// after runs, untimed, after each run with its stdout (a fork's new
	// session is deleted again).
	after func(ctx context.Context, bin, db string, stdout []byte) error
	// limitNs is issue 17's bound on its median; 0 for none.
	limitNs float64
	target  string
	// whole marks a command that reads or copies the whole session
	// (check, fork): it is timed on the compacted shape only (item 1);
	// on the others, such as the images shape of hundreds of MB, the
	// target is the resume.
	whole bool
}

// processFloor is the row of the process-start floor.
const processFloor = "--help"

var processCommands = []processCommand{
	{name: processFloor, args: func(db, _ string) []string { return []string{"--db", db, "--help"} }},
	{name: "context --json", args: func(db, s string) []string { return []string{"--db", db, "context", s, "--json"} }},
	{name: "info", args: func(db, s string) []string { return []string{"--db", db, "info", s} },
		limitNs: 10e6, target: "`info` ≤ 10 ms whatever the session size"},
	{name: "info --json", args: func(db, s string) []string { return []string{"--db", db, "info", s, "--json"} },
		limitNs: 10e6, target: "`info --json` ≤ 10 ms whatever the session size"},
	{name: "tree", args: func(db, s string) []string { return []string{"--db", db, "tree", s} },
		limitNs: 50e6, target: "`tree` (folded) ≤ 50 ms"},
	{name: "check SESSION", args: func(db, s string) []string { return []string{"--db", db, "check", s} },
		limitNs: 1e9, target: "`check SESSION` ≤ 1 s", whole: true},
	{name: "fork --tree", args: func(db, s string) []string { return []string{"--db", db, "fork", s, "--tree"} },
		after: func(ctx context.Context, bin, db string, stdout []byte) error {
			id := strings.TrimSpace(string(stdout))
			if id == "" {
				return errors.New("fork printed no session id")
			}
			_, err := runProcess(ctx, bin, "--db", db, "rm", "--yes", id)
			return err
		},
		limitNs: 1e9, target: "`fork --tree` ≤ 1 s", whole: true},
}

// commandsFor returns the commands timed on a session of shape: all of
// them on the compacted shape (issue 17 item 1), the others without the
// whole-session ones.
func commandsFor(shape Shape) []processCommand {
	if shape == ShapeCompacted {
		return processCommands
	}
	var out []processCommand
	for _, c := range processCommands {
		if !c.whole {
			out = append(out, c)
		}
	}
	return out
}

// processPiVersion is the pi release issue 17's whole-process target
// compares with.
const processPiVersion = "1.6.0"

// Issue 17 item 4: the resume of a 450 MB session of inline images.
const (
	largeResumeNs  = 50e6
	largeResumeRSS = 32 << 20
	largeFileBytes = 450 << 20
)

// ProcessResult is one command's whole-process measurement.
type ProcessResult struct {
	// Command is the command line after `sessiontree --db DB`.
	Command string `json:"command"`
	// RunsNs are the wall times of each run, in run order.
	RunsNs []float64 `json:"runsNs"`
	// MedianNs, MinNs and MaxNs summarize RunsNs.
	MedianNs float64 `json:"medianNs"`
	MinNs    float64 `json:"minNs"`
	MaxNs    float64 `json:"maxNs"`
	// MaxRSS is the largest peak RSS of the runs, in bytes.
	MaxRSS int64 `json:"maxRSSBytes"`
}

// ProcessReport is the whole-process mode's output.
type ProcessReport struct {
	Date    string          `json:"date"`
	Command string          `json:"command"`
	Session DatasetInfo     `json:"session"`
	Runs    int             `json:"runs"`
	Results []ProcessResult `json:"results"`
	// InProcessResumeNs is the engine's resume in this process (open the
	// session, build its context) with the database open: the floor
	// `context --json` adds its process start to.
	InProcessResumeNs float64 `json:"inProcessResumeNs"`
	// PiNs is pi's loader (open + buildSessionContext) in its warm node
	// process, 0 when not measured; Pi names the release.
	PiNs    float64  `json:"piNs,omitempty"`
	Pi      string   `json:"pi,omitempty"`
	Targets []Target `json:"targets"`
	// Baseline is the binary of -baseline, and BaselineResults its
	// commands' measurements, in Results' order, their runs interleaved
	// with Results'; empty without -baseline.
	Baseline        string          `json:"baseline,omitempty"`
	BaselineResults []ProcessResult `json:"baselineResults,omitempty"`
}

// runProcessMode is the whole program in -process mode.
func runProcessMode(ctx context.Context, opts Options, stdout io.Writer, r *runner) error {
	sp, err := startSpawner(ctx) // before the bench grows: see spawn.go
	if err != nil {
		return err
	}
	defer sp.close()
	bin := opts.Binary
	if bin == "" {
		bin = filepath.Join(r.dir, "sessiontree")
		r.progress("building the sessiontree binary")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/sessiontree/sessiontree/cmd/sessiontree")
		// Static, as the README installs it: no dynamic loader or C
		// library to start in every process (1 ms of `--help`'s 4.4).
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build sessiontree: %w\n%s", err, out)
		}
	}
	ds, err := generate(opts.Seed, opts.ProcessShape, opts.ProcessSize, filepath.Join(r.dir, "sessions"))
	if err != nil {
		return err
	}
	if err := ds.reference(ctx); err != nil {
		return err
	}
	db := filepath.Join(r.dir, "process.db")
	t0 := time.Now()
	if _, err := runProcess(ctx, bin, "--db", db, "import", ds.File); err != nil {
		return fmt.Errorf("import %s: %w", ds.File, err)
	}
	r.progress("generated and imported %s: %d entries, %s (import %v)", ds.name(), len(ds.Entries), fmtBytes(ds.FileBytes), time.Since(t0).Round(time.Millisecond))
	rep := &ProcessReport{Date: time.Now().UTC().Format("2006-01-02 15:04 UTC"), Command: opts.Command, Runs: opts.Runs,
		Session: DatasetInfo{Name: ds.name(), Entries: len(ds.Entries), FileBytes: ds.FileBytes,
			ActivePath: len(ds.ActivePath), ContextMessages: ds.ContextMessages}}
	s := processSession{file: ds.File, id: ds.Meta.ID, messages: ds.ContextMessages}
	// The commands run in the spawner (spawn.go); let go of the dataset
	// all the same, the memory of the in-process resume.
	ds = nil
	runtime.GC()
	debug.FreeOSMemory()
	bins := []string{bin}
	if opts.Baseline != "" {
		bins = append(bins, opts.Baseline)
	}
	res, err := timeCommands(ctx, sp, bins, db, s.id, commandsFor(opts.ProcessShape), opts.Runs, r)
	if err != nil {
		return err
	}
	rep.Results = res[0]
	if len(res) > 1 {
		rep.Baseline, rep.BaselineResults = opts.Baseline, res[1]
	}
	if rep.InProcessResumeNs, err = inProcessResume(ctx, db, s, opts.Runs); err != nil {
		return err
	}
	if opts.VsPi && len(opts.PiVersions) > 0 {
		if rep.PiNs, rep.Pi, err = piLoader(ctx, opts, s, r); err != nil {
			return err
		}
	}
	rep.checkTargets()
	rep.writeMarkdown(stdout)
	if opts.Out != "" {
		if err := os.MkdirAll(opts.Out, 0o755); err != nil {
			return err
		}
		var md bytes.Buffer
		rep.writeMarkdown(&md)
		js, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := errors.Join(os.WriteFile(filepath.Join(opts.Out, "process.md"), md.Bytes(), 0o644),
			os.WriteFile(filepath.Join(opts.Out, "process.json"), js, 0o644)); err != nil {
			return err
		}
		r.progress("wrote %s/process.json and process.md", opts.Out)
	}
	return nil
}

// processSession is what the whole-process mode keeps of its session.
type processSession struct {
	file, id string
	messages int // in the context at the leaf
}

// runProcess runs the binary once and returns its stdout; a failure
// carries its stderr.
func runProcess(ctx context.Context, bin string, args ...string) ([]byte, error) {
	out, _, err := timeProcess(ctx, true, bin, args...)
	return out, err
}

// timeProcess runs the binary once and returns its peak RSS and, when
// keep, its stdout; the caller times it. An output not kept is read by a
// consumer that keeps up (drain), not gathered in a growing buffer, whose
// copies and page faults on this 2-core machine took CPU from the command
// they timed (resume of the inline-image session, 5.5 MB of output:
// 29.7–83.1 ms over 7 runs).
func timeProcess(ctx context.Context, keep bool, bin string, args ...string) ([]byte, int64, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if !keep {
		cmd.Stdout = drain{}
	}
	resetHWM()
	if err := cmd.Run(); err != nil {
		return nil, 0, fmt.Errorf("%s %s: %w: %s", filepath.Base(bin), strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), peakRSS(cmd.ProcessState), nil
}

// timeCommands runs every command once untimed (to warm the page cache),
// then runs rounds, each command once per round and binary, the order of
// the commands rotating each round and that of the binaries alternating,
// each run started by the spawner sp. It returns each binary's results.
func timeCommands(ctx context.Context, sp *spawner, bins []string, db, session string, commands []processCommand, runs int, r *runner) ([][]ProcessResult, error) {
	n := len(commands)
	res := make([][]ProcessResult, len(bins))
	for b := range bins {
		res[b] = make([]ProcessResult, n)
	}
	for round := -1; round < runs; round++ {
		for i := range n {
			k := (i + max(round, 0)) % n
			for j := range bins {
				b := (j + max(round, 0)) % len(bins)
				if err := timeCommand(ctx, sp, bins[b], db, session, commands[k], round >= 0, &res[b][k]); err != nil {
					return nil, err
				}
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	for b := range bins {
		label := ""
		if b > 0 {
			label = " (baseline)"
		}
		for k, c := range commands {
			p := &res[b][k]
			p.Command = c.name
			p.MedianNs = median(p.RunsNs)
			p.MinNs, p.MaxNs = minMax(p.RunsNs)
			r.progress("  %-16s %s (RSS %s)%s", c.name, fmtDuration(p.MedianNs), fmtBytes(p.MaxRSS), label)
		}
	}
	return res, nil
}

// timeCommand runs c once with bin and, when timed, adds the run to p.
func timeCommand(ctx context.Context, sp *spawner, bin, db, session string, c processCommand, timed bool, p *ProcessResult) error {
	out, d, rss, err := sp.run(c.after != nil, bin, c.args(db, session)...)
	if err != nil {
		return err
	}
	if c.after != nil {
		if err := c.after(ctx, bin, db, out); err != nil {
			return err
		}
	}
	if timed {
		p.RunsNs = append(p.RunsNs, float64(d.Nanoseconds()))
		p.MaxRSS = max(p.MaxRSS, rss)
	}
	return nil
}

func minMax(xs []float64) (lo, hi float64) {
	for i, x := range xs {
		if i == 0 || x < lo {
			lo = x
		}
		if i == 0 || x > hi {
			hi = x
		}
	}
	return lo, hi
}

// inProcessResume is the median of runs resumes of the session in this
// process with the database open: open the session and build its context.
func inProcessResume(ctx context.Context, path string, s processSession, runs int) (float64, error) {
	db, err := engine.Open(ctx, path, engine.Options{})
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var times []float64
	for i := -1; i < runs; i++ {
		start := time.Now()
		st, err := db.OpenSession(ctx, s.id)
		if err != nil {
			return 0, err
		}
		c, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).Context(ctx, sessiontree.ContextOptions{})
		st.Close()
		if err != nil {
			return 0, err
		}
		if len(c.Messages) != s.messages {
			return 0, fmt.Errorf("in-process resume: %d messages, want %d", len(c.Messages), s.messages)
		}
		if i >= 0 {
			times = append(times, float64(time.Since(start).Nanoseconds()))
		}
	}
	return median(times), nil
}

// piLoader times the first release of opts.PiVersions resuming the
// session file in its warm node process; 0 when node is missing.
func piLoader(ctx context.Context, opts Options, s processSession, r *runner) (float64, string, error) {
	pi, err := startPi(ctx, opts.PiCache, opts.PiVersions[0], true, r.progress)
	if errors.Is(err, errNoNode) {
		r.progress("-vs-pi: node or npm not found; skipping pi")
		return 0, "", nil
	}
	if err != nil {
		return 0, "", err
	}
	defer pi.close()
	var times []float64
	for i := -1; i < min(opts.Runs, slowRuns); i++ {
		rep, err := pi.call(piRequest{Op: "resume", File: s.file, N: 1})
		if err != nil {
			return 0, "", err
		}
		if rep.Messages != s.messages {
			return 0, "", fmt.Errorf("pi %s's context has %d messages, ours %d", pi.version, rep.Messages, s.messages)
		}
		if i >= 0 {
			times = append(times, rep.NS)
		}
	}
	return median(times), pi.backend, nil
}

func (rep *ProcessReport) find(name string) *ProcessResult {
	for i := range rep.Results {
		if rep.Results[i].Command == name {
			return &rep.Results[i]
		}
	}
	return nil
}

// checkTargets evaluates issue 17's whole-process targets: item 1 on the
// compacted shape, item 4 on the images one, none on the others.
func (rep *ProcessReport) checkTargets() {
	switch {
	case strings.HasPrefix(rep.Session.Name, string(ShapeCompacted)+"-"):
		rep.checkReadTargets()
	case strings.HasPrefix(rep.Session.Name, string(ShapeImages)+"-"):
		rep.checkLargeTargets()
	}
}

// checkLargeTargets evaluates item 4: the resume of the compacted session
// of inline images, its time and its peak RSS.
func (rep *ProcessReport) checkLargeTargets() {
	add := func(target, measured, v string) { rep.Targets = append(rep.Targets, Target{target, measured, v}) }
	at := ""
	if rep.Session.FileBytes < largeFileBytes*9/10 {
		at = fmt.Sprintf(" (on %s; the target is for 450 MB: -process-shape images -process-size 60k)", fmtBytes(rep.Session.FileBytes))
	}
	c := rep.find("context --json")
	m := fmtDuration(c.MedianNs)
	if c.MedianNs > largeResumeNs {
		m += fmt.Sprintf(", %s the bound", fmtRatio(c.MedianNs/largeResumeNs))
	}
	add("resume (`context --json`) of the 450 MB inline-image session ≤ 50 ms whole process", m+at, verdict(c.MedianNs <= largeResumeNs))
	add("… and ≤ 32 MB RSS", fmtBytes(c.MaxRSS)+at, verdict(c.MaxRSS <= largeResumeRSS))
}

// checkReadTargets evaluates item 1's whole-process targets.
func (rep *ProcessReport) checkReadTargets() {
	add := func(target, measured, v string) { rep.Targets = append(rep.Targets, Target{target, measured, v}) }
	at := ""
	if rep.Session.Entries != targetSize {
		at = fmt.Sprintf(" (at %s; the target is for %s)", sizeLabel(rep.Session.Entries), sizeLabel(targetSize))
	}
	ctxRes, floor := rep.find("context --json"), rep.find(processFloor)
	piTarget := "whole-process `context --json` ≥ 150× faster than pi " + processPiVersion + "'s loader"
	switch {
	case rep.PiNs > 0 && rep.Pi != piBackend(processPiVersion):
		add(piTarget, fmt.Sprintf("pi %s not measured (%s was: -pi-versions %s first)", processPiVersion, rep.Pi, processPiVersion), verdictNotRun)
	case rep.PiNs > 0:
		x := rep.PiNs / ctxRes.MedianNs
		add(piTarget, fmt.Sprintf("%s vs %s %s: %s%s", fmtDuration(ctxRes.MedianNs), rep.Pi, fmtDuration(rep.PiNs), fmtRatio(x), at), verdict(x >= 150))
	default:
		add(piTarget, "pi not measured (run with -vs-pi)", verdictNotRun)
	}
	bound := floor.MedianNs + rep.InProcessResumeNs
	x := ctxRes.MedianNs / bound
	add("whole-process `context --json` within 1.5× of the process start plus the in-process resume",
		fmt.Sprintf("%s vs %s + %s: %s%s", fmtDuration(ctxRes.MedianNs), fmtDuration(floor.MedianNs), fmtDuration(rep.InProcessResumeNs), fmtRatio(x), at),
		verdict(x <= 1.5))
	for _, c := range processCommands {
		if c.target == "" {
			continue
		}
		p := rep.find(c.name)
		m := fmtDuration(p.MedianNs)
		if p.MedianNs > c.limitNs {
			m += fmt.Sprintf(", %s the bound", fmtRatio(p.MedianNs/c.limitNs))
		}
		add(c.target, m+at, verdict(p.MedianNs <= c.limitNs))
	}
}

// writeMarkdown prints the whole-process table and the targets.
func (rep *ProcessReport) writeMarkdown(w io.Writer) {
	fmt.Fprintf(w, "# sessiontree whole-process benchmark\n\n%s, `%s`, %d runs per command, on %s (%d entries, %s, context %d messages).\n\n",
		rep.Date, rep.Command, rep.Runs, rep.Session.Name, rep.Session.Entries, fmtBytes(rep.Session.FileBytes), rep.Session.ContextMessages)
	fmt.Fprintln(w, "Wall time of a fresh process, start to exit: median, then the fastest and slowest run; ×start is the median over `sessiontree --help`'s; peak RSS is the largest of the runs.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| command | median | min–max | ×start | peak RSS |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|")
	floor := rep.find(processFloor)
	for _, p := range rep.Results {
		fmt.Fprintf(w, "| `sessiontree %s` | %s | %s–%s | %s | %s |\n", p.Command, fmtDuration(p.MedianNs),
			fmtDuration(p.MinNs), fmtDuration(p.MaxNs), fmtRatio(p.MedianNs/floor.MedianNs), fmtBytes(p.MaxRSS))
	}
	fmt.Fprintf(w, "| engine resume in process (database open) | %s | | | |\n", fmtDuration(rep.InProcessResumeNs))
	if rep.PiNs > 0 {
		fmt.Fprintf(w, "| %s loader (warm node process) | %s | | %s | |\n", rep.Pi, fmtDuration(rep.PiNs), fmtRatio(rep.PiNs/floor.MedianNs))
	}
	fmt.Fprintf(w, "\n## Targets (issue 17)\n\n| target | measured | verdict |\n|---|---|---|\n")
	for _, t := range rep.Targets {
		fmt.Fprintf(w, "| %s | %s | %s |\n", t.Target, t.Measured, t.Verdict)
	}
	rep.writeBaseline(w)
}

// writeBaseline prints, with -baseline, each command's median beside the
// baseline binary's and how many times faster it is.
func (rep *ProcessReport) writeBaseline(w io.Writer) {
	if len(rep.BaselineResults) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Against the baseline\n\nThe baseline is `%s`, its runs interleaved with the others'; ×faster is its median over this binary's.\n\n", rep.Baseline)
	fmt.Fprintln(w, "| command | median | baseline | ×faster |")
	fmt.Fprintln(w, "|---|--:|--:|--:|")
	for i, p := range rep.Results {
		b := rep.BaselineResults[i]
		fmt.Fprintf(w, "| `sessiontree %s` | %s | %s | %s |\n", p.Command, fmtDuration(p.MedianNs), fmtDuration(b.MedianNs), fmtRatio(b.MedianNs/p.MedianNs))
	}
}

// drain reads a command's output a MiB at a time and discards it.
type drain struct{}

// drainBuf is drain's buffer: the spawner times one command at a time.
var drainBuf = make([]byte, 1<<20)

// Write discards p.
func (drain) Write(p []byte) (int, error) { return len(p), nil }

// ReadFrom reads r to its end, discarding what it reads.
func (drain) ReadFrom(r io.Reader) (int64, error) {
	var n int64
	for {
		k, err := r.Read(drainBuf)
		n += int64(k)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}
