package storetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// Harness tells the suite how to drive one backend.
type Harness struct {
	// New returns a fresh, empty, writable session. The harness registers
	// its own cleanup (close, integrity checks).
	New func(t testing.TB) sessiontree.Storage
	// Reopen closes s and opens the same session again, as a process would
	// after a restart. A backend that keeps nothing beyond the process
	// returns s itself.
	Reopen func(t testing.TB, s sessiontree.Storage) sessiontree.Storage
	// LoadUnchecked stores entries exactly as given, bypassing the
	// backend's validation (as a damaged file or database would hold them)
	// and opens them. A backend that detects the damage when opening
	// returns that error, which must match sessiontree.ErrCorrupt.
	LoadUnchecked func(t testing.TB, meta sessiontree.SessionMeta, entries []sessiontree.Entry) (sessiontree.Storage, error)
	// Parallel runs the suite's cases in parallel (t.Parallel): for a
	// backend whose New, Reopen and LoadUnchecked may be called at once
	// and whose tests mostly wait (a server's round trips).
	Parallel bool
}

// Run runs the conformance suite on the backend h drives.
func Run(t *testing.T, h Harness) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if h.Parallel {
				t.Parallel()
			}
			c.run(t, h)
		})
	}
}

type testCase struct {
	name string
	run  func(t *testing.T, h Harness)
}

var cases []testCase

func register(name string, run func(t *testing.T, h Harness)) bool {
	cases = append(cases, testCase{name, run})
	return true
}

// fixture bundles a session and the test's context for the helpers.
type fixture struct {
	t   testing.TB
	ctx context.Context
	h   Harness
	st  sessiontree.Storage
	s   *sessiontree.Session
}

func newFixture(t testing.TB, h Harness) *fixture {
	t.Helper()
	st := h.New(t)
	return &fixture{t: t, ctx: context.Background(), h: h, st: st, s: sessiontree.NewSession(st, sessiontree.SessionOptions{})}
}

func (f *fixture) reopen() {
	f.t.Helper()
	f.st = f.h.Reopen(f.t, f.st)
	f.s = sessiontree.NewSession(f.st, sessiontree.SessionOptions{})
}

// ok fails the test on err and returns e.
func (f *fixture) ok(e sessiontree.Entry, err error) sessiontree.Entry {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
	return e
}

// path fails the test on err and returns the ids of the path.
func (f *fixture) path(p []sessiontree.Entry, err error) []string {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
	return ids(p)
}

// user appends a user message with the given text and returns its id.
func (f *fixture) user(text string) string {
	f.t.Helper()
	return f.ok(f.s.AppendMessage(f.ctx, userMessage(text))).ID
}

// assistant appends an assistant message with the given text.
func (f *fixture) assistant(text string) string {
	f.t.Helper()
	return f.ok(f.s.AppendMessage(f.ctx, assistantMessage(text, "anthropic", "claude-sonnet-4"))).ID
}

func userMessage(text string) json.RawMessage {
	return mustJSON(map[string]any{"role": "user", "content": text, "timestamp": 1748768401000})
}

func assistantMessage(text, provider, model string) json.RawMessage {
	return mustJSON(map[string]any{
		"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}},
		"provider": provider, "model": model,
		"usage": map[string]any{"input": 100, "output": 20, "cacheRead": 5, "cacheWrite": 7,
			"totalTokens": 132, "cost": map[string]any{"total": 0.25}},
	})
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func (f *fixture) context(opts sessiontree.ContextOptions) sessiontree.Context {
	f.t.Helper()
	c, err := f.s.Context(f.ctx, opts)
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// texts returns, for each context message, its role and text: the content
// string, the first text block, or a summary.
func texts(c sessiontree.Context) []string {
	out := make([]string, 0, len(c.Messages))
	for _, m := range c.Messages {
		out = append(out, messageText(m))
	}
	return out
}

func messageText(m json.RawMessage) string {
	var v struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Summary string          `json:"summary"`
	}
	if err := json.Unmarshal(m, &v); err != nil {
		return "!" + err.Error()
	}
	if v.Summary != "" {
		return v.Role + ":" + v.Summary
	}
	var s string
	if json.Unmarshal(v.Content, &s) == nil {
		return v.Role + ":" + s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(v.Content, &blocks) == nil && len(blocks) > 0 {
		return v.Role + ":" + blocks[0].Text
	}
	return v.Role + ":"
}

func ids(entries []sessiontree.Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.ID
	}
	return out
}
