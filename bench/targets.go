package main

import (
	"fmt"
	"slices"
	"strings"
)

// Target is one speed target from the issues, checked against this run.
type Target struct {
	// Target is the target as the issue states it.
	Target string `json:"target"`
	// Measured is what this run measured for it.
	Measured string `json:"measured"`
	// Verdict is "met", "MISSED" or "not measured".
	Verdict string `json:"verdict"`
}

const (
	verdictMet     = "met"
	verdictMissed  = "MISSED"
	verdictNotRun  = "not measured"
	targetSize     = 100_000
	targetMidSize  = 10_000
	flatTimeFactor = 2.0 // "flat": the 100k median within 2× of the 1k one
)

func verdict(ok bool) string {
	if ok {
		return verdictMet
	}
	return verdictMissed
}

// sizesOf lists the sizes measured for a workload and shape, ascending.
func (rep *Report) sizesOf(workload, shape string) []int {
	var out []int
	for _, r := range rep.Results {
		if r.Workload == workload && r.Shape == shape && r.Skipped == "" && !slices.Contains(out, r.Size) {
			out = append(out, r.Size)
		}
	}
	slices.Sort(out)
	return out
}

// atSize picks the size to check a target at: want if measured, else the
// largest measured size below it; the label says when it is not want.
func (rep *Report) atSize(workload, shape string, want int) (int, string) {
	best := 0
	for _, n := range rep.sizesOf(workload, shape) {
		if n <= want {
			best = n
		}
	}
	if best == 0 || best == want {
		return best, ""
	}
	return best, fmt.Sprintf(" (at %s; the target is for %s)", sizeLabel(best), sizeLabel(want))
}

// checkTargets evaluates every target of issues 3, 4, 5 and 7.
func (rep *Report) checkTargets() {
	add := func(target, measured, v string) {
		rep.Targets = append(rep.Targets, Target{target, measured, v})
	}
	notRun := func(target, why string) { add(target, why, verdictNotRun) }

	// ratioTarget checks a over b ≥ want (a slower by want or more).
	speedup := func(target, workload, shape string, size int, slow, fast string, want float64) {
		n, at := rep.atSize(workload, shape, size)
		s, f := rep.find(workload, shape, n, slow), rep.find(workload, shape, n, fast)
		if s == nil || f == nil {
			notRun(target, fmt.Sprintf("%s or %s not measured%s", slow, fast, map[bool]string{true: " (run with -vs-pi)"}[isPiBackend(slow)]))
			return
		}
		x := s.MedianNs / f.MedianNs
		add(target, fmt.Sprintf("%s %s vs %s %s: %s%s", fast, fmtDuration(f.MedianNs), slow, fmtDuration(s.MedianNs), fmtRatio(x), at), verdict(x >= want))
	}

	// Issue 7.
	pi := rep.piBackend()
	speedup("engine resumes a compacted 100k session ≥ 200× faster than pi's loader", "resume", "compacted", targetSize, pi, backendEngine, 200)
	speedup("engine resumes a compacted 100k session ≥ 100× faster than the JSONL backend", "resume", "compacted", targetSize, backendJSONL, backendEngine, 100)
	rep.flatTarget(add, notRun)
	rep.floorTarget(add, notRun, "engine single appends within 2.5× of the bare insert floor", "append", "linear", 2.5)
	rep.floorTarget(add, notRun, "engine synced appends within 2.5× of the bare synced insert floor (not a stated target; for reference)", "append-sync", "linear", 2.5)
	rep.floorTarget(add, notRun, "engine active path reads within 1.5× of the bare range-scan floor", "active-path", "", 1.5)

	// Issue 3 (JSONL).
	for _, shape := range []string{"linear", "compacted"} {
		n, at := rep.atSize("resume", shape, targetSize)
		j, p := rep.find("resume", shape, n, backendJSONL), rep.find("resume", shape, n, pi)
		target := fmt.Sprintf("JSONL opens and builds the context of a 100k %s file in < 1/3 of pi's time", shape)
		if j == nil || p == nil {
			notRun(target, "jsonl or "+pi+" not measured (run with -vs-pi)")
			continue
		}
		add(target, fmt.Sprintf("jsonl %s, %s %s: %.2f of pi's%s", fmtDuration(j.MedianNs), pi, fmtDuration(p.MedianNs), j.MedianNs/p.MedianNs, at), verdict(j.MedianNs*3 < p.MedianNs))
	}
	rep.rateTarget(add, notRun, "JSONL appends ≥ 100,000 entries/s without sync", "append", "linear", backendJSONL, 100_000)

	// Issue 4 (engine).
	rep.maxTimeTarget(add, notRun, "engine opens a 100k session and reads its leaf in < 1 ms", "open", "compacted", targetSize, 1e6, "")
	rep.maxTimeTarget(add, notRun, "engine context at a compacted 100k session's leaf < 5 ms (our resume: open + context, boundary ~500 entries back)", "resume", "compacted", targetSize, 5e6, "")
	rep.maxTimeTarget(add, notRun, "engine reads a 10k-entry active path in < 30 ms", "active-path", "linear", targetMidSize, 30e6, "")
	rep.maxTimeTarget(add, notRun, "engine moves the leaf between two deep branches in < 20 ms (issue: 10k deep meeting at 5k)", "move", "bushy", targetMidSize, 20e6, "note")
	rep.rateTarget(add, notRun, "engine single appends ≥ 20,000/s (WAL, synchronous=NORMAL)", "append", "linear", backendEngine, 20_000)
	rep.rateTarget(add, notRun, "bare modernc insert loop ≈ 50,000/s (issue's reference)", "append", "linear", backendFloor, 50_000)
	if n, at := rep.atSize("import", "linear", targetSize); n > 0 {
		if r := rep.find("import", "linear", n, backendEngine); r != nil {
			rate := float64(r.Rows) / (r.MedianNs / 1e9)
			add("engine batch import ≥ 150,000 entries/s", fmt.Sprintf("%.0f entries/s%s", rate, at), verdict(rate >= 150_000))
		} else {
			notRun("engine batch import ≥ 150,000 entries/s", "engine not measured")
		}
	} else {
		notRun("engine batch import ≥ 150,000 entries/s", "import not run")
	}

	// Issue 5 (store).
	rep.corpusTargets(add, notRun)

	// Issue 17.
	rep.fleetTargets(add, notRun)

	// Issue 15 (PostgreSQL).
	rep.pgTargets(add, notRun)
}

