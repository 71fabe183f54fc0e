package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// prepared is one backend's measurement of one workload on one dataset,
// set up and ready to run.
type prepared struct {
	// op performs the operation once.
	op func(ctx context.Context) error
	// timed, when set, replaces the timing loop: it performs n operations
	// and reports how long they took, measured by whoever runs them (pi's
	// loader times itself inside node, without the pipe's round trip).
	timed func(ctx context.Context, n int) (time.Duration, error)
	// memory, when set, replaces the memory pass (pi reports node's own).
	memory func(ctx context.Context) (memPeak, error)
	// before and after run, untimed, around every run (a fresh database
	// for an import, say).
	before, after func(ctx context.Context) error
	// close releases the case.
	close func() error
	// maxIters caps the operations per run; 1 for operations that need a
	// fresh before (imports).
	maxIters int
	// rows is how many entries one operation returns or writes.
	rows int
	// bytes is how many payload bytes one operation reads or writes.
	bytes int64
	// external marks cases measured outside this process: no Go
	// allocation counts, and no peak memory unless memory measures it.
	external bool
	note     string
}

// benchCase is one backend's side of a workload on a dataset.
type benchCase struct {
	backend string
	setup   func(ctx context.Context) (*prepared, error)
}

// Result is one measurement: a workload on one dataset and one backend.
// Times are per operation.
type Result struct {
	// Workload, Shape, Size and Backend say what was measured; Size is
	// entries, or sessions for the corpus.
	Workload string `json:"workload"`
	Shape    string `json:"shape"`
	Size     int    `json:"size"`
	Backend  string `json:"backend"`
	// RunsNs are the per-operation times of each run, in run order.
	RunsNs []float64 `json:"runsNs,omitempty"`
	// RunsAllocBytes and RunsAllocs are each run's Go heap allocations
	// per operation.
	RunsAllocBytes []float64 `json:"runsAllocBytes,omitempty"`
	RunsAllocs     []float64 `json:"runsAllocs,omitempty"`
	// Iters is the number of operations per run.
	Iters int `json:"iters,omitempty"`
	// MedianNs, MinNs and MaxNs summarize RunsNs.
	MedianNs float64 `json:"medianNs,omitempty"`
	MinNs    float64 `json:"minNs,omitempty"`
	MaxNs    float64 `json:"maxNs,omitempty"`
	// AllocBytes and Allocs are Go heap allocations per operation (the
	// median run); -1 when measured outside the process.
	AllocBytes float64 `json:"allocBytesPerOp"`
	Allocs     float64 `json:"allocsPerOp"`
	// PeakHeap and PeakRSS are the peak memory of one operation beyond
	// what the process held before it (see mem.go); -1 when unknown.
	PeakHeap int64 `json:"peakHeapBytes"`
	PeakRSS  int64 `json:"peakRSSBytes"`
	// Rows and Bytes are what one operation returns or writes.
	Rows  int   `json:"rows,omitempty"`
	Bytes int64 `json:"bytes,omitempty"`
	// Note adds what the workload did (depths of a move, files imported).
	Note string `json:"note,omitempty"`
	// Skipped says why the measurement was not made.
	Skipped string `json:"skipped,omitempty"`
}

// runner runs the workloads of one benchmark run.
type runner struct {
	opts    Options
	dir     string
	stderr  io.Writer
	start   time.Time
	results []*Result
	// pis are the node processes timing pi's loader, one per release in
	// Options.PiVersions' order; none without -vs-pi or without node.
	pis []*piRunner

	// pgURL is the PostgreSQL server of the postgres rows, "" without -pg.
	pgURL string

	// lastDataset describes the dataset measured last.
	lastDataset DatasetInfo

	// For the dataset being measured:
	ds     *dataset
	stores map[string]stored
	floor  *floorStore
	// hot holds one open session per backend, shared by the workloads
	// that work on an open session, so a JSONL file is parsed once per
	// dataset rather than once per workload.
	hot map[string]hotSession

	// For the corpus workloads:
	corpus      *corpus
	corpusStore *store.Store // the corpus imported, nil without the engine
	corpusFloor string       // the corpus floor database, "" without the floor
	folder      *folder      // the folder workloads' files, nil when none runs
	// processImports are the folder's imports in child processes.
	processImports []ProcessImport
}

