package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
)

// BenchmarkFleet is issue 17's "many agents, one database": G goroutines
// each append to a session of their own in one database (WAL,
// synchronous=NORMAL), every Append returning once its entry is
// committed. One op is one acknowledged entry, whichever goroutine
// appended it; entries/s is the fleet's total (targets: ≥ 50,000 at
// G = 64, ≥ 5× G = 1). It also reports the appends per commit (the
// group commit's groups), the time the groups held the write connection
// per entry (the serial part: 50,000 entries/s needs it under 20 µs), and
// the pages the commits wrote to the log per entry, where most of an
// append's cost goes.
func BenchmarkFleet(b *testing.B) {
	for _, g := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("G=%d", g), func(b *testing.B) { benchFleet(b, g) })
	}
}

func benchFleet(b *testing.B, g int) {
	db := openBench(b, filepath.Join(b.TempDir(), "fleet.db"))
	ctx := context.Background()
	sessions := make([]*sessiontree.Session, g)
	for i := range sessions {
		st, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/work/fleet"})
		if err != nil {
			b.Fatal(err)
		}
		sessions[i] = sessiontree.NewSession(st, sessiontree.SessionOptions{})
	}
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	errs := make(chan error, g)
	groups0, requests0, held0, pages0 := db.WriteCounts()
	stop := measureCPU(b)
	b.ResetTimer()
	start := time.Now()
	for _, s := range sessions {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if _, err := s.Append(ctx, benchDraft.Type, benchDraft.Fields, sessiontree.AppendOptions{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	stop()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "entries/s")
	groups, requests, held, pages := db.WriteCounts()
	if groups > groups0 {
		b.ReportMetric(float64(requests-requests0)/float64(groups-groups0), "appends/commit")
	}
	b.ReportMetric(float64(pages-pages0)/float64(b.N), "pages/entry")
	b.ReportMetric(float64(held-held0)/float64(b.N), "held-ns/entry")
}
