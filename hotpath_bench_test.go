package sessiontree_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// Benchmarks of the hot paths every backend shares: decoding an entry read
// from a file or a row, building one for an append, projecting a path into
// the model's context and walking a path. Compare runs with benchstat:
//
//	go test -run '^$' -bench . -count 10 > new.txt && benchstat old.txt new.txt
//
// The whole-backend picture, against the physical floor and pi, is the
// bench program's: go run ./bench.

// benchEntries are realistic entries of three sizes, as pi writes them.
var benchEntries = map[string]string{
	"user":      `{"type":"message","id":"a1b2c3d4","parentId":"0f0e0d0c","timestamp":"2026-01-05T09:00:01.234Z","message":{"role":"user","content":"Can you make the session list faster? It reads every file on startup — 日本語 too.","timestamp":1767603601234}}`,
	"assistant": `{"type":"message","id":"b2c3d4e5","parentId":"a1b2c3d4","timestamp":"2026-01-05T09:00:04.567Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"The list reads headers; an index would avoid that."},{"type":"text","text":"I'll add an index on updated_at and read the first page from it."},{"type":"toolCall","id":"toolu_0123456789ab","name":"read","arguments":{"path":"/home/dev/project/internal/store/store.go"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":2141,"output":606,"cacheRead":21000,"cacheWrite":100,"totalTokens":23847,"cost":{"input":0.006423,"output":0.00909,"cacheRead":0.0063,"cacheWrite":0.000375,"total":0.022188}},"stopReason":"toolUse","timestamp":1767603604567}}`,
	"toolResult-100KB": `{"type":"message","id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":"2026-01-05T09:00:05.000Z","message":{"role":"toolResult","toolCallId":"toolu_0123456789ab","toolName":"read","content":[{"type":"text","text":"` +
		strings.Repeat(`package store\n\nfunc (s *Store) List(ctx context.Context) ([]Session, error) {\n\treturn s.q.list(ctx, \"\\\"quoted\\\"\")\n}\n`, 1000) +
		`"}],"isError":false,"timestamp":1767603605000}}`,
}

func BenchmarkDecodeEntry(b *testing.B) {
	for _, name := range []string{"user", "assistant", "toolResult-100KB"} {
		raw := []byte(benchEntries[name])
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := sessiontree.DecodeEntry(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// draftOf turns an entry back into the draft an append would get.
func draftOf(tb testing.TB, raw string) sessiontree.Draft {
	tb.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		tb.Fatal(err)
	}
	msg := m["message"]
	f, err := sessiontree.Fields("message", msg)
	if err != nil {
		tb.Fatal(err)
	}
	return sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: f}
}

func BenchmarkBuildEntry(b *testing.B) {
	for _, name := range []string{"user", "assistant", "toolResult-100KB"} {
		d := draftOf(b, benchEntries[name])
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(d.Fields)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := sessiontree.BuildEntry(d, "a1b2c3d4", "0f0e0d0c", "2026-01-05T09:00:01.234Z"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchPath makes a linear path of n entries cycling user, assistant and a
// small tool result, ids e00000001…, root first.
func benchPath(tb testing.TB, n int) []sessiontree.Entry {
	tb.Helper()
	kinds := []sessiontree.Draft{
		draftOf(tb, benchEntries["user"]),
		draftOf(tb, benchEntries["assistant"]),
		{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":{"role":"toolResult","toolCallId":"toolu_0123456789ab","toolName":"read","content":[{"type":"text","text":"package store"}],"isError":false,"timestamp":1767603605000}}`)},
	}
	path := make([]sessiontree.Entry, n)
	parent := ""
	for i := range path {
		id := fmt.Sprintf("e%08d", i+1)
		e, err := sessiontree.BuildEntry(kinds[i%len(kinds)], id, parent, "2026-01-05T09:00:01.234Z")
		if err != nil {
			tb.Fatal(err)
		}
		e.Seq = int64(i + 1)
		path[i], parent = e, id
	}
	return path
}

// BenchmarkBuildContext projects an active path into the model's context:
// the CPU part of every resume, whatever the backend.
func BenchmarkBuildContext(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{500, 10_000} {
		path := benchPath(b, n)
		st := sessiontree.DefaultState()
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c, err := sessiontree.BuildContext(ctx, path, st, sessiontree.ContextOptions{})
				if err != nil || len(c.Messages) != n {
					b.Fatalf("BuildContext = %d messages, %v; want %d", len(c.Messages), err, n)
				}
			}
		})
	}
}

// BenchmarkStateWalk replays the state over a full path, what a backend
// without a state index pays on every context.
func BenchmarkStateWalk(b *testing.B) {
	path := benchPath(b, 10_000)
	b.ReportAllocs()
	for b.Loop() {
		st := sessiontree.DefaultState()
		for _, e := range path {
			st.Apply(e)
		}
	}
}

// BenchmarkWalkPath walks 10,000 parent links through an in-memory index,
// the path read of the memory and JSONL backends.
func BenchmarkWalkPath(b *testing.B) {
	ctx := context.Background()
	path := benchPath(b, 10_000)
	byID := make(map[string]sessiontree.Entry, len(path))
	for _, e := range path {
		byID[e.ID] = e
	}
	get := func(id string) (sessiontree.Entry, bool) { e, ok := byID[id]; return e, ok }
	leaf := path[len(path)-1].ID
	b.ReportAllocs()
	for b.Loop() {
		p, err := sessiontree.WalkPath(ctx, leaf, false, len(path), get)
		if err != nil || len(p) != len(path) {
			b.Fatalf("WalkPath = %d entries, %v", len(p), err)
		}
	}
}
