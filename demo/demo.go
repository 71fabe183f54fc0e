package demo

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sessiontree/sessiontree"
)

func user(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"role": "user", "content": text})
	return b
}

func assistant(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}},
		"provider": "anthropic", "model": "claude-sonnet-4-5",
		"usage": map[string]any{"input": 1200, "output": 180, "cacheRead": 800, "cacheWrite": 0,
			"totalTokens": 2180, "cost": map[string]any{"total": 0.0063}},
	})
	return b
}

// Build appends the sample conversation to s and returns the ids it
// labelled, by label.
func Build(ctx context.Context, s *sessiontree.Session) (map[string]string, error) {
	b := builder{ctx: ctx, s: s}
	b.do(func() (sessiontree.Entry, error) { return s.AppendModelChange(ctx, "anthropic", "claude-sonnet-4-5") })
	b.do(func() (sessiontree.Entry, error) { return s.AppendThinkingLevel(ctx, "medium") })
	ask := b.msg(user("Add a --json flag to the ls command."))
	b.msg(assistant("I will add the flag and print the rows with encoding/json."))
	first := b.msg(user("Use a table when stdout is a terminal."))
	b.msg(assistant("Done: a table on a terminal, JSON with --json."))
	b.do(func() (sessiontree.Entry, error) {
		return s.AppendCompaction(ctx, sessiontree.Compaction{
			Summary: "The user asked for a --json flag on ls; it is implemented with a table fallback.", FirstKeptEntryID: first, TokensBefore: 4200})
	})
	b.msg(user("Now add paging."))
	tried := b.msg(assistant("Paging with a cursor over the updated time."))
	b.do(func() (sessiontree.Entry, error) { return s.SetLabel(ctx, tried, "cursor paging") })
	if b.err == nil {
		_, b.err = s.MoveTo(ctx, ask, &sessiontree.BranchSummary{Summary: "Tried a table/JSON switch and cursor paging; going back to keep ls simple."})
	}
	b.msg(assistant("Starting over: only --json, no terminal detection."))
	b.do(func() (sessiontree.Entry, error) { return s.SetLabel(ctx, ask, "the request") })
	b.do(func() (sessiontree.Entry, error) { return s.SetName(ctx, "ls --json flag") })
	if b.err != nil {
		return nil, fmt.Errorf("demo: %w", b.err)
	}
	return map[string]string{"the request": ask, "cursor paging": tried}, nil
}

// builder keeps the first error so the script above reads straight.
type builder struct {
	ctx context.Context
	s   *sessiontree.Session
	err error
}

func (b *builder) do(f func() (sessiontree.Entry, error)) string {
	if b.err != nil {
		return ""
	}
	e, err := f()
	b.err = err
	return e.ID
}

func (b *builder) msg(m json.RawMessage) string {
	return b.do(func() (sessiontree.Entry, error) { return b.s.AppendMessage(b.ctx, m) })
}
