package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree/storetest"
)

// TestProcessTargets checks the verdicts of "using both cores" and of the
// memory bound on made-up imports.
func TestProcessTargets(t *testing.T) {
	run := func(ns, cpu, wait, peak int64) importReply {
		return importReply{Ns: ns, CPUNs: cpu, WaitNs: wait, PeakRSS: peak}
	}
	folder := func(longest int64, runs ...importReply) ProcessImport {
		return ProcessImport{Folder: "the folder", Bytes: 30 << 20, LongestLine: longest, Load: 1, Runs: runs}
	}
	for _, tc := range []struct {
		name          string
		imports       []ProcessImport
		cores, memory string // verdicts
		measured      string // in the memory target's figures
	}{
		{"none", nil, verdictNotRun, verdictNotRun, "not run"},
		{"both cores, bounded", []ProcessImport{folder(1<<20, run(100, 170, 0, 80<<20), run(100, 160, 10, 81<<20), run(100, 190, 0, 79<<20))},
			verdictMet, verdictMet, "peak RSS 81.0 MiB ≤ 129.0 MiB"},
		{"one core on a quiet machine", []ProcessImport{folder(1<<20, run(100, 100, 10, 80<<20))}, verdictMissed, verdictMet, ""},
		{"a busy machine", []ProcessImport{folder(1<<20, run(100, 50, 150, 80<<20))}, verdictNotRun, verdictMet, ""},
		{"no run-queue figures", []ProcessImport{folder(1<<20, run(100, 100, -1, 80<<20))}, verdictNotRun, verdictMet, ""},
		{"three times the line", []ProcessImport{folder(1<<20, run(100, 170, 0, 80<<20)), folder(65<<20, run(100, 170, 0, 272<<20))},
			verdictMet, verdictMissed, "3.0 bytes of RSS per byte of line"},
		{"the line and a constant", []ProcessImport{folder(1<<20, run(100, 170, 0, 80<<20)), folder(65<<20, run(100, 170, 0, 150<<20))},
			verdictMet, verdictMet, "1.1 bytes of RSS per byte of line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := &Report{CPUs: 2, FolderProcess: tc.imports}
			var got []Target
			add := func(target, measured, v string) { got = append(got, Target{target, measured, v}) }
			rep.coresTarget(add)
			rep.memoryTarget(add)
			if len(got) != 2 || got[0].Verdict != tc.cores || got[1].Verdict != tc.memory {
				t.Fatalf("verdicts %+v; want %s for the cores, %s for the memory", got, tc.cores, tc.memory)
			}
			if !strings.Contains(got[1].Measured, tc.measured) {
				t.Errorf("memory measured %q; want it to contain %q", got[1].Measured, tc.measured)
			}
		})
	}
}

// TestGiantSession checks that the line withLine adds is as long as asked
// and becomes the folder's longest, and that the store imports it.
func TestGiantSession(t *testing.T) {
	dir := t.TempDir()
	base := &folder{}
	const size = 3<<20 + 5
	f, err := base.withLine(1, size, dir)
	if err != nil {
		t.Fatal(err)
	}
	if f.longest > size || f.longest < size-3 {
		t.Errorf("longest line %d bytes; want %d, within 3", f.longest, size)
	}
	if f.entries != giantSessionEntries+1 || len(f.files) != 1 {
		t.Errorf("%d entries in %d files; want %d in 1", f.entries, len(f.files), giantSessionEntries+1)
	}
	rep, err := importInChild(context.Background(), filepath.Join(dir, "g.db"), f.files)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Entries != f.entries || rep.PeakRSS < size || rep.Ns <= 0 || rep.CPUNs <= 0 {
		t.Errorf("import child: %+v; want %d entries, a peak RSS of at least the line, a time and CPU time", rep, f.entries)
	}
}

// TestImportMemoryFollowsLongestLine checks that the bound of the memory
// target is a bound: the peak RSS of a whole-process import grows with
// the folder's longest line, by less than 3.5 bytes per byte of it, and
// not with the number of files: a folder four times as large, with the
// same longest line and files of the same sizes, takes no more than 16
// MiB more. Each folder has a session larger than a chunk (8 MB) and the
// same line of 4 MiB, so the constant parts of the import (a chunk's
// entries, a group of small files, the read-ahead) are reached in both.
// A line costs 3.0 bytes per byte, measured: the line parsed, and
// SQLite's two copies, its bound value and its record (a bare modernc
// insert of a 64 MiB text grows RSS by 136 MiB, see bench/README.md); 3.9
// when prefixHash kept a copy of the line's reads too.
func TestImportMemoryFollowsLongestLine(t *testing.T) {
	if testing.Short() || storetest.RaceEnabled {
		t.Skip("imports about 100 MB in child processes")
	}
	ctx := context.Background()
	dir := t.TempDir()
	c, err := generateCorpus(1, 150, 12, filepath.Join(dir, "corpus"))
	if err != nil {
		t.Fatal(err)
	}
	one, err := newFolder(1, c, []folderSession{{ShapeImages, 1000}}, filepath.Join(dir, "one"))
	if err != nil {
		t.Fatal(err)
	}
	four := &folder{}
	for seed := range uint64(4) {
		f, err := newFolder(seed+1, c, []folderSession{{ShapeImages, 1000}}, filepath.Join(dir, "four"))
		if err != nil {
			t.Fatal(err)
		}
		if seed > 0 { // the small files once: their sessions would be in the store
			f.files, f.entries, f.bytes = f.files[len(c.importFiles):], f.entries-c.importEntries, f.bytes-c.importBytes
		}
		four.files, four.entries, four.bytes = append(four.files, f.files...), four.entries+f.entries, four.bytes+f.bytes
	}
	const small, large = 4 << 20, 36 << 20
	peak := func(f *folder, line int, name string) int64 {
		g, err := f.withLine(7, line, filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := importInChild(ctx, filepath.Join(dir, name+".db"), g.files)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Entries != g.entries {
			t.Fatalf("%s: %d entries imported; want %d", name, rep.Entries, g.entries)
		}
		t.Logf("%s: %s, longest line %s: peak RSS %s", name, fmtBytes(g.bytes), fmtBytes(g.longest), fmtBytes(rep.PeakRSS))
		return rep.PeakRSS
	}
	// The least of three imports each: a process's peak varies by ±5 MiB
	// from run to run (when the collector runs, the allocator), noise a
	// single pair's difference reached the bound with.
	least := func(f *folder, line int, name string) int64 {
		m := peak(f, line, name+"-1")
		for i := 2; i <= 3; i++ {
			m = min(m, peak(f, line, fmt.Sprintf("%s-%d", name, i)))
		}
		return m
	}
	a, b := least(one, small, "one"), least(four, small, "four")
	if b > a+16<<20 {
		t.Errorf("peak RSS %s for a folder four times as large as one of %s, with the same longest line; want at most 16 MiB more", fmtBytes(b), fmtBytes(a))
	}
	l := peak(one, large, "one-large")
	if d := l - a; d < large-small || d > 7*(large-small)/2 {
		t.Errorf("peak RSS %s with a line of %s, %s with one of %s: %.1f bytes per byte of line; want 1 to 3.5",
			fmtBytes(l), fmtBytes(large), fmtBytes(a), fmtBytes(small), float64(d)/float64(large-small))
	}
}
