package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"unicode"
)

// Report is everything a run measured; results.json holds it.
type Report struct {
	// Date is when the run started, UTC.
	Date string `json:"date"`
	// Command is the command line that made the run.
	Command string `json:"command"`
	// GoVersion, GOOS, GOARCH, CPUs and CPU describe the machine.
	GoVersion string `json:"goVersion"`
	GOOS      string `json:"goos"`
	GOARCH    string `json:"goarch"`
	CPUs      int    `json:"cpus"`
	CPU       string `json:"cpu"`
	// Node is node's version when pi was measured.
	Node string `json:"node,omitempty"`
	// Pi lists the pi releases measured, in Options.PiVersions' order.
	Pi []PiRelease `json:"pi,omitempty"`
	// Sizes, Shapes, Runs, Seed and Quick are the run's options.
	Sizes  []int   `json:"sizes"`
	Shapes []Shape `json:"shapes"`
	Runs   int     `json:"runs"`
	Seed   uint64  `json:"seed"`
	Quick  bool    `json:"quick"`
	// Seconds is how long the run took.
	Seconds float64 `json:"seconds"`
	// PGCommits is how the postgres rows' commits were set (fsync,
	// synchronous_commit, commit_delay as the engine's connections had
	// them), for the writers target's line; empty without -pg.
	PGCommits string `json:"pgCommits,omitempty"`
	// Notes say what was left out and why.
	Notes []string `json:"notes,omitempty"`
	// Datasets describe the generated sessions.
	Datasets []DatasetInfo `json:"datasets"`
	// Results are every measurement, skipped ones included.
	Results []*Result `json:"results"`
	// FolderProcess are the folder imported by child processes, for
	// issue 17's "both cores" and memory targets (folderprocess.go).
	FolderProcess []ProcessImport `json:"folderProcess,omitempty"`
	// Targets are the issues' speed targets checked against Results.
	Targets []Target `json:"targets"`
}

// DatasetInfo describes one generated session.
type DatasetInfo struct {
	// Name is shape-size, e.g. "compacted-100k".
	Name string `json:"name"`
	// Entries and FileBytes are the session's size.
	Entries   int   `json:"entries"`
	FileBytes int64 `json:"fileBytes"`
	// ActivePath is the active path's length at the leaf, ContextMessages
	// the context's (0 for the corpus).
	ActivePath      int `json:"activePath"`
	ContextMessages int `json:"contextMessages"`
}

// PiRelease is a pi release whose loader was measured.
type PiRelease struct {
	// Version and Package are the release and the npm package it came
	// from; Backend is its rows' name ("pi-1.6.0").
	Version string `json:"version"`
	Package string `json:"package"`
	Backend string `json:"backend"`
}

// piBackend is the pi release the targets compare with: the first one
// measured, else the default release (then not in the results).
func (rep *Report) piBackend() string {
	if len(rep.Pi) > 0 {
		return rep.Pi[0].Backend
	}
	return piBackend(piDefaultVersion)
}

// backends lists the backends in table order, pi's slot holding every pi
// release measured.
func (rep *Report) backends() []string {
	var out []string
	for _, b := range backendNames {
		if b != backendPi {
			out = append(out, b)
			continue
		}
		for _, p := range rep.Pi {
			out = append(out, p.Backend)
		}
	}
	return out
}

// cpuModel reads the CPU's model name on Linux.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// find returns the result for one cell, nil when absent or skipped.
func (rep *Report) find(workload, shape string, size int, backend string) *Result {
	for _, r := range rep.Results {
		if r.Workload == workload && r.Shape == shape && r.Size == size && r.Backend == backend && r.Skipped == "" && r.MedianNs > 0 {
			return r
		}
	}
	return nil
}

// ---- Markdown ----

