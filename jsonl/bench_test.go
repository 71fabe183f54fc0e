package jsonl_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
)

// genSession writes a pi-like session file of n entries to path: user,
// assistant (text or tool call, with usage) and tool-result messages with
// texts of random length, and now and then a thinking-level or model
// change, a label or a custom entry. It is one linear branch, so the
// context spans every entry: the worst case for building it. 100,000
// entries make about 37 MB, near the 35 MB pi's loader was measured on.
func genSession(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	fmt.Fprintf(w, `{"type":"session","version":3,"id":"0190a000-0000-7000-8000-00000000beef","timestamp":"%s","cwd":"/home/dev/project"}`+"\n", sessiontree.FormatTime(start))
	words := strings.Fields("the a to of and in is it for on with as this that file function test error value return go read write open close build run check")
	text := func(min, max int) string {
		var sb strings.Builder
		for want := min + rng.IntN(max-min); sb.Len() < want; {
			sb.WriteString(words[rng.IntN(len(words))])
			sb.WriteByte(' ')
		}
		return strings.TrimSpace(sb.String())
	}
	parent := "null"
	for i := range n {
		id := fmt.Sprintf("%08x", uint32(i)*2654435761)
		ts := sessiontree.FormatTime(start.Add(time.Duration(i) * 1500 * time.Millisecond))
		ms := start.Add(time.Duration(i) * 1500 * time.Millisecond).UnixMilli()
		fmt.Fprintf(w, `{"type":%q,"id":%q,"parentId":%s,"timestamp":%q,`, kindOf(i, rng), id, parent, ts)
		switch kindOf(i, rng) {
		case "thinking_level_change":
			fmt.Fprintf(w, `"thinkingLevel":%q}`, []string{"off", "low", "medium", "high"}[rng.IntN(4)])
		case "model_change":
			fmt.Fprintf(w, `"provider":"anthropic","modelId":"claude-sonnet-4-%d"}`, rng.IntN(9))
		case "label":
			fmt.Fprintf(w, `"targetId":%s,"label":"checkpoint %d"}`, parent, i)
		case "custom":
			fmt.Fprintf(w, `"customType":"todo","data":{"items":[%q,%q]}}`, text(10, 40), text(10, 40))
		default:
			switch i % 3 {
			case 0:
				fmt.Fprintf(w, `"message":{"role":"user","content":[{"type":"text","text":%q}],"timestamp":%d}}`, text(5, 40), ms)
			case 1:
				fmt.Fprintf(w, `"message":{"role":"assistant","content":[{"type":"text","text":%q},{"type":"toolCall","id":"toolu_%08x","name":"bash","arguments":{"command":%q}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4","usage":{"input":%d,"output":%d,"cacheRead":%d,"cacheWrite":%d,"totalTokens":%d,"cost":{"input":0.003,"output":0.015,"cacheRead":0.0003,"cacheWrite":0.00375,"total":0.02205}},"stopReason":"toolUse","timestamp":%d}}`,
					text(5, 40), i, text(5, 20), 1000+rng.IntN(5000), 10+rng.IntN(900), rng.IntN(20000), rng.IntN(3000), 30000, ms)
			default:
				fmt.Fprintf(w, `"message":{"role":"toolResult","toolCallId":"toolu_%08x","toolName":"bash","content":[{"type":"text","text":%q}],"isError":false,"timestamp":%d}}`, i-1, text(10, 90), ms)
			}
		}
		w.WriteByte('\n')
		parent = `"` + id + `"`
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// kindOf picks the entry type for entry i: mostly messages.
func kindOf(i int, _ *rand.Rand) string {
	switch {
	case i == 0 || i%3 != 2:
	case i%997 == 2:
		return "model_change"
	case i%499 == 2:
		return "thinking_level_change"
	case i%211 == 2:
		return "label"
	case i%101 == 2:
		return "custom"
	}
	return "message"
}

func benchFile(b *testing.B, n int) (string, int64) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.jsonl")
	genSession(b, path, n)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return path, fi.Size()
}

// BenchmarkOpenContext opens a 100,000-entry, ~37 MB file and builds the
// context at its leaf: what resuming a session costs. Target: well under
// 0.43 s (a third of pi's 1.3 s).
func BenchmarkOpenContext(b *testing.B) {
	ctx := context.Background()
	path, size := benchFile(b, 100_000)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		st, err := jsonl.Open(ctx, path, jsonl.Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		c, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).Context(ctx, sessiontree.ContextOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(c.Messages) < 90_000 {
			b.Fatalf("context has %d messages", len(c.Messages))
		}
		st.Close()
	}
}

// BenchmarkRead streams the same file through the reader alone.
func BenchmarkRead(b *testing.B) {
	ctx := context.Background()
	path, size := benchFile(b, 100_000)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, err := range jsonl.ReadFile(ctx, path, jsonl.ReadOptions{}) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 100_001 {
			b.Fatalf("read %d records", n)
		}
	}
}

func benchAppend(b *testing.B, opts jsonl.Options, viaSession bool) {
	ctx := context.Background()
	st, err := jsonl.Create(ctx, filepath.Join(b.TempDir(), "append.jsonl"), sessiontree.SessionMeta{Cwd: "/p"}, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	msg := json.RawMessage(`{"role":"user","content":[{"type":"text","text":"` + strings.Repeat("lorem ipsum ", 25) + `"}],"timestamp":1748768401000}`)
	d := sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":` + string(msg) + `}`)}
	b.ReportAllocs()
	for b.Loop() {
		if viaSession {
			_, err = s.AppendMessage(ctx, msg)
		} else {
			d.Timestamp = sessiontree.FormatTime(time.Now())
			_, err = st.Append(ctx, d, sessiontree.AppendOptions{})
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkAppend appends ~350-byte messages to the storage without
// sync: one line, one write each. Target: at least 100,000 entries/s.
func BenchmarkAppend(b *testing.B) { benchAppend(b, jsonl.Options{}, false) }

// BenchmarkSessionAppend appends the same through Session.AppendMessage,
// which also marshals the fields.
func BenchmarkSessionAppend(b *testing.B) { benchAppend(b, jsonl.Options{}, true) }

// BenchmarkAppendSync appends with an fsync after each entry.
func BenchmarkAppendSync(b *testing.B) { benchAppend(b, jsonl.Options{Sync: true}, false) }
