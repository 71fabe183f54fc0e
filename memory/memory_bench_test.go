package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/memory"
)

// Benchmarks of the memory backend's hot paths: append, batch append,
// path reads and moving the leaf. The JSONL backend keeps its index in
// this backend, so these are its in-memory costs too.
//
//	go test ./memory -run '^$' -bench . -count 10 | benchstat -

var benchDrafts = []sessiontree.Draft{
	{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":{"role":"user","content":"Can you make the session list faster? It reads every file on startup.","timestamp":1767603601234}}`)},
	{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":{"role":"assistant","content":[{"type":"text","text":"I'll add an index on updated_at."},{"type":"toolCall","id":"toolu_0123456789ab","name":"read","arguments":{"path":"/home/dev/project/store.go"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":2141,"output":606,"cacheRead":21000,"cacheWrite":100,"totalTokens":23847,"cost":{"input":0.006423,"output":0.00909,"cacheRead":0.0063,"cacheWrite":0.000375,"total":0.022188}},"stopReason":"toolUse","timestamp":1767603604567}}`)},
	{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":{"role":"toolResult","toolCallId":"toolu_0123456789ab","toolName":"read","content":[{"type":"text","text":"package store\n\nfunc (s *Store) List() {}"}],"isError":false,"timestamp":1767603605000}}`)},
}

const benchTS = "2026-01-05T09:00:01.234Z"

// benchEntries builds a linear session of n entries with ids e00000001…
func benchEntries(tb testing.TB, n int) []sessiontree.Entry {
	tb.Helper()
	out := make([]sessiontree.Entry, n)
	parent := ""
	for i := range out {
		id := fmt.Sprintf("e%08d", i+1)
		e, err := sessiontree.BuildEntry(benchDrafts[i%len(benchDrafts)], id, parent, benchTS)
		if err != nil {
			tb.Fatal(err)
		}
		out[i], parent = e, id
	}
	return out
}

func newSession(tb testing.TB, entries []sessiontree.Entry) *memory.Storage {
	tb.Helper()
	st, err := memory.New(sessiontree.SessionMeta{Cwd: "/home/dev/project"}, memory.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	if err := st.AppendBatch(context.Background(), entries); err != nil {
		tb.Fatal(err)
	}
	return st
}

// BenchmarkAppend appends one entry (id made, entry built and indexed).
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	st := newSession(b, nil)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		d := benchDrafts[i%len(benchDrafts)]
		d.Timestamp = benchTS
		if _, err := st.Append(ctx, d, sessiontree.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkAppendBatch imports 1,000 entries into a fresh session per
// operation: the per-entry cost of loading a file into the index.
func BenchmarkAppendBatch(b *testing.B) {
	ctx := context.Background()
	entries := benchEntries(b, 1000)
	b.ReportAllocs()
	for b.Loop() {
		st, err := memory.New(sessiontree.SessionMeta{ID: "s"}, memory.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := st.AppendBatch(ctx, entries); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(entries)), "ns/entry")
}

// BenchmarkPath reads the active path of a linear session.
func BenchmarkPath(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1000, 10_000} {
		entries := benchEntries(b, n)
		st := newSession(b, entries)
		leaf := entries[n-1].ID
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := st.Path(ctx, leaf)
				if err != nil || len(p) != n {
					b.Fatalf("Path = %d entries, %v; want %d", len(p), err, n)
				}
			}
		})
	}
}

// BenchmarkSetLeaf moves the leaf back and forth between two entries.
func BenchmarkSetLeaf(b *testing.B) {
	ctx := context.Background()
	entries := benchEntries(b, 1000)
	st := newSession(b, entries)
	targets := []string{entries[499].ID, entries[999].ID}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.SetLeaf(ctx, targets[i%2], sessiontree.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