// writeMarkdown writes the table: the targets first, then one section per
// workload with a row per shape, size and backend.
func (rep *Report) writeMarkdown(w io.Writer) {
	fmt.Fprintf(w, "## sessiontree benchmarks\n\n")
	fmt.Fprintf(w, "%s · `%s` · %s %s/%s · %d CPUs (%s)", rep.Date, rep.Command, rep.GoVersion, rep.GOOS, rep.GOARCH, rep.CPUs, rep.CPU)
	if len(rep.Pi) > 0 {
		var pis []string
		for _, p := range rep.Pi {
			pis = append(pis, fmt.Sprintf("pi %s (`%s`)", p.Version, p.Package))
		}
		fmt.Fprintf(w, " · %s on node %s", strings.Join(pis, ", "), rep.Node)
	}
	fmt.Fprintf(w, " · %d runs each, medians · %.0f s\n\n", rep.Runs, rep.Seconds)
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
	if len(rep.Notes) > 0 {
		fmt.Fprintln(w)
	}

	fmt.Fprintf(w, "### Targets\n\n| target | measured | verdict |\n|---|---|---|\n")
	for _, t := range rep.Targets {
		fmt.Fprintf(w, "| %s | %s | %s |\n", t.Target, t.Measured, t.Verdict)
	}
	fmt.Fprintln(w)

	fmt.Fprintf(w, "### Sessions\n\n| session | entries | file | active path | context messages |\n|---|--:|--:|--:|--:|\n")
	for _, d := range rep.Datasets {
		if d.ActivePath == 0 {
			fmt.Fprintf(w, "| %s | %d | %s | — | — |\n", d.Name, d.Entries, fmtBytes(d.FileBytes))
			continue
		}
		fmt.Fprintf(w, "| %s | %d | %s | %d | %d |\n", d.Name, d.Entries, fmtBytes(d.FileBytes), d.ActivePath, d.ContextMessages)
	}
	fmt.Fprintln(w)

	fmt.Fprintln(w, "Times are per operation: median of the runs, then the fastest and slowest run. "+
		"×floor is the time over bare SQLite's doing the same minimum; ×file over bare file I/O of the same bytes; "+
		"×engine is the time over the SQLite engine's, or the store's where the engine has no row (so the jsonl row's ×engine is how many times faster the engine is). "+
		"Peak heap and RSS are one operation's growth beyond what the process already held.")
	fmt.Fprintln(w)
	for _, wl := range workloads {
		rows := rep.workloadResults(wl.name)
		fmt.Fprintf(w, "### %s\n\n%s\n\n", wl.name, wl.doc)
		if len(rows) == 0 {
			fmt.Fprintf(w, "Not measured in this run.\n\n")
			continue
		}
		fmt.Fprintf(w, "| shape | size | backend | median | min–max | ×floor | ×file | ×engine | rows | alloc/op | peak heap | peak RSS | note |\n")
		fmt.Fprintf(w, "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
		for _, r := range rows {
			if r.Skipped != "" {
				fmt.Fprintf(w, "| %s | %s | %s | — | — | | | | | | | | %s |\n", r.Shape, sizeLabel(r.Size), r.Backend, mdEscape(r.Skipped))
				continue
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s–%s | %s | %s | %s | %d | %s | %s | %s | %s |\n",
				r.Shape, sizeLabel(r.Size), r.Backend,
				fmtDuration(r.MedianNs), fmtDuration(r.MinNs), fmtDuration(r.MaxNs),
				rep.ratio(r, backendFloor), rep.ratio(r, backendFileFloor), rep.ratio(r, backendEngine),
				r.Rows, fmtAlloc(r.AllocBytes), fmtMem(r.PeakHeap), fmtMem(r.PeakRSS), mdEscape(rep.rowNote(r)))
		}
		fmt.Fprintln(w)
	}
}

// workloadResults returns a workload's results in table order.
func (rep *Report) workloadResults(workload string) []*Result {
	var out []*Result
	for _, r := range rep.Results {
		if r.Workload == workload {
			out = append(out, r)
		}
	}
	shapeIdx := func(s string) int {
		return slices.Index(append(Shapes[:len(Shapes):len(Shapes)], ShapeCorpus), Shape(s))
	}
	slices.SortStableFunc(out, func(a, b *Result) int {
		if d := shapeIdx(a.Shape) - shapeIdx(b.Shape); d != 0 {
			return d
		}
		if d := a.Size - b.Size; d != 0 {
			return d
		}
		order := rep.backends()
		return slices.Index(order, a.Backend) - slices.Index(order, b.Backend)
	})
	return out
}

// ratio is r's median over the median of backend's on the same cell.
func (rep *Report) ratio(r *Result, backend string) string {
	if r.Backend == backend || r.Backend == backendFloor || r.Backend == backendFileFloor {
		return "" // the floors are the references, not measured against
	}
	other := rep.find(r.Workload, r.Shape, r.Size, backend)
	if other == nil && backend == backendEngine && r.Backend != backendStore {
		other = rep.find(r.Workload, r.Shape, r.Size, backendStore) // the corpus workloads
	}
	if other == nil {
		return ""
	}
	return fmtRatio(r.MedianNs / other.MedianNs)
}

// rowNote adds throughput to a row's note where it means something.
func (rep *Report) rowNote(r *Result) string {
	var parts []string
	if r.Note != "" {
		parts = append(parts, r.Note)
	}
	switch r.Workload {
	case "import", "store-import", "store-index":
		parts = append(parts, fmt.Sprintf("%.0f entries/s, %.0f MB/s", float64(r.Rows)/(r.MedianNs/1e9), float64(r.Bytes)/1e6/(r.MedianNs/1e9)))
	case "append", "append-sync":
		parts = append(parts, fmt.Sprintf("%.0f appends/s", 1e9/r.MedianNs))
	}
	return strings.Join(parts, "; ")
}

func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// ---- benchstat ----

// writeBenchstat prints one testing.B line per run, so benchstat computes
// medians and confidence intervals and compares runs.
func (rep *Report) writeBenchstat(w io.Writer) {
	fmt.Fprintf(w, "goos: %s\ngoarch: %s\npkg: github.com/sessiontree/sessiontree/bench\ncpu: %s\n", rep.GOOS, rep.GOARCH, rep.CPU)
	for _, wl := range workloads {
		for _, r := range rep.workloadResults(wl.name) {
			if r.Skipped != "" {
				continue
			}
			name := fmt.Sprintf("Benchmark%s/shape=%s/size=%s/backend=%s-%d", camel(r.Workload), r.Shape, sizeLabel(r.Size), r.Backend, rep.CPUs)
			for i, ns := range r.RunsNs {
				fmt.Fprintf(w, "%s\t%8d\t%12.1f ns/op", name, r.Iters, ns)
				if r.AllocBytes >= 0 && i < len(r.RunsAllocBytes) {
					fmt.Fprintf(w, "\t%10.0f B/op\t%8.0f allocs/op", r.RunsAllocBytes[i], r.RunsAllocs[i])
				}
				fmt.Fprintln(w)
			}
		}
	}
}

// camel turns "active-path" into "ActivePath".
func camel(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		if r == '-' || r == '_' {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ---- files ----

// writeFiles writes results.json, results.md and the charts into dir.
func (rep *Report) writeFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	var md bytes.Buffer
	rep.writeMarkdown(&md)
	if err := os.WriteFile(filepath.Join(dir, "results.md"), md.Bytes(), 0o644); err != nil {
		return err
	}
	var bs bytes.Buffer
	bw := bufio.NewWriter(&bs)
	rep.writeBenchstat(bw)
	bw.Flush()
	if err := os.WriteFile(filepath.Join(dir, "results.benchstat.txt"), bs.Bytes(), 0o644); err != nil {
		return err
	}
	return rep.writeCharts(dir)
}

// ---- formatting ----

func fmtDuration(ns float64) string {
	switch {
	case ns <= 0:
		return "—"
	case ns < 1e3:
		return fmt.Sprintf("%.0fns", ns)
	case ns < 1e6:
		return trim3(ns/1e3) + "µs"
	case ns < 1e9:
		return trim3(ns/1e6) + "ms"
	}
	return trim3(ns/1e9) + "s"
}

// trim3 prints three significant digits.
func trim3(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

func fmtRatio(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f×", x)
	case x >= 10:
		return fmt.Sprintf("%.1f×", x)
	}
	return fmt.Sprintf("%.2f×", x)
}

func fmtBytes(n int64) string {
	switch {
	case n < 0:
		return ""
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
}

func fmtMem(n int64) string {
	if n < 0 {
		return "—"
	}
	return fmtBytes(n)
}

func fmtAlloc(n float64) string {
	if n < 0 {
		return "—"
	}
	return fmtBytes(int64(n))
}
