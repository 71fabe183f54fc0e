package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Options configure a benchmark run. [DefaultOptions] gives the full run;
// [Options.Validate] checks a set before running.
type Options struct {
	// Sizes are the session sizes in entries.
	Sizes []int
	// Shapes are the session shapes to generate.
	Shapes []Shape
	// Workloads names the workloads to run; empty means all.
	Workloads []string
	// Backends names the backends to run; empty means every one built in
	// (memory, jsonl, engine, the floors; pi with VsPi).
	Backends []string
	// Runs is how many interleaved repetitions each measurement gets.
	Runs int
	// MinRunTime is how long one run of a fast operation should last: the
	// operation is repeated until a run takes about this long, and the run
	// reports time per operation.
	MinRunTime time.Duration
	// LargeMaxSize caps the size of the large-payload shape, whose files
	// grow by ~8 MB per 1,000 entries.
	LargeMaxSize int
	// BigShapes are the shapes run at sizes of 100k entries and more;
	// empty means every shape. By default only the compacted shape, the
	// one the headline targets are about: generating a 100k session and
	// loading it into every backend takes seconds per shape, and every
	// workload then runs on it.
	BigShapes []Shape
	// ImportMaxSize caps the session size of the import workload, whose
	// runs at 100k entries take half a minute per backend; 0 means no cap.
	ImportMaxSize int
	// CorpusSessions is how many sessions the corpus of the list, search
	// and store-import workloads has; 0 skips those workloads.
	CorpusSessions int
	// CorpusMaxEntries is the largest corpus session; sizes are
	// log-uniform from 2 up to it, so most sessions are short.
	CorpusMaxEntries int
	// FolderSessions are the long sessions of the folder workloads'
	// pi folder, beside the store-import workload's small files.
	FolderSessions []folderSession
	// FolderLine is the length in bytes of the line (an inline image)
	// added to the folder for its last import in a child process, which
	// checks that the import's memory follows the folder's longest line
	// (issue 17); 0 for no such import.
	FolderLine int
	// FleetWriters are the numbers of writers the fleet workload runs
	// with, each a row (issue 17's targets are at 1 and 64); empty skips
	// the workload.
	FleetWriters []int
	// Process selects the whole-process mode (process.go): the
	// sessiontree binary's commands timed as fresh processes on a
	// session of ProcessShape and ProcessSize entries, instead of the
	// workloads.
	Process bool
	// ProcessSize is the session size of the whole-process mode.
	ProcessSize int
	// ProcessShape is the session shape of the whole-process mode:
	// compacted for issue 17's read targets, images for its
	// large-payload resume, or any of Shapes.
	ProcessShape Shape
	// Binary is the sessiontree binary the whole-process mode runs; empty
	// means one built from this checkout.
	Binary string
	// Baseline is a second sessiontree binary the whole-process mode
	// times beside Binary on the same database, each command's runs of
	// the two interleaved, for an A/B comparison in one run (one built
	// from main against one from a branch); empty for none.
	Baseline string
	// PG is the PostgreSQL server of the postgres rows: a URL, or "auto"
	// to start a throwaway cluster (internal/pgtest) for the run; empty
	// means no postgres rows.
	PG string
	// PGDurable starts -pg auto's cluster with the server's own
	// durability (fsync, synchronous_commit and full_page_writes on)
	// instead of without, for the writers target, whose commits wait
	// for their WAL flushes on a real server.
	PGDurable bool
	// PGCommitDelay is the server's commit_delay in µs the postgres
	// rows' connections ask for (commit_delay in the URL; "0" turns it
	// off); empty leaves it to the engine, which asks for 100 µs when
	// the role may set it (pgengine.Open).
	PGCommitDelay string
	// Seed seeds the generators; the same seed makes the same sessions.
	Seed uint64
	// Dir is the working directory for generated files; empty means a
	// fresh temporary directory.
	Dir string
	// Keep keeps the generated files (sessions, databases) after the run.
	Keep bool
	// Out is the directory for results.json, results.md and the charts;
	// empty means none are written.
	Out string
	// CPUProfile, when set, is where a Go CPU profile of the whole run is
	// written (go tool pprof; -focus on store.(*Store).Import, say).
	CPUProfile string
	// Benchstat prints testing.B-format lines on stdout instead of the
	// Markdown table.
	Benchstat bool
	// VsPi times pi's own loader through node, when node and npm exist.
	VsPi bool
	// PiVersions are the pi releases VsPi times, side by side in the same
	// rounds, each as a backend of its own ("pi-1.6.0"); the first is the
	// one the targets compare with. Releases before 1.0 are installed as
	// @mariozechner/pi-coding-agent, later ones as
	// @earendil-works/pi-coding-agent. Default: 1.6.0 alone.
	PiVersions []string
	// PiCache is where pi is installed for VsPi; empty means the user's
	// cache directory.
	PiCache string
	// Quick marks a smoke-test run (recorded in the results).
	Quick bool
	// Command is the command line, recorded in the results.
	Command string
}

