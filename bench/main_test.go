package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree/storetest"
)

// TestQuick runs the program's main logic in quick mode, the smoke test
// CI relies on: every workload runs on every backend without error, and
// the table, the JSON and the charts come out. Under -short (and under
// the race detector, which makes everything ~10× slower) the sessions are
// smaller still, and the race run leaves out the large-payload shape and
// the imports, which dominate it (the plain run covers them).
func TestQuick(t *testing.T) {
	opts := QuickOptions()
	opts.Dir = t.TempDir()
	opts.Out = t.TempDir()
	opts.Command = "go test ./bench -run TestQuick"
	if testing.Short() || storetest.RaceEnabled {
		opts.Sizes = []int{100}
		opts.CorpusSessions = 20
		opts.Runs = 1
		opts.MinRunTime = 0
		opts.FleetWriters = []int{1, 4}
		opts.FolderSessions = []folderSession{{ShapeLinear, 200}, {ShapeImages, 40}}
		opts.FolderLine = 1 << 20
	}
	if storetest.RaceEnabled {
		opts.Runs = 2
		opts.Shapes = []Shape{ShapeLinear, ShapeCompacted, ShapeBushy}
		// The imports and the search index's catch-up take seconds under
		// the race detector; the plain run covers them.
		for _, w := range workloads {
			switch w.name {
			case "import", "store-import", "store-index", "folder-import", "folder-index":
			default:
				opts.Workloads = append(opts.Workloads, w.name)
			}
		}
	}
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, opts, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	if testing.Verbose() {
		t.Log("progress:\n" + stderr.String())
	}

	var rep Report
	b, err := os.ReadFile(filepath.Join(opts.Out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	measured := map[string]bool{}
	for _, r := range rep.Results {
		if r.Skipped != "" {
			t.Errorf("%s %s-%d %s: %s", r.Workload, r.Shape, r.Size, r.Backend, r.Skipped)
			continue
		}
		if r.MedianNs <= 0 || len(r.RunsNs) == 0 || len(r.RunsNs) > opts.Runs {
			t.Errorf("%s %s-%d %s: median %v over %d runs; want > 0 over 1 to %d", r.Workload, r.Shape, r.Size, r.Backend, r.MedianNs, len(r.RunsNs), opts.Runs)
		}
		measured[r.Workload+"/"+r.Backend] = true
	}
	for _, w := range workloads {
		if !opts.wantsWorkload(w.name) {
			continue
		}
		bs := []string{backendFloor, backendEngine, backendJSONL}
		if w.corpus {
			bs = []string{backendFloor, backendStore, backendFileFloor}
			if w.noFileRows {
				bs = bs[:2]
			}
			if w.noFloorRows {
				bs = bs[1:]
			}
		}
		if w.name == "fleet" {
			bs = []string{backendFloor, backendEngine}
		}
		if w.name == "writers" {
			bs = []string{backendEngine}
		}
		if w.name == "push" {
			bs = []string{backendStore}
		}
		for _, b := range bs {
			if !measured[w.name+"/"+b] {
				t.Errorf("workload %s: no result for %s", w.name, b)
			}
		}
		if _, err := os.Stat(filepath.Join(opts.Out, w.name+".svg")); err != nil {
			t.Errorf("chart: %v", err)
		}
	}
	if opts.wantsWorkload("folder-import") {
		checkFolderProcess(t, &rep, opts)
	}
	out := stdout.String()
	for _, want := range []string{"### Targets", "### resume", "| compacted |", "engine-cold"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	bs, err := os.ReadFile(filepath.Join(opts.Out, "results.benchstat.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(bs), "BenchmarkResume/shape=compacted/") || !strings.Contains(string(bs), " ns/op") {
		t.Errorf("benchstat output lacks resume lines:\n%.500s", bs)
	}
	if entries, _ := os.ReadDir(opts.Dir); len(entries) != 0 {
		t.Errorf("generated files left in %s without -keep: %d entries", opts.Dir, len(entries))
	}
}

// checkFolderProcess checks that the folder was imported by child
// processes, with and without the added line, and that the targets they
// decide have verdicts from them.
func checkFolderProcess(t *testing.T, rep *Report, opts Options) {
	t.Helper()
	if n := len(rep.FolderProcess); n != 2 || len(rep.FolderProcess[0].Runs) != processImports || len(rep.FolderProcess[1].Runs) != 1 {
		t.Fatalf("folder imported in child processes: %+v; want %d runs, then one with a line", rep.FolderProcess, processImports)
	}
	if l := rep.FolderProcess[1].LongestLine; l > int64(opts.FolderLine) || l < int64(opts.FolderLine)-3 {
		t.Errorf("longest line with the line added: %d bytes; want %d", l, opts.FolderLine)
	}
	for _, pi := range rep.FolderProcess {
		for _, r := range pi.Runs {
			if r.Ns <= 0 || r.CPUNs <= 0 || r.PeakRSS < pi.LongestLine || r.PeakRSS < r.BaseRSS {
				t.Errorf("%s: %+v; want a time, CPU time and a peak RSS above the longest line and the base", pi.Folder, r)
			}
		}
	}
	found := 0
	for _, tg := range rep.Targets {
		switch {
		case strings.Contains(tg.Target, "using both cores"):
			found++
		case strings.Contains(tg.Target, "memory bounded by its longest line"):
			found++
			if tg.Verdict == verdictNotRun {
				t.Errorf("memory target not measured: %s", tg.Measured)
			}
		}
	}
	if found != 2 {
		t.Errorf("%d of the folder's whole-process targets in the report; want 2", found)
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string // "" for valid
	}{
		{"default", func(*Options) {}, ""},
		{"quick", func(o *Options) { *o = QuickOptions() }, ""},
		{"no sizes", func(o *Options) { o.Sizes = nil }, "no session sizes"},
		{"tiny size", func(o *Options) { o.Sizes = []int{10} }, "size 10"},
		{"bad shape", func(o *Options) { o.Shapes = []Shape{"round"} }, `unknown shape "round"`},
		{"bad workload", func(o *Options) { o.Workloads = []string{"dance"} }, `unknown workload "dance"`},
		{"bad backend", func(o *Options) { o.Backends = []string{"redis"} }, `unknown backend "redis"`},
		{"zero runs", func(o *Options) { o.Runs = 0 }, "runs 0"},
		{"no fleet writers", func(o *Options) { o.FleetWriters = []int{8, 0} }, "fleet writers 0"},
		{"tiny process session", func(o *Options) { o.Process, o.ProcessSize = true, 10 }, "process session size 10"},
		{"negative folder line", func(o *Options) { o.FolderLine = -1 }, "folder line -1"},
		{"durable without auto", func(o *Options) { o.PG, o.PGDurable = "postgres://db/x", true }, "-pg-durable goes with -pg auto"},
		{"commit delay without pg", func(o *Options) { o.PGCommitDelay = "100" }, "-pg-commit-delay goes with -pg"},
		{"bad commit delay", func(o *Options) { o.PG, o.PGCommitDelay = pgAuto, "soon" }, `pg commit delay "soon"`},
		{"durable, no delay", func(o *Options) { o.PG, o.PGDurable, o.PGCommitDelay = pgAuto, true, "0" }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			tc.edit(&o)
			err := o.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate() = %v; want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate() = %v; want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags([]string{"-quick", "-sizes", "1k,10k", "-shapes", "linear", "-runs", "7", "-keep"})
	if err != nil {
		t.Fatal(err)
	}
	if got := o.Sizes; len(got) != 2 || got[0] != 1000 || got[1] != 10_000 {
		t.Errorf("Sizes = %v; want [1000 10000]", got)
	}
	if len(o.Shapes) != 1 || o.Shapes[0] != ShapeLinear || o.Runs != 7 || !o.Keep || !o.Quick {
		t.Errorf("parseFlags = %+v", o)
	}
	if o, err := parseFlags([]string{"-full"}); err != nil || o.BigShapes != nil || o.LargeMaxSize < 10_000 {
		t.Errorf("parseFlags(-full) = BigShapes %v, LargeMaxSize %d, %v; want every shape, large at 10k", o.BigShapes, o.LargeMaxSize, err)
	}
	if o := DefaultOptions(); len(o.BigShapes) != 1 || o.BigShapes[0] != ShapeCompacted {
		t.Errorf("DefaultOptions().BigShapes = %v; want [compacted]", o.BigShapes)
	}
	if o, err := parseFlags([]string{"-fleet", "2,32", "-process", "-process-size", "10k"}); err != nil ||
		len(o.FleetWriters) != 2 || o.FleetWriters[1] != 32 || !o.Process || o.ProcessSize != 10_000 {
		t.Errorf("parseFlags(-fleet 2,32 -process -process-size 10k) = FleetWriters %v, Process %v, ProcessSize %d, %v",
			o.FleetWriters, o.Process, o.ProcessSize, err)
	}
	if o, err := parseFlags([]string{"-pg", "auto"}); err != nil || o.PG != pgAuto {
		t.Errorf("parseFlags(-pg auto) = PG %q, %v; want auto", o.PG, err)
	}
	if o, err := parseFlags([]string{"-pg", "auto", "-pg-durable", "-pg-commit-delay", "200"}); err != nil || !o.PGDurable || o.PGCommitDelay != "200" {
		t.Errorf("parseFlags(-pg auto -pg-durable -pg-commit-delay 200) = PGDurable %v, PGCommitDelay %q, %v; want true, 200", o.PGDurable, o.PGCommitDelay, err)
	}
	if o, err := parseFlags([]string{"-fleet", "none"}); err != nil || o.FleetWriters != nil {
		t.Errorf("parseFlags(-fleet none) = FleetWriters %v, %v; want none", o.FleetWriters, err)
	}
	if o, err := parseFlags([]string{"-folder-line-mib", "0"}); err != nil || o.FolderLine != 0 {
		t.Errorf("parseFlags(-folder-line-mib 0) = FolderLine %d, %v; want 0", o.FolderLine, err)
	}
	if o, err := parseFlags([]string{"-quick", "-folder-line-mib", "2"}); err != nil || o.FolderLine != 2<<20 {
		t.Errorf("parseFlags(-quick -folder-line-mib 2) = FolderLine %d, %v; want 2 MiB", o.FolderLine, err)
	}
	if _, err := parseFlags([]string{"-sizes", "many"}); err == nil {
		t.Error("parseFlags(-sizes many) = nil error; want one")
	}
}

// TestGenerateReproducible checks that a seed makes the same session, byte
// for byte, and another seed a different one.
func TestGenerateReproducible(t *testing.T) {
	shapes := Shapes
	if storetest.RaceEnabled {
		shapes = shapes[:len(shapes)-1] // the large shape's megabytes are slow under -race
	}
	for _, shape := range shapes {
		a, err := generate(7, shape, 300, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		b, err := generate(7, shape, 300, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		c, err := generate(8, shape, 300, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		fa, _ := os.ReadFile(a.File)
		fb, _ := os.ReadFile(b.File)
		fc, _ := os.ReadFile(c.File)
		if !bytes.Equal(fa, fb) {
			t.Errorf("%s: same seed, different files", shape)
		}
		if bytes.Equal(fa, fc) {
			t.Errorf("%s: different seeds, same file", shape)
		}
		if len(a.Entries) != 300 {
			t.Errorf("%s: %d entries; want 300", shape, len(a.Entries))
		}
	}
}