type hotSession struct {
	st   sessiontree.Storage
	opts openOpts
}

// session returns backend's shared open session, opened with o. The
// caller may close the result; the session stays open until closeHot.
func (r *runner) session(ctx context.Context, backend string, s stored, o openOpts) (sessiontree.Storage, error) {
	if h, ok := r.hot[backend]; ok {
		if h.opts == o {
			return noClose{h.st}, nil
		}
		h.st.Close()
		delete(r.hot, backend)
	}
	st, err := s.open(ctx, o)
	if err != nil {
		return nil, err
	}
	if r.hot == nil {
		r.hot = map[string]hotSession{}
	}
	r.hot[backend] = hotSession{st, o}
	return noClose{st}, nil
}

// closeHot closes the shared sessions.
func (r *runner) closeHot() {
	for name, h := range r.hot {
		if err := h.st.Close(); err != nil {
			r.progress("  %s: close: %v", name, err)
		}
	}
	r.hot = nil
}

func (r *runner) progress(format string, args ...any) {
	fmt.Fprintf(r.stderr, "[%6.1fs] %s\n", time.Since(r.start).Seconds(), fmt.Sprintf(format, args...))
}

// runDataset generates one session and runs every selected workload on it.
func (r *runner) runDataset(ctx context.Context, shape Shape, size int) error {
	t0 := time.Now()
	genDir := r.dir + "/sessions"
	ds, err := generate(r.opts.Seed, shape, size, genDir)
	if err != nil {
		return err
	}
	if err := ds.reference(ctx); err != nil {
		return err
	}
	r.progress("generated %s: %d entries, %s file, active path %d, context %d messages (%v)",
		ds.name(), len(ds.Entries), fmtBytes(ds.FileBytes), len(ds.ActivePath), ds.ContextMessages, time.Since(t0).Round(time.Millisecond))
	r.lastDataset = DatasetInfo{Name: ds.name(), Entries: len(ds.Entries), FileBytes: ds.FileBytes,
		ActivePath: len(ds.ActivePath), ContextMessages: ds.ContextMessages}
	r.ds, r.stores, r.floor = ds, map[string]stored{}, nil
	defer r.releaseDataset()

	for _, b := range r.backends() {
		if !r.opts.wants(b.name()) {
			continue
		}
		t := time.Now()
		st, err := b.load(ctx, r.dir, ds)
		if err != nil {
			return fmt.Errorf("%s: load %s: %w", b.name(), ds.name(), err)
		}
		r.stores[b.name()] = st
		if d := time.Since(t); d > time.Millisecond {
			r.progress("  %s: loaded in %v (%.0f entries/s)", b.name(), d.Round(time.Millisecond), float64(len(ds.Entries))/d.Seconds())
		}
	}
	if r.opts.wants(backendFloor) {
		if r.floor, err = buildFloor(ctx, r.dir, ds); err != nil {
			return err
		}
	}
	for _, w := range workloads {
		if !r.opts.wantsWorkload(w.name) || w.corpus || !slices.Contains(w.shapes, shape) {
			continue
		}
		if w.capped && r.opts.ImportMaxSize > 0 && size > r.opts.ImportMaxSize {
			continue
		}
		if w.capped && r.opts.Quick && shape == ShapeLarge {
			continue // seconds per import on a loaded machine: too slow for the smoke test
		}
		if !w.hot {
			// It opens sessions itself: release the JSONL files' locks.
			r.closeHot()
		}
		if err := r.runWorkload(ctx, w, w.cases(r, ds)); err != nil {
			return err
		}
	}
	return nil
}

func (r *runner) releaseDataset() {
	r.closeHot()
	for name, st := range r.stores {
		if err := st.close(); err != nil {
			r.progress("  %s: close: %v", name, err)
		}
	}
	r.stores, r.floor = nil, nil
	if !r.opts.Keep {
		for _, sub := range []string{"sessions", backendJSONL, backendEngine, backendStore, backendFloor, backendFileFloor} {
			os.RemoveAll(r.dir + "/" + sub)
		}
	}
	r.ds = nil
	runtime.GC()
}

// live is a case being measured.
type live struct {
	backend string
	p       *prepared
	iters   int
	want    int       // how many runs this case gets
	runs    []runStat // the runs so far
	res     *Result
	mem     memPeak // peak memory, once measured
	memDone bool
}

