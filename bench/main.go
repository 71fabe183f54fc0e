package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"
)

func main() {
	if status, ok := runChild(os.Args); ok {
		os.Exit(status)
	}
	opts, err := parseFlags(os.Args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	opts.Command = "go run ./bench " + strings.Join(os.Args[1:], " ")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, opts, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// runChild runs the binary as one of the children the bench starts, when
// its first argument (args[1], args being os.Args) names one: a writers
// child, the spawner or an import child. It returns the exit status, and
// false when args name none.
func runChild(args []string) (int, bool) {
	if len(args) < 2 {
		return 0, false
	}
	switch args[1] {
	case writerChildArg:
		return writerChild(args[2:]), true
	case spawnChildArg:
		return spawnChild(os.Stdin, os.Stdout), true
	case importChildArg:
		return importChild(os.Stdin, os.Stdout), true
	}
	return 0, false
}

// run is the whole program: generate, measure, report.
func run(ctx context.Context, opts Options, stdout, stderr io.Writer) (err error) {
	if err := opts.Validate(); err != nil {
		return fmt.Errorf("options: %w", err)
	}
	r := &runner{opts: opts, stderr: stderr, start: time.Now()}
	if r.dir, err = workDir(opts); err != nil {
		return err
	}
	if opts.Keep {
		r.progress("working directory %s (kept)", r.dir)
	} else {
		defer os.RemoveAll(r.dir)
	}

	if opts.CPUProfile != "" {
		stopProfile, err := startCPUProfile(opts.CPUProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	if opts.Process {
		return runProcessMode(ctx, opts, stdout, r)
	}
	pgSet, stopPG, err := r.startPG(ctx)
	if err != nil {
		return err
	}
	defer stopPG()
	rep := &Report{
		Date: time.Now().UTC().Format("2006-01-02 15:04 UTC"), Command: opts.Command,
		GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		CPUs: runtime.NumCPU(), CPU: cpuModel(),
		Sizes: opts.Sizes, Shapes: opts.Shapes, Runs: opts.Runs, Seed: opts.Seed, Quick: opts.Quick,
	}
	if rep.Command == "" {
		rep.Command = "bench (in-process)"
	}
	if pgSet.note != "" {
		rep.Notes = append(rep.Notes, pgSet.note)
		rep.PGCommits = pgSet.commits
	}
	for _, b := range []string{backendJSONL, backendEngine} {
		if !backendCompiled(b) {
			rep.Notes = append(rep.Notes, fmt.Sprintf("The %s backend is not in this checkout yet: its rows are missing.", b))
		}
	}
	if opts.VsPi {
		for _, v := range opts.PiVersions {
			pi, err := startPi(ctx, opts.PiCache, v, true, r.progress)
			if errors.Is(err, errNoNode) {
				r.progress("-vs-pi: node or npm not found; skipping pi")
				rep.Notes = append(rep.Notes, "pi was not measured: node and npm were not found.")
				break
			}
			if err != nil {
				return err
			}
			r.pis = append(r.pis, pi)
			rep.Node = pi.node
			rep.Pi = append(rep.Pi, PiRelease{Version: pi.version, Package: pi.pkg, Backend: pi.backend})
			defer pi.close()
			r.progress("pi %s (%s) loader running on node %s", pi.version, pi.pkg, pi.node)
		}
	}

	for _, size := range opts.Sizes {
		for _, shape := range opts.Shapes {
			if shape == ShapeLarge && size > opts.LargeMaxSize {
				continue
			}
			if size >= 100_000 && len(opts.BigShapes) > 0 && !slices.Contains(opts.BigShapes, shape) {
				continue
			}
			if err := r.runDataset(ctx, shape, size); err != nil {
				return err
			}
			rep.Datasets = append(rep.Datasets, r.lastDataset)
		}
	}
	if err := r.runCorpus(ctx); err != nil {
		return err
	}
	if err := r.runFleet(ctx); err != nil {
		return err
	}
	if err := r.runProcWriters(ctx); err != nil {
		return err
	}
	if r.lastDataset.Name != "" && (len(rep.Datasets) == 0 || rep.Datasets[len(rep.Datasets)-1].Name != r.lastDataset.Name) {
		rep.Datasets = append(rep.Datasets, r.lastDataset)
	}
	rep.Results, rep.FolderProcess = r.results, r.processImports
	rep.Seconds = time.Since(r.start).Seconds()
	rep.checkTargets()

	if opts.Benchstat {
		rep.writeBenchstat(stdout)
	} else {
		rep.writeMarkdown(stdout)
	}
	if opts.Out != "" {
		if err := rep.writeFiles(opts.Out); err != nil {
			return fmt.Errorf("write results: %w", err)
		}
		r.progress("wrote %s/results.json, results.md, results.benchstat.txt and charts", opts.Out)
	}
	r.progress("done in %.0fs", rep.Seconds)
	return nil
}

// startPG starts or connects to the server of the postgres rows, with
// -pg, and returns the settings saying what server it is and how it
// syncs.
func (r *runner) startPG(ctx context.Context) (settings pgSettings, stop func() error, err error) {
	if r.opts.PG == "" {
		return pgSettings{}, func() error { return nil }, nil
	}
	if r.pgURL, stop, err = startPostgres(ctx, r.opts); err != nil {
		return pgSettings{}, nil, err
	}
	what := "the -pg server"
	if r.opts.PG == pgAuto {
		what = "a throwaway cluster, -pg auto"
		if r.opts.PGDurable {
			what += " -pg-durable"
		}
	}
	if settings, err = pgServerSettings(ctx, r.pgURL, what); err != nil {
		return pgSettings{}, nil, errors.Join(err, stop())
	}
	r.progress("%s", settings.note)
	return settings, stop, nil
}

// startCPUProfile writes a CPU profile of the run to path
// (Options.CPUProfile) until the function it returns is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// workDir makes the directory generated files go to.
func workDir(opts Options) (string, error) {
	if opts.Dir == "" {
		return os.MkdirTemp("", "sessiontree-bench-")
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return "", err
	}
	return opts.Dir, nil
}

// backendCompiled reports whether a session backend is built in.
func backendCompiled(name string) bool {
	for _, b := range sessionBackends {
		if b.name() == name {
			return true
		}
	}
	return false
}