// DefaultOptions returns the full default run: sizes 1k, 10k and 100k,
// every shape, five runs.
func DefaultOptions() Options {
	return Options{
		Sizes:            []int{1000, 10_000, 100_000},
		Shapes:           slices.Clone(Shapes),
		Runs:             5,
		MinRunTime:       10 * time.Millisecond,
		LargeMaxSize:     1000,
		BigShapes:        []Shape{ShapeCompacted},
		ImportMaxSize:    10_000,
		CorpusSessions:   10_000,
		CorpusMaxEntries: 12,
		FolderSessions:   []folderSession{{ShapeLinear, 10_000}, {ShapeImages, 2000}},
		FolderLine:       64 << 20,
		FleetWriters:     []int{1, 8, 64},
		ProcessSize:      100_000,
		ProcessShape:     ShapeCompacted,
		Seed:             1,
		Out:              "bench-out",
		PiVersions:       []string{piDefaultVersion},
	}
}

// QuickOptions returns the smoke-test run: 1k-entry sessions, three runs,
// short runs, a 300-session corpus, no import of the large-payload shape.
// It finishes in well under 30 seconds on a quiet machine.
func QuickOptions() Options {
	o := DefaultOptions()
	o.Sizes = []int{1000}
	o.Runs = 3
	o.MinRunTime = 2 * time.Millisecond
	o.CorpusSessions = 300
	o.FolderSessions = []folderSession{{ShapeLinear, 1000}, {ShapeImages, 200}}
	o.FolderLine = 8 << 20
	o.ProcessSize = 1000
	o.Quick = true
	return o
}

