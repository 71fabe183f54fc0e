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

// SessionID is the id of the session `sessiontree demo` creates. It is
// fixed, as the ids of [Build]'s entries are, so that the examples of
// the README and of the commands' --help, which name the sample session
// and its entries (0198f2a4, c04e9a55, d86f4b07), work as written on the
// session a user just made with the demo. They are the ids of the sample
// file view/testdata/demo.jsonl, which the commands' tests read.
const SessionID = "0198f2a4-5c1e-7d3a-9b2f-3e4d5c6b7a81"

// entryIDs are the ids of Build's entries, in the order it appends them:
// the sample file's ids of the same entries.
var entryIDs = []string{"3f9a0c12", "8b21d4e7", "c04e9a55", "17ad3b90", "e25c61f8", "5d8e0a3c", "a9f3172b",
	"2c6b8e04", "f1047d9a", "6e3a25c1", "4a1ce8d2", "d86f4b07", "09be5a63", "73c2e19f"}

// Build appends the sample conversation to st, its entries under the
// fixed ids of the sample file (so st must not hold them), and returns
// the ids it labelled, by label.
func Build(ctx context.Context, st sessiontree.Storage) (map[string]string, error) {
	s := sessiontree.NewSession(&fixedIDs{Storage: st, ids: entryIDs}, sessiontree.SessionOptions{})
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

// fixedIDs is a Storage that gives each entry appended without an id the
// next of ids (and, once they run out, lets the storage choose one).
type fixedIDs struct {
	sessiontree.Storage
	ids []string
}

func (f *fixedIDs) Append(ctx context.Context, d sessiontree.Draft, opts sessiontree.AppendOptions) (sessiontree.Entry, error) {
	f.give(&d)
	return f.Storage.Append(ctx, d, opts)
}

func (f *fixedIDs) AppendUnder(ctx context.Context, parent string, d sessiontree.Draft, opts sessiontree.AppendOptions) (sessiontree.Entry, error) {
	f.give(&d)
	return f.Storage.AppendUnder(ctx, parent, d, opts)
}

// give gives d the next id, when it has none and one is left.
func (f *fixedIDs) give(d *sessiontree.Draft) {
	if d.ID == "" && len(f.ids) > 0 {
		d.ID, f.ids = f.ids[0], f.ids[1:]
	}
}