// corpusTargets checks the store's targets on the corpus.
func (rep *Report) corpusTargets(add func(string, string, string), notRun func(string, string)) {
	sizes := rep.sizesOf("list", string(ShapeCorpus))
	n := 0
	if len(sizes) > 0 {
		n = sizes[len(sizes)-1]
	}
	corpus := ""
	for _, d := range rep.Datasets {
		if strings.HasPrefix(d.Name, "corpus") {
			corpus = fmt.Sprintf("%d entries", d.Entries)
		}
	}
	target := "store lists 10,000 sessions, first page, in < 50 ms"
	if r := rep.find("list", string(ShapeCorpus), n, backendStore); r != nil {
		at := ""
		if n != 10_000 {
			at = fmt.Sprintf(" (over %s sessions)", sizeLabel(n))
		}
		m := fmtDuration(r.MedianNs) + at
		if p := rep.find("list", string(ShapeCorpus), n, rep.piBackend()); p != nil {
			m += fmt.Sprintf("; %s %s (%s)", p.Backend, fmtDuration(p.MedianNs), fmtRatio(p.MedianNs/r.MedianNs))
		}
		add(target, m, verdict(r.MedianNs < 50e6))
	} else {
		notRun(target, "store not measured")
	}
	target = "store searches 1,000,000 indexed entries in < 100 ms"
	if r := rep.find("search", string(ShapeCorpus), n, backendStore); r != nil {
		add(target, fmt.Sprintf("%s over %s (%s sessions; -huge for ~1M entries)", fmtDuration(r.MedianNs), corpus, sizeLabel(n)), verdict(r.MedianNs < 100e6))
	} else {
		notRun(target, "store not measured")
	}
	target = "store reports usage over 10,000 sessions and 1,000,000 entries in < 100 ms"
	nu := 0
	if us := rep.sizesOf("usage", string(ShapeCorpus)); len(us) > 0 {
		nu = us[len(us)-1]
	}
	if r := rep.find("usage", string(ShapeCorpus), nu, backendStore); r != nil {
		m := fmt.Sprintf("%s over %s (%s sessions; -corpus-max 500 for ~1M entries)", fmtDuration(r.MedianNs), corpus, sizeLabel(nu))
		if f := rep.find("usage", string(ShapeCorpus), nu, backendFileFloor); f != nil {
			m += fmt.Sprintf("; reading every file %s", fmtDuration(f.MedianNs))
		}
		add(target, m, verdict(r.MedianNs < 100e6))
	} else {
		notRun(target, "store not measured")
	}
	target = "store imports pi JSONL at ≥ 30 MB/s"
	var parts []string
	ok := true
	for _, c := range []struct{ workload, shape string }{{"import", "linear"}, {"import", "large"}, {"store-import", string(ShapeCorpus)}} {
		sizes := rep.sizesOf(c.workload, c.shape)
		if len(sizes) == 0 {
			continue
		}
		n := sizes[len(sizes)-1]
		r := rep.find(c.workload, c.shape, n, backendStore)
		if r == nil {
			continue
		}
		mbs := float64(r.Bytes) / 1e6 / (r.MedianNs / 1e9)
		what := fmt.Sprintf("%s-%s file", c.shape, sizeLabel(n))
		if c.shape == string(ShapeCorpus) {
			what = fmt.Sprintf("%d small files", r.Rows)
			if f := strings.Fields(r.Note); len(f) > 0 {
				what = f[0] + " small files"
			}
		}
		part := fmt.Sprintf("%s: %.1f MB/s, %.0f entries/s", what, mbs, float64(r.Rows)/(r.MedianNs/1e9))
		if ix := rep.find("store-index", c.shape, n, backendStore); ix != nil && c.workload == "store-import" {
			// The import leaves the search index pending; what indexing it
			// costs is shown beside, not counted in the verdict.
			part += fmt.Sprintf(" (%.1f MB/s with the index catch-up, %s)", float64(r.Bytes)/1e6/((r.MedianNs+ix.MedianNs)/1e9), fmtDuration(ix.MedianNs))
		}
		parts = append(parts, part)
		ok = ok && mbs >= 30
	}
	if len(parts) == 0 {
		notRun(target, "store not measured")
	} else {
		add(target, strings.Join(parts, "; "), verdict(ok))
	}
	rep.folderTargets(add)
	rep.coresTarget(add)
	rep.memoryTarget(add)
}