// runStat is one timed run's per-operation time and allocations.
type runStat struct{ ns, bytes, allocs float64 }

// Slow operations get fewer runs, so that a full run keeps to its time
// budget: a case whose operation takes slowOp or more gets slowRuns runs
// (a median of three is enough for a half-second operation), and its last
// run doubles as its memory pass; one that takes veryslowOp or more is not
// warmed up either: its calibration run is its first run.
const (
	slowOp     = 250 * time.Millisecond
	veryslowOp = time.Second
	slowRuns   = 3
)

// runWorkload measures every case of a workload on the current dataset:
// set up, calibrate, then Runs rounds in which every backend runs once,
// the order rotating each round so drift and position hit all alike;
// then one more operation each for peak memory.
func (r *runner) runWorkload(ctx context.Context, w *workload, cases []benchCase) error {
	ds := r.ds
	var cs []*live
	defer func() {
		for _, c := range cs {
			if c.p.close != nil {
				if err := c.p.close(); err != nil {
					r.progress("  %s/%s: close: %v", w.name, c.backend, err)
				}
			}
		}
	}()
	for _, bc := range cases {
		if !r.opts.wants(bc.backend) {
			continue
		}
		res := &Result{Workload: w.name, Shape: string(ds.Shape), Size: ds.Size, Backend: bc.backend, PeakHeap: -1, PeakRSS: -1}
		p, err := bc.setup(ctx)
		if errors.Is(err, errUnsupported) {
			continue
		}
		if err != nil {
			res.Skipped = err.Error()
			r.results = append(r.results, res)
			r.progress("  %s %s: %s: %v", w.name, ds.name(), bc.backend, err)
			continue
		}
		res.Rows, res.Bytes, res.Note = p.rows, p.bytes, p.note
		c := &live{backend: bc.backend, p: p, res: res, want: r.opts.Runs}
		var first *runStat
		if c.iters, first, err = r.calibrate(ctx, p); err != nil {
			res.Skipped = "failed: " + err.Error()
			r.results = append(r.results, res)
			r.progress("  %s %s: %s: %v", w.name, ds.name(), bc.backend, err)
			if p.close != nil {
				p.close()
			}
			continue
		}
		res.Iters = c.iters
		if first != nil {
			c.slow(time.Duration(first.ns))
			if time.Duration(first.ns) >= veryslowOp {
				c.runs = append(c.runs, *first)
			}
		}
		cs = append(cs, c)
		r.results = append(r.results, res)
	}
	for rep := range r.opts.Runs {
		for i := range cs {
			c := cs[(i+rep)%len(cs)]
			if c.res.Skipped != "" || len(c.runs) >= c.want {
				continue
			}
			// A slow operation's last run is its memory pass too.
			probe := c.iters == 1 && c.want == slowRuns && len(c.runs) == c.want-1 && c.p.memory == nil && !c.p.external
			d, b, a, m, err := r.timeRunProbe(ctx, c.p, c.iters, probe)
			if err != nil {
				c.res.Skipped = "failed: " + err.Error()
				r.progress("  %s %s: %s: %v", w.name, ds.name(), c.backend, err)
				continue
			}
			if probe {
				c.mem, c.memDone = m, true
			}
			n := float64(c.iters)
			c.runs = append(c.runs, runStat{float64(d.Nanoseconds()) / n, b / n, a / n})
			c.slow(d / time.Duration(c.iters))
		}
	}
	for _, c := range cs {
		if c.res.Skipped != "" {
			continue
		}
		m := c.mem
		if !c.memDone {
			var err error
			if m, err = r.memoryPass(ctx, c.p); err != nil {
				c.res.Skipped = "failed: " + err.Error()
				continue
			}
		}
		c.res.PeakHeap, c.res.PeakRSS = m.Heap, m.RSS
		rs := c.runs
		for _, x := range rs {
			c.res.RunsNs = append(c.res.RunsNs, x.ns)
			c.res.RunsAllocBytes = append(c.res.RunsAllocBytes, x.bytes)
			c.res.RunsAllocs = append(c.res.RunsAllocs, x.allocs)
		}
		sorted := slices.Clone(rs)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i].ns < sorted[j].ns })
		mid := sorted[len(sorted)/2]
		c.res.MedianNs = median(c.res.RunsNs)
		c.res.MinNs, c.res.MaxNs = sorted[0].ns, sorted[len(sorted)-1].ns
		c.res.AllocBytes, c.res.Allocs = mid.bytes, mid.allocs
		if c.p.external {
			c.res.AllocBytes, c.res.Allocs = -1, -1
		}
	}
	var parts []string
	for _, c := range cs {
		if c.res.Skipped == "" {
			parts = append(parts, fmt.Sprintf("%s %s", c.backend, fmtDuration(c.res.MedianNs)))
		}
	}
	r.progress("  %-12s %-14s %s", w.name, ds.name(), strings.Join(parts, " · "))
	return ctx.Err()
}

