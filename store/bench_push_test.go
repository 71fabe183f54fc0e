package store_test

import (
	"context"
	"testing"

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
		b.ReportAllocs()
		for range b.N {
			b.StopTimer()
			to := newTarget(b)
			b.StartTimer()
			push(b, to, store.PushPushed)
		}
		b.ReportMetric(float64(pushEntries*b.N)/b.Elapsed().Seconds(), "entries/s")
	})
	b.Run("up-to-date", func(b *testing.B) {
		to := newTarget(b)
		push(b, to, store.PushPushed)
		measure(b, func() { push(b, to, store.PushUpToDate) })
	})
}