// Validate reports what is wrong with the options, all problems at once.
func (o Options) Validate() error {
	var errs []error
	if len(o.Sizes) == 0 {
		errs = append(errs, errors.New("no session sizes"))
	}
	for _, n := range o.Sizes {
		if n < 100 || n > 10_000_000 {
			errs = append(errs, fmt.Errorf("size %d: want 100 to 10,000,000 entries", n))
		}
	}
	if len(o.Shapes) == 0 {
		errs = append(errs, errors.New("no session shapes"))
	}
	for _, s := range append(slices.Clone(o.Shapes), o.BigShapes...) {
		if !slices.Contains(Shapes, s) {
			errs = append(errs, fmt.Errorf("unknown shape %q (want one of %v)", s, Shapes))
		}
	}
	for _, w := range o.Workloads {
		if findWorkload(w) == nil {
			errs = append(errs, fmt.Errorf("unknown workload %q (want one of %s)", w, strings.Join(workloadNames(), ", ")))
		}
	}
	for _, b := range o.Backends {
		if !slices.Contains(backendNames, b) && !(isPiBackend(b) && slices.Contains(o.PiVersions, strings.TrimPrefix(b, backendPi+"-"))) {
			names := slices.Clone(backendNames)
			for _, v := range o.PiVersions {
				if !slices.Contains(names, piBackend(v)) {
					names = append(names, piBackend(v))
				}
			}
			errs = append(errs, fmt.Errorf("unknown backend %q (want one of %s)", b, strings.Join(names, ", ")))
		}
	}
	if o.VsPi && len(o.PiVersions) == 0 {
		errs = append(errs, errors.New("no pi versions to time"))
	}
	for i, v := range o.PiVersions {
		if !piVersionRE.MatchString(v) {
			errs = append(errs, fmt.Errorf("pi version %q: want a release such as %s", v, piDefaultVersion))
		} else if slices.Contains(o.PiVersions[:i], v) {
			errs = append(errs, fmt.Errorf("pi version %s given twice", v))
		}
	}
	if o.Runs < 1 || o.Runs > 1000 {
		errs = append(errs, fmt.Errorf("runs %d: want 1 to 1000", o.Runs))
	}
	if o.MinRunTime < 0 || o.MinRunTime > time.Minute {
		errs = append(errs, fmt.Errorf("min run time %v: want 0 to 1m", o.MinRunTime))
	}
	if o.CorpusSessions < 0 || o.CorpusSessions > 1_000_000 {
		errs = append(errs, fmt.Errorf("corpus sessions %d: want 0 to 1,000,000", o.CorpusSessions))
	}
	if o.FolderLine < 0 || o.FolderLine > 1<<30 {
		errs = append(errs, fmt.Errorf("folder line %d bytes: want 0 to 1 GiB", o.FolderLine))
	}
	if o.CorpusSessions > 0 && o.CorpusMaxEntries < 2 {
		errs = append(errs, fmt.Errorf("corpus max entries %d: want >= 2", o.CorpusMaxEntries))
	}
	for _, g := range o.FleetWriters {
		if g < 1 || g > 4096 {
			errs = append(errs, fmt.Errorf("fleet writers %d: want 1 to 4096", g))
		}
	}
	if o.Process && !slices.Contains(Shapes, o.ProcessShape) && o.ProcessShape != ShapeImages {
		errs = append(errs, fmt.Errorf("unknown process shape %q (want %s or one of %v)", o.ProcessShape, ShapeImages, Shapes))
	}
	if o.PGDurable && o.PG != pgAuto {
		errs = append(errs, errors.New("-pg-durable goes with -pg auto (a server given by URL keeps its own settings)"))
	}
	if o.PGCommitDelay != "" {
		if n, err := strconv.Atoi(o.PGCommitDelay); err != nil || n < 0 || n > 100_000 {
			errs = append(errs, fmt.Errorf("pg commit delay %q: want 0 to 100000 µs", o.PGCommitDelay))
		} else if o.PG == "" {
			errs = append(errs, errors.New("-pg-commit-delay goes with -pg"))
		}
	}
	if o.Baseline != "" && !o.Process {
		errs = append(errs, errors.New("-baseline goes with -process"))
	}
	if o.Process && (o.ProcessSize < 100 || o.ProcessSize > 10_000_000) {
		errs = append(errs, fmt.Errorf("process session size %d: want 100 to 10,000,000 entries", o.ProcessSize))
	}
	if o.ImportMaxSize < 0 {
		errs = append(errs, fmt.Errorf("import max size %d: want >= 0", o.ImportMaxSize))
	}
	if o.LargeMaxSize < 0 {
		errs = append(errs, fmt.Errorf("large max size %d: want >= 0", o.LargeMaxSize))
	}
	return errors.Join(errs...)
}

// wants reports whether backend b is selected. "pi" in Backends selects
// every pi release; "pi-1.6.0" that one.
func (o Options) wants(b string) bool {
	if isPiBackend(b) {
		return o.VsPi && (len(o.Backends) == 0 || slices.Contains(o.Backends, backendPi) || slices.Contains(o.Backends, b))
	}
	return len(o.Backends) == 0 || slices.Contains(o.Backends, b)
}

