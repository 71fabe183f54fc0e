package main

// The folder imported as a whole process: issue 17's "using both cores"
// and "memory bounded by the largest line plus a constant", measured by
// import children (importchild.go) after the folder-import workload, on
// the same folder, and once more on the folder with a giant line added.

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ProcessImport is a folder imported by child processes of the bench
// binary, each into a fresh store (see importchild.go).
type ProcessImport struct {
	// Folder says what was imported.
	Folder string `json:"folder"`
	// Bytes is the folder's size, LongestLine its longest line's, in
	// bytes.
	Bytes       int64 `json:"bytes"`
	LongestLine int64 `json:"longestLine"`
	// Load is the 1-minute load average before the imports, -1 unknown.
	Load float64 `json:"loadAverage"`
	// Runs are what each child measured.
	Runs []importReply `json:"runs"`
}

const (
	// processImports is how many children import the folder: the
	// median of their cores is the "both cores" figure.
	processImports = 3
	// bothCores is the "both cores" rule: the import keeps more than
	// this many cores busy on average (CPU time over wall time).
	bothCores = 1.5
	// importMemConst is the constant of the memory rule: peak RSS at
	// most the longest line plus this (see bench/README.md, Targets).
	importMemConst = 128 << 20
)

// processFolder imports the folder in child processes, processImports
// times, then once with a line of Options.FolderLine bytes added (none
// when 0), into Report.FolderProcess.
func (r *runner) processFolder(ctx context.Context) error {
	if r.folder == nil || !r.opts.wantsWorkload("folder-import") {
		return nil
	}
	dir := filepath.Join(r.dir, "folder-process")
	defer os.RemoveAll(dir)
	if err := r.importProcess(ctx, r.folder, "the folder", processImports, dir); err != nil {
		return err
	}
	if r.opts.FolderLine <= 0 {
		return nil
	}
	g, err := r.folder.withLine(r.opts.Seed, r.opts.FolderLine, filepath.Join(dir, "line"))
	if err != nil {
		return err
	}
	return r.importProcess(ctx, g, "the folder and a line of "+fmtBytes(int64(r.opts.FolderLine)), 1, dir)
}

// importProcess imports f runs times, each in a child process into a
// fresh store in dir, and keeps what the children measured.
func (r *runner) importProcess(ctx context.Context, f *folder, what string, runs int, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	pi := ProcessImport{Folder: what, Bytes: f.bytes, LongestLine: f.longest, Load: loadAverage()}
	db := filepath.Join(dir, "import.db")
	for range runs {
		rep, err := importInChild(ctx, db, f.files)
		if err == nil && rep.Entries != f.entries {
			err = fmt.Errorf("import child: %d entries, want %d", rep.Entries, f.entries)
		}
		if err := removeDB(db); err != nil {
			return err
		}
		if err != nil {
			return err
		}
		r.progress("  folder-import in a child process, %s (%s, longest line %s): %s, %.2f cores, peak RSS %s",
			what, fmtBytes(f.bytes), fmtBytes(f.longest), fmtDuration(float64(rep.Ns)), rep.cores(), fmtBytes(rep.PeakRSS))
		pi.Runs = append(pi.Runs, rep)
	}
	r.processImports = append(r.processImports, pi)
	return nil
}

// loadAverage is the system's 1-minute load average, -1 when unknown.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	x, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return x
}

// medianRun is the run of median cores.
func (pi ProcessImport) medianRun() importReply {
	runs := slices.Clone(pi.Runs)
	slices.SortFunc(runs, func(a, b importReply) int { return cmp.Compare(a.cores(), b.cores()) })
	return runs[len(runs)/2]
}

// peakRSS is the highest peak RSS of the runs.
func (pi ProcessImport) peakRSS() int64 {
	var m int64
	for _, r := range pi.Runs {
		m = max(m, r.PeakRSS)
	}
	return m
}

// coresTarget checks "using both cores" on the folder's whole-process
// imports: met when the median run kept more than bothCores cores busy;
// missed when even with the time its threads waited, runnable, for a CPU
// (other processes holding the cores) fewer than that many were busy or
// runnable on average; not measured in between, where the machine's load
// decided.
func (rep *Report) coresTarget(add func(target, measured, v string)) {
	const target = "store imports a realistic pi folder using both cores (> 1.5 cores busy on average, whole process)"
	if len(rep.FolderProcess) == 0 {
		add(target, "folder-import's process pass not run", verdictNotRun)
		return
	}
	pi := rep.FolderProcess[0]
	m := pi.medianRun()
	cores := m.cores()
	wait := -1.0
	if m.WaitNs >= 0 {
		wait = float64(m.WaitNs) / float64(m.Ns)
	}
	measured := fmt.Sprintf("%.2f cores: CPU %s over %s, the median of %d imports in a child process", cores, fmtDuration(float64(m.CPUNs)), fmtDuration(float64(m.Ns)), len(pi.Runs))
	if wait >= 0 {
		measured += fmt.Sprintf("; its threads waited, runnable, for a CPU %.2f cores' worth", wait)
	}
	if pi.Load >= 0 {
		measured += fmt.Sprintf(" (load average %.1f on %d CPUs)", pi.Load, rep.CPUs)
	}
	v := verdictMissed
	switch {
	case cores > bothCores:
		v = verdictMet
	case wait < 0:
		v = verdictNotRun
		measured += "; the kernel does not say how long its threads waited for a CPU, so this run cannot tell"
	case cores+wait > bothCores:
		v = verdictNotRun
		measured += ": other processes held the cores, so this run cannot tell"
	}
	add(target, measured, v)
}

// memoryTarget checks "memory bounded by the largest line plus a
// constant" on every whole-process import: the peak RSS of each at most
// its folder's longest line plus importMemConst.
func (rep *Report) memoryTarget(add func(target, measured, v string)) {
	target := fmt.Sprintf("store imports a realistic pi folder in memory bounded by its longest line plus a constant (peak RSS ≤ longest line + %s, whole process)", fmtBytes(importMemConst))
	if len(rep.FolderProcess) == 0 {
		add(target, "folder-import's process pass not run", verdictNotRun)
		return
	}
	ok := true
	var parts []string
	for _, pi := range rep.FolderProcess {
		peak, bound := pi.peakRSS(), pi.LongestLine+importMemConst
		ok = ok && peak <= bound
		rel := "≤"
		if peak > bound {
			rel = ">"
		}
		parts = append(parts, fmt.Sprintf("%s (%s, longest line %s): peak RSS %s %s %s", pi.Folder, fmtBytes(pi.Bytes), fmtBytes(pi.LongestLine), fmtBytes(peak), rel, fmtBytes(bound)))
	}
	if n := len(rep.FolderProcess); n > 1 {
		a, b := rep.FolderProcess[0], rep.FolderProcess[n-1]
		if dl := b.LongestLine - a.LongestLine; dl > 0 {
			parts = append(parts, fmt.Sprintf("%.1f bytes of RSS per byte of line", float64(b.peakRSS()-a.peakRSS())/float64(dl)))
		}
	}
	add(target, strings.Join(parts, "; "), verdict(ok))
}
