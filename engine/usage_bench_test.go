package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// benchUserDraft is a user message: an append without usage, which
// writes no usage_days row (BenchmarkAppend's draft is an assistant
// message with usage, which adds to one).
var benchUserDraft = func() sessiontree.Draft {
	g := &gen{prefix: "x", n: 2} // gen.message makes message n+1: odd is a user's
	e := g.message("")
	if sessiontree.StatsOf(e).HasUsage {
		panic("benchUserDraft has usage")
	}
	msg, _ := e.Field("message")
	return sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: []byte(`{"message":` + string(msg) + `}`), Timestamp: benchTS}
}()

// BenchmarkAppendUser is BenchmarkAppend with a user message, which has
// no usage.
func BenchmarkAppendUser(b *testing.B) { benchAppend(b, benchUserDraft) }

// BenchmarkUsage reports usage over 10,000 sessions, in 20 working
// directories, each with a few assistant messages of three models on
// one or two of 250 days (as the bench program's corpus spreads them),
// by every grouping. The bench program's usage workload measures the
// same over a corpus of a million entries; the report reads usage_days,
// whose size depends on sessions, days and models, not entries.
func BenchmarkUsage(b *testing.B) {
	ctx := context.Background()
	db := openBench(b, filepath.Join(b.TempDir(), "usage.db"))
	const sessions = 10_000
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	err := db.Update(ctx, func(tx *engine.Tx) error {
		for i := range sessions {
			st, err := tx.CreateSession(sessiontree.SessionMeta{Cwd: fmt.Sprintf("/work/p%02d", i%20)})
			if err != nil {
				return err
			}
			var entries []sessiontree.Entry
			parent := ""
			for j := range 6 {
				ts := sessiontree.FormatTime(t0.Add(time.Duration(i)*36*time.Minute + time.Duration(j)*3*time.Hour))
				e := usageEntry(b, fmt.Sprintf("e%d", j), parent, ts, fmt.Sprintf("m%d", (i+j)%3), 100, 0.01)
				entries = append(entries, e)
				parent = e.ID
			}
			if err := tx.AppendBatch(st, entries); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, by := range sessiontree.UsageGroupings {
		b.Run(string(by), func(b *testing.B) {
			measureCPU(b)
			for b.Loop() {
				rep, err := db.Usage(ctx, sessiontree.UsageQuery{By: by})
				if err != nil {
					b.Fatal(err)
				}
				if rep.Total.Sessions != sessions {
					b.Fatalf("Usage(by %s) counts %d sessions; want %d", by, rep.Total.Sessions, sessions)
				}
			}
		})
	}
}
