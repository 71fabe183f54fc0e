package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// The sessions the browser test shows: one that looks like a real coding
// session, and one whose every text is an attack on the page.

// Hostile text: each would run script if the page inserted it as HTML or
// made a link of it. The page must show each exactly, as text.
const (
	hostileName    = `<script>window.__pwned = "name"</script>`
	hostileMessage = `<img src=x onerror="window.__pwned = 'message'"> and <script>window.__pwned = "script"</script>`
	hostileLabel   = `javascript:window.__pwned = "label"`
	hostileReply   = `<a href="javascript:window.__pwned = 'link'">click</a>`
)

// sessionBuilder appends entries, keeping the first error so that the
// scripts below read straight.
type sessionBuilder struct {
	t   testing.TB
	ctx context.Context
	s   *sessiontree.Session
}

func newSession(t testing.TB, st *store.Store, cwd string) *sessionBuilder {
	t.Helper()
	ctx := context.Background()
	es, err := st.Create(ctx, store.CreateOptions{Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = es.Close() })
	return &sessionBuilder{t: t, ctx: ctx, s: sessiontree.NewSession(es, sessiontree.SessionOptions{})}
}

func (b *sessionBuilder) id() string {
	b.t.Helper()
	m, err := b.s.Meta(b.ctx)
	if err != nil {
		b.t.Fatal(err)
	}
	return m.ID
}

func (b *sessionBuilder) check(e sessiontree.Entry, err error) string {
	b.t.Helper()
	if err != nil {
		b.t.Fatal(err)
	}
	return e.ID
}

func (b *sessionBuilder) message(m map[string]any) string {
	b.t.Helper()
	raw, err := json.Marshal(m)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.check(b.s.AppendMessage(b.ctx, raw))
}

func (b *sessionBuilder) user(text string) string {
	return b.message(map[string]any{"role": "user", "content": text})
}

func usage(in, out, cached int, cost float64) map[string]any {
	return map[string]any{"input": in, "output": out, "cacheRead": cached, "cacheWrite": 0,
		"totalTokens": in + out + cached, "cost": map[string]any{"total": cost}}
}

// assistant is a reply: text, optional thinking, optional tool calls
// (name, arguments).
func (b *sessionBuilder) assistant(model, thinking, text string, calls ...any) string {
	var content []any
	if thinking != "" {
		content = append(content, map[string]any{"type": "thinking", "thinking": thinking})
	}
	if text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	for i := 0; i+1 < len(calls); i += 2 {
		content = append(content, map[string]any{"type": "toolCall", "id": fmt.Sprintf("call_%d", i),
			"name": calls[i], "arguments": calls[i+1]})
	}
	provider := "anthropic"
	if model == "gpt-5" {
		provider = "openai"
	}
	return b.message(map[string]any{"role": "assistant", "content": content, "provider": provider,
		"model": model, "stopReason": "stop", "usage": usage(2400, 310, 9100, 0.0121)})
}

func (b *sessionBuilder) toolResult(name, output string) string {
	return b.message(map[string]any{"role": "toolResult", "toolCallId": "call_0", "toolName": name,
		"content": []any{map[string]any{"type": "text", "text": output}}, "isError": false})
}