// wantsWorkload reports whether workload w is selected.
func (o Options) wantsWorkload(w string) bool {
	return len(o.Workloads) == 0 || slices.Contains(o.Workloads, w)
}

// parseOneSize parses value, the flag what, as one session size.
func parseOneSize(what, value string) (int, error) {
	n, err := parseSizes(value)
	if err != nil || len(n) != 1 {
		return 0, fmt.Errorf("%s %q: want one size such as 100k", what, value)
	}
	return n[0], nil
}

// parseFlags reads the command line into options.
func parseFlags(args []string) (Options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	quick := fs.Bool("quick", false, "smoke-test run: 1k-entry sessions, 3 runs (< 30 s)")
	huge := fs.Bool("huge", false, "add 1M-entry sessions, 100k large-payload sessions, imports of every size, a corpus of ~1M entries")
	full := fs.Bool("full", false, "every shape at every size (default: 100k for the compacted shape only, large payloads at 1k)")
	sizes := fs.String("sizes", "", "comma-separated session sizes (1k,10k,100k)")
	shapes := fs.String("shapes", "", "comma-separated shapes (linear,compacted,bushy,large)")
	workloads := fs.String("workloads", "", "comma-separated workloads (default all)")
	backends := fs.String("backends", "", "comma-separated backends (default all)")
	corpusN := fs.Int("corpus", -1, "sessions in the list/search corpus (default 10000, quick 300; 0 skips)")
	corpusMax := fs.Int("corpus-max", 0, "largest corpus session, in entries (default 12, huge 200)")
	folderLine := fs.Int("folder-line-mib", -1, "MiB of the line added to the folder for its last import in a child process, which checks the import's memory follows its longest line (default 64, quick 8; 0 for none)")
	fleet := fs.String("fleet", "", "comma-separated numbers of writers for the fleet workload (default 1,8,64; none skips it)")
	process := fs.Bool("process", false, "whole-process mode: time the sessiontree binary's commands as fresh processes on one session (issue 17; see -process-shape)")
	importMax := fs.String("import-max", "", "largest session size the import workload imports (default 10k; 0 for every size)")
	processSize := fs.String("process-size", "", "session size of -process (default 100k, quick 1k)")
	processShape := fs.String("process-shape", string(ShapeCompacted), "session shape of -process: compacted (issue 17's read targets), images (its large-payload resume: compacted, with inline images; 60k entries make about 600 MiB) or another workload shape")
	binary := fs.String("sessiontree", "", "the sessiontree binary -process runs (default: built from this checkout)")
	baseline := fs.String("baseline", "", "a second sessiontree binary -process times beside the first, their runs interleaved (A/B)")
	runs := fs.Int("runs", 0, "interleaved repetitions per measurement (default 5, quick 3)")
	minRun := fs.Duration("minrun", 0, "minimum duration of one run of a fast operation")
	pg := fs.String("pg", "", "PostgreSQL server URL for postgres rows beside the engine's, or \"auto\" to start a throwaway cluster")
	pgDurable := fs.Bool("pg-durable", false, "with -pg auto: keep fsync, synchronous_commit and full_page_writes on, as a real server does (for the writers target)")
	pgCommitDelay := fs.String("pg-commit-delay", "", "the server's commit_delay in µs the postgres rows' connections ask for, 0 for none (default: the engine's choice, 100 µs when the role may set it)")
	seed := fs.Uint64("seed", 1, "generator seed")
	dir := fs.String("dir", "", "working directory for generated files (default a temp dir)")
	keep := fs.Bool("keep", false, "keep generated sessions and databases")
	out := fs.String("out", "bench-out", "directory for results.json, results.md and SVG charts (\"\" for none)")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile of the whole run to this file")
	benchstat := fs.Bool("benchstat", false, "print testing.B-format lines for benchstat instead of the table")
	vsPi := fs.Bool("vs-pi", false, "also time pi's own loader (needs node and npm): pi "+piDefaultVersion+" unless -pi-versions says otherwise")
	piVersions := fs.String("pi-versions", piDefaultVersion, "comma-separated pi releases to time side by side, the first for the targets ("+piDefaultVersion+","+piLegacyVersion+" adds the last @mariozechner release); implies -vs-pi")
	piCache := fs.String("pi-cache", "", "where to install pi for -vs-pi (default in the user cache dir)")
	if err := fs.Parse(args); err != nil {
		return Options{}, err
	}
	if fs.NArg() > 0 {
		return Options{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o := DefaultOptions()
	if *quick {
		o = QuickOptions()
	}
	if *huge {
		o.Sizes = append(o.Sizes, 1_000_000)
		o.LargeMaxSize = 100_000
		o.ImportMaxSize = 0
		o.CorpusMaxEntries = 200
		o.BigShapes = nil
	}
	if *full {
		o.FolderSessions = append(o.FolderSessions, folderSession{ShapeImages, 13_000})
		o.LargeMaxSize = max(o.LargeMaxSize, 10_000)
		o.BigShapes = nil
	}
	var err error
	if *sizes != "" {
		if o.Sizes, err = parseSizes(*sizes); err != nil {
			return Options{}, err
		}
	}
	if *shapes != "" {
		o.Shapes = nil
		for _, s := range splitList(*shapes) {
			o.Shapes = append(o.Shapes, Shape(s))
		}
	}
	o.Workloads = splitList(*workloads)
	o.Backends = splitList(*backends)
	if *corpusN >= 0 {
		o.CorpusSessions = *corpusN
	}
	if *corpusMax != 0 {
		o.CorpusMaxEntries = *corpusMax
	}
	if *folderLine >= 0 {
		o.FolderLine = *folderLine << 20
	}
	switch *fleet {
	case "":
	case "none":
		o.FleetWriters = nil
	default:
		o.FleetWriters = nil
		for _, f := range splitList(*fleet) {
			g, err := strconv.Atoi(f)
			if err != nil {
				return Options{}, fmt.Errorf("fleet writers %q: %w", f, err)
			}
			o.FleetWriters = append(o.FleetWriters, g)
		}
	}
	o.Process, o.Binary, o.Baseline, o.ProcessShape = *process, *binary, *baseline, Shape(*processShape)
	if *processSize != "" {
		if o.ProcessSize, err = parseOneSize("process size", *processSize); err != nil {
			return Options{}, err
		}
	}
	switch *importMax {
	case "":
	case "0":
		o.ImportMaxSize = 0
	default:
		if o.ImportMaxSize, err = parseOneSize("import max size", *importMax); err != nil {
			return Options{}, err
		}
	}
	if *runs != 0 {
		o.Runs = *runs
	}
	if *minRun != 0 {
		o.MinRunTime = *minRun
	}
	o.Seed, o.Dir, o.Keep, o.Out, o.PG = *seed, *dir, *keep, *out, *pg
	o.PGDurable, o.PGCommitDelay = *pgDurable, *pgCommitDelay
	o.Benchstat, o.VsPi, o.PiCache, o.CPUProfile = *benchstat, *vsPi, *piCache, *cpuProfile
	o.PiVersions = splitList(*piVersions)
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "pi-versions" {
			o.VsPi = true
		}
	})
	return o, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parseSizes reads "1k,10k,100k,1M" (plain numbers work too).
func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		mult := 1
		switch {
		case strings.HasSuffix(f, "k"), strings.HasSuffix(f, "K"):
			mult, f = 1000, f[:len(f)-1]
		case strings.HasSuffix(f, "M"), strings.HasSuffix(f, "m"):
			mult, f = 1_000_000, f[:len(f)-1]
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("size %q: %w", f, err)
		}
		out = append(out, n*mult)
	}
	return out, nil
}