// flatTarget: the engine's resume time and memory on compacted sessions
// stay flat from the smallest to the largest size.
func (rep *Report) flatTarget(add func(string, string, string), notRun func(string, string)) {
	target := "engine resume time and memory flat from 1k to 100k (compacted)"
	sizes := rep.sizesOf("resume", "compacted")
	if len(sizes) < 2 {
		notRun(target, "needs two sizes or more")
		return
	}
	lo, hi := rep.find("resume", "compacted", sizes[0], backendEngine), rep.find("resume", "compacted", sizes[len(sizes)-1], backendEngine)
	if lo == nil || hi == nil {
		notRun(target, "engine not measured")
		return
	}
	x := hi.MedianNs / lo.MedianNs
	ok := x <= flatTimeFactor
	m := fmt.Sprintf("time %s → %s (%s); peak heap %s → %s; peak RSS %s → %s",
		fmtDuration(lo.MedianNs), fmtDuration(hi.MedianNs), fmtRatio(x),
		fmtMem(lo.PeakHeap), fmtMem(hi.PeakHeap), fmtMem(lo.PeakRSS), fmtMem(hi.PeakRSS))
	flatMem := func(a, b int64) bool { return a < 0 || b < 0 || b <= 2*a || b-a < 1<<20 }
	ok = ok && flatMem(lo.PeakHeap, hi.PeakHeap) && flatMem(lo.PeakRSS, hi.PeakRSS)
	add(target, m, verdict(ok))
}

// floorTarget: the engine within factor of the floor at every size of
// the shape ("" = every shape); reports the worst cell.
func (rep *Report) floorTarget(add func(string, string, string), notRun func(string, string), target, workload, shape string, factor float64) {
	worst, worstAt := 0.0, ""
	n := 0
	for _, r := range rep.Results {
		if r.Workload != workload || r.Backend != backendEngine || r.Skipped != "" || (shape != "" && r.Shape != shape) {
			continue
		}
		f := rep.find(workload, r.Shape, r.Size, backendFloor)
		if f == nil {
			continue
		}
		n++
		if x := r.MedianNs / f.MedianNs; x > worst {
			worst, worstAt = x, fmt.Sprintf("%s %s: engine %s vs floor %s", r.Shape, sizeLabel(r.Size), fmtDuration(r.MedianNs), fmtDuration(f.MedianNs))
		}
	}
	if n == 0 {
		notRun(target, "engine or floor not measured")
		return
	}
	add(target, fmt.Sprintf("worst of %d: %s at %s", n, fmtRatio(worst), worstAt), verdict(worst <= factor))
}

// rateTarget: operations per second of backend at every measured size,
// worst reported.
func (rep *Report) rateTarget(add func(string, string, string), notRun func(string, string), target, workload, shape, backend string, want float64) {
	worst, at := 0.0, ""
	for _, n := range rep.sizesOf(workload, shape) {
		if r := rep.find(workload, shape, n, backend); r != nil {
			if rate := 1e9 / r.MedianNs; worst == 0 || rate < worst {
				worst, at = rate, sizeLabel(n)
			}
		}
	}
	if worst == 0 {
		notRun(target, backend+" not measured")
		return
	}
	add(target, fmt.Sprintf("worst %.0f/s (at %s)", worst, at), verdict(worst >= want))
}

// maxTimeTarget: the engine's median under limit at the size.
func (rep *Report) maxTimeTarget(add func(string, string, string), notRun func(string, string), target, workload, shape string, size int, limitNs float64, withNote string) {
	n, at := rep.atSize(workload, shape, size)
	r := rep.find(workload, shape, n, backendEngine)
	if r == nil {
		notRun(target, "engine not measured")
		return
	}
	m := fmtDuration(r.MedianNs) + at
	if withNote != "" && r.Note != "" {
		m += "; " + r.Note
	}
	add(target, m, verdict(r.MedianNs < limitNs))
}