// realSession is a coding session as pi writes them: a model and thinking
// level, a run of reads and edits long enough to fold, a compaction, a
// branch left with a summary, labels, two models, a name. It returns the
// session id and the ids the test clicks on, by role.
func realSession(t testing.TB, st *store.Store) (string, map[string]string) {
	t.Helper()
	b := newSession(t, st, "/home/ana/src/lockd")
	ids := map[string]string{}
	b.check(b.s.AppendModelChange(b.ctx, "anthropic", "claude-sonnet-4-5"))
	b.check(b.s.AppendThinkingLevel(b.ctx, "medium"))
	ids["ask"] = b.user("TestLockRelease is flaky on CI: about one run in twenty fails with \"lock still held\". Find out why and fix it.")
	b.check(b.s.SetLabel(b.ctx, ids["ask"], "the bug"))
	b.assistant("claude-sonnet-4-5", "The failure says the lock is still held after Release returns. Likely the release is asynchronous or the test reads too early.",
		"Let me look at the lock and its test.", "read", map[string]any{"path": "lock/lock.go"})
	b.toolResult("read", "package lock\n\n// Release drops the lock. It returns before the file is unlocked.\nfunc (l *Lock) Release() { go l.unlock() }")
	b.assistant("claude-sonnet-4-5", "", "", "read", map[string]any{"path": "lock/lock_test.go"})
	b.toolResult("read", "func TestLockRelease(t *testing.T) {\n\tl := mustLock(t)\n\tl.Release()\n\tif held(l.path) { t.Fatal(\"lock still held\") }\n}")
	b.assistant("claude-sonnet-4-5", "", "", "bash", map[string]any{"command": "go test -count=200 -run TestLockRelease ./lock"})
	b.toolResult("bash", "--- FAIL: TestLockRelease (0.00s)\n    lock_test.go:12: lock still held\nFAIL\nok: 191 passed, 9 failed")
	ids["cause"] = b.assistant("claude-sonnet-4-5", "Release starts a goroutine and returns at once: the test races with it.",
		"Found it: `Release` unlocks in a goroutine, so it returns before the file is unlocked. The test checks too early about 5% of the time.")
	b.check(b.s.SetLabel(b.ctx, ids["cause"], "root cause"))
	ids["try"] = b.user("Could the test just wait a bit before checking?")
	b.assistant("claude-sonnet-4-5", "", "A sleep would hide the race, not fix it; I will add one to show the effect.",
		"edit", map[string]any{"path": "lock/lock_test.go", "old": "l.Release()", "new": "l.Release()\n\ttime.Sleep(10 * time.Millisecond)"})
	b.toolResult("edit", "edited lock/lock_test.go")
	ids["sleep"] = b.assistant("claude-sonnet-4-5", "", "With the sleep 200 of 200 runs pass, but the race is still there on a loaded machine.")
	b.check(b.s.SetLabel(b.ctx, ids["sleep"], "sleep workaround"))
	// Back to the cause: the sleep branch is summarized and left.
	if _, err := b.s.MoveTo(b.ctx, ids["cause"], &sessiontree.BranchSummary{
		Summary: "Tried a 10 ms sleep in the test: it passes but only hides the race in Release."}); err != nil {
		t.Fatal(err)
	}
	ids["fix"] = b.message(map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "No sleeps. Make Release synchronous and keep the API. Here is the CI failure:"},
		map[string]any{"type": "image", "mimeType": "image/png", "data": tinyPNG},
	}})
	b.assistant("claude-sonnet-4-5", "Release must unlock before returning; callers that wanted it in the background can use go l.Release().",
		"", "edit", map[string]any{"path": "lock/lock.go", "old": "go l.unlock()", "new": "l.unlock()"})
	b.toolResult("edit", "edited lock/lock.go")
	b.assistant("claude-sonnet-4-5", "", "", "bash", map[string]any{"command": "go test -race -count=500 ./lock"})
	b.toolResult("bash", "ok  \tlockd/lock\t4.112s")
	b.check(b.s.AppendCompaction(b.ctx, sessiontree.Compaction{
		Summary:          "TestLockRelease was flaky because Release unlocked in a goroutine. Release is now synchronous; 500 runs under -race pass.",
		FirstKeptEntryID: ids["fix"], TokensBefore: 48200}))
	b.check(b.s.AppendModelChange(b.ctx, "openai", "gpt-5"))
	b.user("Review the change for callers that relied on the old behaviour.")
	b.assistant("gpt-5", "", "", "grep", map[string]any{"pattern": "Release()", "path": "."})
	b.toolResult("grep", "cmd/lockd/main.go:88:\tdefer l.Release()\nserver/handler.go:41:\tl.Release()")
	ids["review"] = b.assistant("gpt-5", "", "Both callers are fine with a synchronous Release: one defers it, the other is on a request's end. No change needed.")
	b.check(b.s.SetName(b.ctx, "flaky TestLockRelease"))
	return b.id(), ids
}

// tinyPNG is a 1×1 PNG, base64.
const tinyPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

// hostileSession is a session whose name, messages and label try to run
// script in the page. It returns the session id and the labelled entry.
func hostileSession(t testing.TB, st *store.Store) (string, string) {
	t.Helper()
	b := newSession(t, st, "/tmp/<script>alert(1)</script>")
	ask := b.message(map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": hostileMessage},
		// An SVG can hold script: the page must not show it as an image.
		map[string]any{"type": "image", "mimeType": "image/svg+xml",
			"data": base64.StdEncoding.EncodeToString([]byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="window.__pwned='svg'"/>`))},
		map[string]any{"type": "image", "mimeType": "image/png", "data": `x" onerror="window.__pwned='data'`},
	}})
	b.assistant("claude-sonnet-4-5", "<script>window.__pwned = 'thinking'</script>", hostileReply,
		"bash", map[string]any{"command": "echo '<img src=x onerror=alert(1)>'"})
	b.check(b.s.SetLabel(b.ctx, ask, hostileLabel))
	b.check(b.s.SetName(b.ctx, hostileName))
	return b.id(), ask
}
