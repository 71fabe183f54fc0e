package sessiontree_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/pipkg"
	"github.com/sessiontree/sessiontree/jsonl"
)

// TestMessageConstructors: each constructor writes pi 1.6.0's shape,
// member for member as pi writes it (the lines of testdata/pi1), and
// refuses arguments or details that are not what pi's types hold.
func TestMessageConstructors(t *testing.T) {
	t.Parallel()
	at := time.UnixMilli(1795383044001)
	a, err := sessiontree.AssistantMessage(sessiontree.AssistantReply{
		API: "anthropic-messages", Provider: "anthropic", Model: "claude-sonnet-5", Text: "a <b> & c",
		ToolCalls: []sessiontree.ToolCall{{ID: "toolu_1", Name: "edit", Arguments: json.RawMessage(`{ "path": "README.md" }`)}},
		Usage: sessiontree.MessageUsage{Input: 610, Output: 265, CacheRead: 1862, CacheWrite: 162,
			Cost: sessiontree.UsageCost{Input: 0.00183, Output: 0.003975, CacheRead: 0.0005586, CacheWrite: 0.0006075, Total: 0.0069711}},
		At: at,
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := sessiontree.ToolResultMessage(sessiontree.ToolResult{ToolCallID: "toolu_1", ToolName: "edit", Text: "done", At: at})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ got, want string }{
		{string(sessiontree.UserMessage("hi \"there\"", at)), `{"role":"user","content":[{"type":"text","text":"hi \"there\""}],"timestamp":1795383044001}`},
		{string(a), `{"role":"assistant","content":[{"type":"text","text":"a <b> & c"},{"type":"toolCall","id":"toolu_1","name":"edit","arguments":{"path":"README.md"}}],` +
			`"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-5",` +
			`"usage":{"input":610,"output":265,"cacheRead":1862,"cacheWrite":162,"totalTokens":2899,"cost":{"input":0.00183,"output":0.003975,"cacheRead":0.0005586,"cacheWrite":0.0006075,"total":0.0069711}},` +
			`"stopReason":"toolUse","timestamp":1795383044001}`},
		{string(r), `{"role":"toolResult","toolCallId":"toolu_1","toolName":"edit","content":[{"type":"text","text":"done"}],"isError":false,"timestamp":1795383044001}`},
	} {
		if c.got != c.want {
			t.Errorf("message =\n%s\nwant\n%s", c.got, c.want)
		}
	}
	// Without a total, the four costs' sum; without tool calls, "stop".
	b, err := sessiontree.AssistantMessage(sessiontree.AssistantReply{Usage: sessiontree.MessageUsage{Cost: sessiontree.UsageCost{Input: 0.25, Output: 0.5}}, At: at})
	if want := `{"role":"assistant","content":[],"api":"","provider":"","model":"",` +
		`"usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0.25,"output":0.5,"cacheRead":0,"cacheWrite":0,"total":0.75}},` +
		`"stopReason":"stop","timestamp":1795383044001}`; err != nil || string(b) != want {
		t.Errorf("AssistantMessage(no text, no total) =\n%s, %v\nwant\n%s", b, err, want)
	}
	if _, err := sessiontree.AssistantMessage(sessiontree.AssistantReply{ToolCalls: []sessiontree.ToolCall{{ID: "x", Arguments: json.RawMessage(`[1]`)}}}); !errors.Is(err, sessiontree.ErrInvalidEntry) {
		t.Errorf("AssistantMessage with array arguments = %v; want ErrInvalidEntry", err)
	}
	if _, err := sessiontree.ToolResultMessage(sessiontree.ToolResult{Details: json.RawMessage(`{`)}); !errors.Is(err, sessiontree.ErrInvalidEntry) {
		t.Errorf("ToolResultMessage with details that are not JSON = %v; want ErrInvalidEntry", err)
	}
}

// TestMessageConstructorsReadByPi: a session written with the
// constructors (a prompt, a reply calling a tool, its result, a final
// reply) reads in pi 1.6.0's own SessionManager (node, its
// dist/core/session-manager.js) with the context, thinking level and
// model sessiontree builds.
func TestMessageConstructorsReadByPi(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs node")
	}
	node, pkgDir := pipkg.ForTest(t, "1.6.0")
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	st, err := jsonl.Create(ctx, path, sessiontree.SessionMeta{Cwd: "/w"}, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	defer s.Close()
	usage := sessiontree.MessageUsage{Input: 10, Output: 5, Cost: sessiontree.UsageCost{Input: 0.01, Output: 0.02}}
	call, err := sessiontree.AssistantMessage(sessiontree.AssistantReply{API: "openai-completions", Provider: "openai", Model: "gpt-6",
		Text: "Reading it.", ToolCalls: []sessiontree.ToolCall{{ID: "call_1", Name: "read", Arguments: json.RawMessage(`{"path":"go.mod"}`)}}, Usage: usage})
	if err != nil {
		t.Fatal(err)
	}
	result, err := sessiontree.ToolResultMessage(sessiontree.ToolResult{ToolCallID: "call_1", ToolName: "read", Text: "module x", Details: json.RawMessage(`{"lines":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	final, err := sessiontree.AssistantMessage(sessiontree.AssistantReply{API: "openai-completions", Provider: "openai", Model: "gpt-6", Text: "It is module x.", Usage: usage})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []json.RawMessage{sessiontree.UserMessage("Which module is this?", time.Time{}), call, result, final} {
		if _, err := s.AppendMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	c, err := s.Context(ctx, sessiontree.ContextOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ours, err := json.Marshal(map[string]any{"messages": c.Messages, "thinkingLevel": c.ThinkingLevel, "model": c.Model})
	if err != nil {
		t.Fatal(err)
	}
	script := `import { pathToFileURL } from "node:url";
const { SessionManager } = await import(pathToFileURL(process.argv[2]).href);
const c = SessionManager.open(process.argv[3]).buildSessionContext();
process.stdout.write(JSON.stringify({ messages: c.messages, thinkingLevel: c.thinkingLevel, model: c.model }));
`
	js := filepath.Join(t.TempDir(), "context.mjs")
	if err := os.WriteFile(js, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, js, pipkg.SessionManagerJS(pkgDir), path).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got, want any
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatalf("pi's context %q: %v", out, err)
	}
	_ = json.Unmarshal(ours, &got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("context (-pi +ours):\n%s", diff)
	}
	if n := len(c.Messages); n != 4 {
		t.Errorf("context has %d messages; want 4", n)
	}
}
