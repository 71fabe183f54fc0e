package engine_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// BenchmarkFollowDelay measures how long sessiontree.Follow takes to see
// an entry once its append returned, the writer on another pool of the
// file (as another process would be): ms-median and ms-max per run.
func BenchmarkFollowDelay(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := newDB(b)
	st := newSession(b, db)
	other := openDB(b, db.Path(), engine.Options{})
	w, err := other.OpenSession(ctx, st.ID())
	if err != nil {
		b.Fatal(err)
	}
	seen := make(chan time.Time, 1)
	go sessiontree.Follow(ctx, st, 0, func(sessiontree.Entry) error {
		seen <- time.Now()
		return nil
	})
	fields, err := sessiontree.Fields("message", userMsg("hello"))
	if err != nil {
		b.Fatal(err)
	}
	delays := make([]time.Duration, 0, b.N)
	for b.Loop() {
		if _, err := w.Append(ctx, sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: fields}, sessiontree.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
		done := time.Now()
		delays = append(delays, (<-seen).Sub(done))
	}
	slices.Sort(delays)
	b.ReportMetric(float64(delays[len(delays)/2])/1e6, "ms-median")
	b.ReportMetric(float64(delays[len(delays)-1])/1e6, "ms-max")
}
