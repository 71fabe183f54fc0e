package view_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/view"
)

// linearLog is a log of n user messages in one chain.
func linearLog(b *testing.B, n int) []sessiontree.Entry {
	b.Helper()
	log := make([]sessiontree.Entry, n)
	parent := ""
	for i := range log {
		raw, _ := json.Marshal(map[string]any{"type": "message", "id": fmt.Sprintf("%08x", i+1), "parentId": nilIfEmpty(parent),
			"timestamp": "2026-03-01T10:00:00.000Z", "message": map[string]any{"role": "user", "content": "hi"}})
		e, err := sessiontree.DecodeEntry(raw)
		if err != nil {
			b.Fatal(err)
		}
		e.Seq = int64(i + 1)
		log[i] = e
		parent = e.ID
	}
	return log
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// BenchmarkGraph100k measures the graph of a 100,000-entry session: built
// from its log, extended by one entry, and laid out as rows.
func BenchmarkGraph100k(b *testing.B) {
	log := linearLog(b, 100_001)
	d := view.SessionData{Log: log[:100_000], Leaf: log[99_999].ID}
	g := view.NewGraph(d)
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			view.NewGraph(d)
		}
	})
	b.Run("extend", func(b *testing.B) {
		for b.Loop() {
			if _, ok := g.Extend(log[100_000:], nil, log[100_000].ID); !ok {
				b.Fatal("Extend gave up")
			}
		}
	})
	b.Run("rows", func(b *testing.B) {
		for b.Loop() {
			g.Rows(nil)
		}
	})
}
