package store_test

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"
)

// piGen writes session files shaped like the ones pi writes for a coding
// session: a user prompt, then assistant turns with thinking, text and
// tool calls, each call answered by a tool result (file contents, command
// output), now and then a model or thinking-level change. Text is drawn
// from a vocabulary of English words, code identifiers, paths and some
// Japanese, so that searches have realistic hit rates. It is
// deterministic for a seed.
type piGen struct {
	rng   *rand.Rand
	clock time.Time
	n     int // ids made
}

func newPiGen(seed uint64) *piGen {
	return &piGen{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		clock: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)}
}

var genWords = strings.Fields(`the a to of and in is it that for on with as this be are was by not or at from
have an but can we you if will all they one there use which do so what when would should could into
function return error value session entry parent leaf branch context model tool file test build run
index query table schema migration import export search cursor page list delete fork label name
compaction summary thinking message assistant user result output command path directory config
option flag handler request response server client cache buffer stream reader writer lock mutex
goroutine channel select interface struct method pointer slice map string integer float boolean
commit rollback transaction trigger view column row key primary foreign constraint unique
parse decode encode marshal unmarshal validate check verify assert expect want got fail pass
refactor rename extract inline move split merge rebase cherry pick stash diff patch apply
performance latency throughput benchmark profile allocation memory garbage collector heap stack
deploy release version changelog dependency module package vendor upgrade downgrade pin lockfile
docker container kubernetes pod service ingress volume secret configmap namespace cluster node
sqlite postgres mysql redis kafka queue topic partition offset consumer producer broker replica
fix bug issue regression crash panic deadlock race timeout retry backoff jitter circuit breaker
feature flag experiment rollout canary metric alert dashboard trace span log level warning debug
日本語 テスト 検索 実装 設計 データベース 関数 変数 エラー 修正 確認 東京 会議 資料 翻訳`)

var genIdents = strings.Fields(`parentId firstKeptEntryId AppendBatch OpenSession NewEntryID BuildTree
ctx.Done() err != nil fmt.Errorf json.RawMessage sqlx.Tx http.Handler io.Reader sync.Mutex
store.go engine/batch.go jsonl/reader.go cmd/sessiontree/main.go schema.sql go.mod README.md
internal/jsonx/jsonx.go migrate/migrations/0001_init.sql view/tree.go bench/gen.go`)

// rareWords appear in about one entry in 10,000: what a search for a
// specific thing finds.
var rareWords = strings.Fields(`zanzibar quixotic obsidian 量子計算 marmalade xylophone`)

func (g *piGen) text(words int) string {
	var b strings.Builder
	for i := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch r := g.rng.IntN(1000); {
		case r < 1 && g.rng.IntN(10) == 0:
			b.WriteString(rareWords[g.rng.IntN(len(rareWords))])
		case r < 80:
			b.WriteString(genIdents[g.rng.IntN(len(genIdents))])
		default:
			b.WriteString(genWords[g.rng.IntN(len(genWords))])
		}
		if g.rng.IntN(12) == 0 {
			b.WriteString(".\n")
		}
	}
	return b.String()
}

