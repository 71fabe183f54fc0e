package main

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"time"
)

// Peak memory of one operation is measured in its own pass, after the
// timed runs, so the measuring never disturbs the times:
//
//   - Go heap: the heap is collected and returned to the OS first; a
//     sampler goroutine then reads runtime/metrics' live heap bytes every
//     200µs while the operation runs, plus once after it; the peak minus the
//     heap before is the operation's peak heap. No collection is forced in
//     between, so short peaks are caught by the final sample (the heap only
//     grows until a collection).
//   - RSS: Linux keeps the process's resident high-water mark in VmHWM
//     (/proc/self/status); writing "5" to /proc/self/clear_refs resets it
//     to the current RSS. Reset, run the operation, read VmHWM: the peak
//     minus the RSS before is the operation's peak RSS, which includes
//     memory outside the Go heap (modernc SQLite's page cache lives in
//     memory it maps itself). Where clear_refs is refused, the RSS column
//     is left empty rather than showing the process's lifetime peak.
//
// Both are per operation, attributable because one operation runs at a
// time; the process's earlier peaks do not leak in.

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}

func heapObjects() int64 {
	s := []metrics.Sample{heapSample[0]}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// allocCounters reads the cumulative heap allocation counters, exactly:
// runtime.ReadMemStats flushes every P's cached counts (runtime/metrics'
// allocation counters lag behind by up to a span per size class, which
// hides a small operation's allocations), as testing.B does. It stops the
// world briefly, so it is called outside the timed region.
func allocCounters() (bytes, objects uint64) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc, ms.Mallocs
}

// procStatus reads a kB field of /proc/self/status in bytes; -1 when it
// cannot.
func procStatus(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte(field+":")) {
			continue
		}
		f := bytes.Fields(line[len(field)+1:])
		if len(f) == 0 {
			return -1
		}
		n, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return -1
		}
		return n << 10
	}
	return -1
}

// resetHWM resets the RSS high-water mark; false when the kernel refuses.
func resetHWM() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// memPeak is the peak memory one operation needed beyond what the process
// held before it.
type memPeak struct {
	Heap int64 // bytes; -1 when unknown
	RSS  int64 // bytes; -1 when unknown
}

// memProbe watches the memory of one operation; see the top of this file.
type memProbe struct {
	baseHeap, baseRSS int64
	canRSS            bool
	mu                sync.Mutex // guards peak
	peak              int64
	done              chan struct{}
	wg                sync.WaitGroup
}

// startProbe collects the heap, resets the RSS high-water mark and starts
// sampling the heap.
func startProbe() *memProbe {
	runtime.GC()
	debug.FreeOSMemory()
	p := &memProbe{baseHeap: heapObjects(), done: make(chan struct{})}
	p.canRSS = resetHWM()
	p.baseRSS = procStatus("VmRSS")
	p.peak = p.baseHeap
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
				h := heapObjects()
				p.mu.Lock()
				p.peak = max(p.peak, h)
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// stop ends the probe and reports the peaks.
func (p *memProbe) stop() memPeak {
	h := heapObjects()
	close(p.done)
	p.wg.Wait()
	m := memPeak{Heap: max(p.peak, h) - p.baseHeap, RSS: -1}
	if hwm := procStatus("VmHWM"); p.canRSS && hwm >= 0 && p.baseRSS >= 0 {
		m.RSS = max(0, hwm-p.baseRSS)
	}
	return m
}

// measureMemory runs fn once and reports its peak heap and RSS.
func measureMemory(fn func() error) (memPeak, error) {
	p := startProbe()
	err := fn()
	return p.stop(), err
}
