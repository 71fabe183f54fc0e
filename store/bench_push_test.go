package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// pushEntries is the size of issue 15's push target: 100,000 entries in
// under 10 s.
const pushEntries = 100_000

// pushSourceDB returns the cached store of one session of pushEntries
// entries that the push benchmarks copy.
func pushSourceDB(b *testing.B) *store.Store {
	path := benchDB(b, "push-100k", func(ctx context.Context, s *store.Store) error {
		meta, entries, err := uniqueEntries(pushEntries)
		if err != nil {
			return err
		}
		st, err := s.Create(ctx, store.CreateOptions{ID: meta.ID, Cwd: meta.Cwd, Metadata: []byte(`{"host":"laptop"}`)})
		if err != nil {
			return err
		}
		defer st.Close()
		return st.AppendBatch(ctx, entries)
	})
	return openBenchStore(b, path)
}

// uniqueEntries generates a session of n entries whose ids are all
// distinct: the generator draws 8-hex-digit ids at random, which at
// 100,000 entries collide more often than not, so seeds are tried in
// turn (the same ones every time) until one gives none.
func uniqueEntries(n int) (sessiontree.SessionMeta, []sessiontree.Entry, error) {
	for seed := uint64(15); ; seed++ {
		meta, entries, err := genEntries(newPiGen(seed), "/home/dev/push", n, 0.15)
		if err != nil {
			return meta, nil, err
		}
		seen := make(map[string]bool, len(entries))
		for _, e := range entries {
			if seen[e.ID] {
				break
			}
			seen[e.ID] = true
		}
		if len(seen) == len(entries) {
			return meta, entries, nil
		}
	}
}

// BenchmarkPush pushes a session of 100,000 entries from SQLite to a
// new, empty SQLite store (new), and again to a store that has it all
// (up-to-date: the cost of the prefix check alone).
//
//	go test ./store -run '^$' -bench Push -count 5 -benchtime 1x
func BenchmarkPush(b *testing.B) {
	from := pushSourceDB(b)
	benchPush(b, from, func(b *testing.B) *store.Store { return freshStore(b) })
	// The floor beside it: the same entries, already in memory, appended
	// to a new store in one AppendBatch, the engine's bulk path that a
	// push drives a batch at a time.
	b.Run("floor-appendbatch", func(b *testing.B) {
		ctx := context.Background()
		ids, err := pushIDs(ctx, from)
		if err != nil {
			b.Fatal(err)
		}
		src, err := from.OpenSession(ctx, ids[0])
		if err != nil {
			b.Fatal(err)
		}
		entries := logOf(b, src)
		meta := metaOf(b, src)
		timeNew(b, func(to *store.Store) {
			st, err := to.Create(ctx, store.CreateOptions{ID: meta.ID, Cwd: meta.Cwd})
			if err == nil {
				err = st.AppendBatch(ctx, entries)
			}
			if err != nil {
				b.Fatal(err)
			}
		}, freshStore)
	})
}

// pushIDs returns the ids of every session of s.
func pushIDs(ctx context.Context, s *store.Store) ([]string, error) {
	page, err := s.List(ctx, store.ListOptions{})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, in := range page.Sessions {
		ids = append(ids, in.ID)
	}
	return ids, nil
}

// timeNew times fn on a new store from newTarget per op (made outside
// the timer), reporting CPU time beside wall time, since the machine may
// be shared, and entries per second.
func timeNew(b *testing.B, fn func(to *store.Store), newTarget func(b *testing.B) *store.Store) {
	b.ReportAllocs()
	var cpu time.Duration
	for range b.N {
		b.StopTimer()
		to := newTarget(b)
		c0 := cpuTime()
		b.StartTimer()
		fn(to)
		cpu += cpuTime() - c0
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(pushEntries*b.N)/b.Elapsed().Seconds(), "entries/s")
}

// benchPush runs the push benchmarks from from to stores newTarget
// makes.
func benchPush(b *testing.B, from *store.Store, newTarget func(b *testing.B) *store.Store) {
	ctx := context.Background()
	push := func(b *testing.B, to *store.Store, want store.PushStatus) {
		rep, err := store.Push(ctx, from, to, store.PushOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Results) != 1 || rep.Results[0].Status != want {
			b.Fatalf("Push = %+v; want one session %s", rep.Results, want)
		}
	}
	b.Run("new", func(b *testing.B) {
		timeNew(b, func(to *store.Store) { push(b, to, store.PushPushed) }, newTarget)
	})
	b.Run("up-to-date", func(b *testing.B) {
		to := newTarget(b)
		push(b, to, store.PushPushed)
		measure(b, func() { push(b, to, store.PushUpToDate) })
	})
}

// BenchmarkPushPostgres pushes the session of [BenchmarkPush] from SQLite
// to a new PostgreSQL database (a copy of the migrated template, made
// outside the timer), and again once it is there.
//
//	go test ./store -run '^$' -bench PushPostgres -count 5 -benchtime 1x
func BenchmarkPushPostgres(b *testing.B) {
	from := pushSourceDB(b)
	benchPush(b, from, func(b *testing.B) *store.Store { return openPostgresStore(b) })
}