// slow caps the runs of a case whose operation took d.
func (c *live) slow(d time.Duration) {
	if d >= slowOp {
		c.want = min(c.want, slowRuns)
	}
}

// calibrate runs the operation once (a warm-up that also fills caches)
// and picks how many operations a run needs to last MinRunTime. It
// returns that count and the warm-up run. Operations limited to one per
// run (imports) get no warm-up: their before and after make each run
// start alike anyway.
func (r *runner) calibrate(ctx context.Context, p *prepared) (int, *runStat, error) {
	limit := p.maxIters
	if limit <= 0 {
		limit = 1_000_000
	}
	if limit == 1 {
		return 1, nil, nil
	}
	d, b, a, err := r.timeRun(ctx, p, 1)
	if err != nil {
		return 0, nil, err
	}
	d = max(d, time.Nanosecond)
	n := int(r.opts.MinRunTime/d) + 1
	return min(max(n, 1), limit), &runStat{float64(d), b, a}, nil
}

// timeRun performs n operations and reports their time and Go heap
// allocations. The heap is collected first, so one backend's garbage is
// not collected on another's time.
func (r *runner) timeRun(ctx context.Context, p *prepared, n int) (d time.Duration, allocBytes, allocs float64, err error) {
	d, allocBytes, allocs, _, err = r.timeRunProbe(ctx, p, n, false)
	return d, allocBytes, allocs, err
}

// timeRunProbe is timeRun that, with probe, also measures peak memory: for
// slow operations run once per run, whose last timed run doubles as the
// memory pass (the probe's 200µs sampling costs them well under 1%).
func (r *runner) timeRunProbe(ctx context.Context, p *prepared, n int, probe bool) (d time.Duration, allocBytes, allocs float64, m memPeak, err error) {
	if p.before != nil {
		if err := p.before(ctx); err != nil {
			return 0, 0, 0, m, fmt.Errorf("before: %w", err)
		}
	}
	var mp *memProbe
	if probe {
		mp = startProbe()
	} else {
		runtime.GC()
	}
	b0, o0 := allocCounters()
	if p.timed != nil {
		d, err = p.timed(ctx, n)
	} else {
		t0 := time.Now()
		for range n {
			if err = p.op(ctx); err != nil {
				break
			}
		}
		d = time.Since(t0)
	}
	b1, o1 := allocCounters()
	if mp != nil {
		m = mp.stop()
	}
	if p.after != nil {
		if aerr := p.after(ctx); aerr != nil && err == nil {
			err = fmt.Errorf("after: %w", aerr)
		}
	}
	return d, float64(b1 - b0), float64(o1 - o0), m, err
}

// memoryPass performs one operation and reports its peak memory; for an
// operation run by other processes, with no memory pass of its own, the
// peaks are unknown: this process's growth is not the operation's.
func (r *runner) memoryPass(ctx context.Context, p *prepared) (memPeak, error) {
	if p.external && p.memory == nil {
		return memPeak{Heap: -1, RSS: -1}, nil
	}
	if p.before != nil {
		if err := p.before(ctx); err != nil {
			return memPeak{}, err
		}
	}
	var m memPeak
	var err error
	if p.memory != nil {
		m, err = p.memory(ctx)
	} else {
		m, err = measureMemory(func() error { return p.op(ctx) })
	}
	if p.after != nil {
		if aerr := p.after(ctx); aerr != nil && err == nil {
			err = aerr
		}
	}
	return m, err
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