func (g *piGen) id() string {
	g.n++
	var b [4]byte
	v := g.rng.Uint32()
	b[0], b[1], b[2], b[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	return hex.EncodeToString(b[:])
}

func (g *piGen) ts() string {
	g.clock = g.clock.Add(time.Duration(200+g.rng.IntN(5000)) * time.Millisecond)
	return g.clock.Format("2006-01-02T15:04:05.000Z")
}

func (g *piGen) sessionID() string {
	b := make([]byte, 16)
	for i := range b {
		b[i] = byte(g.rng.UintN(256))
	}
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

type genMsg map[string]any

// entries appends n entries of one conversation to w (after a header),
// returning the ids in order.
func (g *piGen) writeSession(w *bufio.Writer, cwd string, n int, scale float64) error {
	header := map[string]any{"type": "session", "version": 3, "id": g.sessionID(), "timestamp": g.ts(), "cwd": cwd}
	if err := writeJSONLine(w, orderedHeader(header)); err != nil {
		return err
	}
	parent := ""
	emit := func(typ string, fields ...any) error {
		id := g.id()
		var b strings.Builder
		b.WriteString(`{"type":`)
		b.Write(mustJSON(typ))
		b.WriteString(`,"id":`)
		b.Write(mustJSON(id))
		b.WriteString(`,"parentId":`)
		if parent == "" {
			b.WriteString("null")
		} else {
			b.Write(mustJSON(parent))
		}
		b.WriteString(`,"timestamp":`)
		b.Write(mustJSON(g.ts()))
		for i := 0; i < len(fields); i += 2 {
			b.WriteString(`,`)
			b.Write(mustJSON(fields[i]))
			b.WriteString(`:`)
			b.Write(mustJSON(fields[i+1]))
		}
		b.WriteString("}\n")
		parent = id
		_, err := w.WriteString(b.String())
		return err
	}
	words := func(mean int) int { return 1 + int(float64(mean)*scale*(0.5+g.rng.Float64())) }
	now := func() int64 { return g.clock.UnixMilli() }
	usage := func() genMsg {
		in, out := 1000+g.rng.IntN(20000), 50+g.rng.IntN(2000)
		return genMsg{"input": in, "output": out, "cacheRead": g.rng.IntN(30000), "cacheWrite": g.rng.IntN(500),
			"totalTokens": in + out, "cost": genMsg{"input": float64(in) * 3e-6, "output": float64(out) * 15e-6,
				"cacheRead": 0, "cacheWrite": 0, "total": float64(in)*3e-6 + float64(out)*15e-6}}
	}
	written := 0
	if err := emit("model_change", "provider", "anthropic", "modelId", "claude-sonnet-4"); err != nil {
		return err
	}
	written++
	for written < n {
		if err := emit("message", "message", genMsg{"role": "user", "content": g.text(words(40)), "timestamp": now()}); err != nil {
			return err
		}
		written++
		for turn := 0; turn < 1+g.rng.IntN(4) && written < n; turn++ {
			calls := g.rng.IntN(3)
			content := []any{
				genMsg{"type": "thinking", "thinking": g.text(words(120)), "thinkingSignature": "sig"},
				genMsg{"type": "text", "text": g.text(words(60))},
			}
			var ids []string
			for range calls {
				cid := "toolu_" + g.id() + g.id()
				ids = append(ids, cid)
				content = append(content, genMsg{"type": "toolCall", "id": cid, "name": "bash",
					"arguments": genMsg{"command": "grep -rn " + genIdents[g.rng.IntN(len(genIdents))] + " .", "timeout": 120}})
			}
			stop := "stop"
			if calls > 0 {
				stop = "toolUse"
			}
			if err := emit("message", "message", genMsg{"role": "assistant", "content": content, "api": "anthropic-messages",
				"provider": "anthropic", "model": "claude-sonnet-4", "usage": usage(), "stopReason": stop, "timestamp": now()}); err != nil {
				return err
			}
			written++
			for _, cid := range ids {
				if written >= n {
					break
				}
				if err := emit("message", "message", genMsg{"role": "toolResult", "toolCallId": cid, "toolName": "bash",
					"content": []any{genMsg{"type": "text", "text": g.text(words(250))}}, "isError": false, "timestamp": now()}); err != nil {
					return err
				}
				written++
			}
		}
		if g.rng.IntN(20) == 0 && written < n {
			if err := emit("thinking_level_change", "thinkingLevel", []string{"off", "low", "medium", "high"}[g.rng.IntN(4)]); err != nil {
				return err
			}
			written++
		}
	}
	return nil
}

// orderedHeader keeps pi's key order.
type orderedHeader map[string]any

func (h orderedHeader) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, `{"type":"session","version":3,"id":%s,"timestamp":%s,"cwd":%s}`,
		mustJSON(h["id"]), mustJSON(h["timestamp"]), mustJSON(h["cwd"])), nil
}

func writeJSONLine(w *bufio.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return err
	}
	return w.WriteByte('\n')
}

func mustJSON(v any) []byte {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return []byte(strings.TrimSuffix(b.String(), "\n"))
}

// writePiFile writes one generated session of n entries to path.
func writePiFile(tb testing.TB, g *piGen, path, cwd string, n int, scale float64) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := g.writeSession(w, cwd, n, scale); err != nil {
		tb.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}
