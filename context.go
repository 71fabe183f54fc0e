package sessiontree

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/sessiontree/sessiontree/internal/jsonx"
)

// Context is what the model sees: the messages projected from the active
// path and the state in effect at its leaf. It marshals to the shape of
// pi's buildSessionContext, {"messages", "thinkingLevel", "model"}, plus
// "activeToolNames" (the latest active_tools_change, null without one),
// which pi 1.6.0's has not.
type Context struct {
	// Messages are agent message objects, in order.
	Messages []json.RawMessage `json:"messages"`
	State
}

// EntryTransform rewrites the list of context entries before they are
// projected to messages (to drop, reorder or add entries).
type EntryTransform func(ctx context.Context, entries []Entry) ([]Entry, error)

// Projector turns a custom entry into zero or more context messages. It is
// registered per customType.
type Projector func(e Entry) ([]json.RawMessage, error)

// ContextOptions tune how context is built.
type ContextOptions struct {
	// From is the entry to build the context at; "" means the current leaf.
	From string
	// Transforms run in order on the context entries before projection.
	Transforms []EntryTransform
	// Projectors map a custom entry's customType to its projector.
	Projectors map[string]Projector
}

// ContextEntries selects, from a path cut at the compaction boundary (root
// first), the entries the context is built from, as pi 1.6.0's
// buildContextEntries does: without a compaction, the path itself; with
// one, the newest compaction first, then the kept entries from its
// firstKeptEntryId up to it without messages of role system (the
// compaction's systemMessage replaces them), then everything after it.
// An older compaction in the kept range stays in the list but contributes
// nothing ([Projection] gives it no messages).
func ContextEntries(path []Entry) []Entry {
	ci := -1
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type == TypeCompaction {
			ci = i
			break
		}
	}
	if ci < 0 {
		return path
	}
	out := make([]Entry, 0, len(path))
	out = append(out, path[ci])
	if keep := FirstKeptEntryID(path[ci]); keep != "" && !HasRetainedTail(path[ci]) {
		found := false
		for _, e := range path[:ci] {
			found = found || e.ID == keep
			if found && !isSystemMessage(e) {
				out = append(out, e)
			}
		}
	}
	return append(out, path[ci+1:]...)
}

// isSystemMessage reports whether e is a message entry of role system.
func isSystemMessage(e Entry) bool {
	return e.Type == TypeMessage && MessageInfoOf(e).Role == "system"
}

// Project turns context entries into messages (DESIGN.md section 4): the
// messages of [Projection], flattened.
func Project(entries []Entry, projectors map[string]Projector) ([]json.RawMessage, error) {
	proj, err := Projection(entries, projectors)
	if err != nil {
		return nil, err
	}
	return proj.Messages(), nil
}

func projectEntry(e Entry, projectors map[string]Projector) ([]json.RawMessage, error) {
	switch e.Type {
	case TypeMessage:
		if m, ok := e.Field("message"); ok {
			return []json.RawMessage{normalizeContent(m)}, nil
		}
	case TypeCustomMessage:
		return one(customMessage(e))
	case TypeCompaction:
		return compactionMessages(e)
	case TypeBranchSummary:
		if s, _ := e.String("summary"); s != "" {
			return one(branchSummaryMessage(e))
		}
	case TypeCustom:
		ct, _ := e.String("customType")
		if p := projectors[ct]; p != nil {
			return p(e)
		}
	}
	return nil, nil
}

func one(m json.RawMessage, err error) ([]json.RawMessage, error) {
	if err != nil {
		return nil, err
	}
	return []json.RawMessage{m}, nil
}

// objectWriter writes a JSON object member by member, copying raw values.
type objectWriter struct{ buf []byte }

func (w *objectWriter) raw(name string, v []byte) {
	w.next()
	w.buf = jsonx.AppendString(w.buf, name)
	w.buf = append(w.buf, ':')
	w.buf = append(w.buf, v...)
}

// rawKey writes a member whose key is already quoted JSON.
func (w *objectWriter) rawKey(key, v []byte) {
	w.next()
	w.buf = append(w.buf, key...)
	w.buf = append(w.buf, ':')
	w.buf = append(w.buf, v...)
}

// next starts the object or separates the next member.
func (w *objectWriter) next() {
	if len(w.buf) == 0 {
		w.buf = append(w.buf, '{')
	} else {
		w.buf = append(w.buf, ',')
	}
}

// field copies a field of e when present.
func (w *objectWriter) field(e Entry, name string) {
	if v, ok := e.Field(name); ok {
		w.raw(name, v)
	}
}

func (w *objectWriter) timestamp(e Entry) {
	w.raw("timestamp", unixMillis(e.Timestamp))
}

func (w *objectWriter) done() json.RawMessage { return append(w.buf, '}') }

// unixMillis converts an ISO timestamp to Unix milliseconds as JSON, or
// null when it does not parse (JavaScript's Date gives NaN, which
// JSON.stringify writes as null).
func unixMillis(ts string) []byte {
	t, err := ParseTime(ts)
	if err != nil {
		return []byte("null")
	}
	return strconv.AppendInt(nil, t.UnixMilli(), 10)
}

func customMessage(e Entry) (json.RawMessage, error) {
	var w objectWriter
	w.raw("role", []byte(`"custom"`))
	w.field(e, "customType")
	if c, ok := e.Field("content"); ok && !jsonx.IsNull(c) {
		w.raw("content", c)
	} else {
		w.raw("content", []byte(`[]`))
	}
	w.field(e, "display")
	w.field(e, "details")
	w.timestamp(e)
	return w.done(), nil
}

func branchSummaryMessage(e Entry) (json.RawMessage, error) {
	var w objectWriter
	w.raw("role", []byte(`"branchSummary"`))
	w.field(e, "summary")
	w.field(e, "fromId")
	w.timestamp(e)
	return w.done(), nil
}

// compactionMessages are what the newest compaction contributes: its
// systemMessage snapshot when it has one (pi 1.x), its summary, and the
// messages it retains inline when it carries a retainedTail.
func compactionMessages(e Entry) ([]json.RawMessage, error) {
	var msgs []json.RawMessage
	if sys, ok := e.Field("systemMessage"); ok && !jsonx.Falsy(sys) {
		msgs = append(msgs, sys)
	}
	var w objectWriter
	w.raw("role", []byte(`"compactionSummary"`))
	w.field(e, "summary")
	w.field(e, "tokensBefore")
	w.timestamp(e)
	msgs = append(msgs, w.done())
	tail, ok := e.Field("retainedTail")
	if !ok || jsonx.IsNull(tail) {
		return msgs, nil
	}
	var retained []json.RawMessage
	if err := json.Unmarshal(tail, &retained); err != nil {
		return nil, fmt.Errorf("retainedTail: %w", err)
	}
	return append(msgs, retained...), nil
}

// BuildContext builds the context from a path cut at the compaction
// boundary and the state at its last entry: select the context entries,
// run the transforms, project.
func BuildContext(ctx context.Context, path []Entry, st State, opts ContextOptions) (Context, error) {
	entries, err := applyTransforms(ctx, ContextEntries(path), opts.Transforms)
	if err != nil {
		return Context{}, err
	}
	msgs, err := Project(entries, opts.Projectors)
	if err != nil {
		return Context{}, err
	}
	return Context{Messages: msgs, State: st}, nil
}

func applyTransforms(ctx context.Context, entries []Entry, ts []EntryTransform) ([]Entry, error) {
	for _, t := range ts {
		var err error
		if entries, err = t(ctx, entries); err != nil {
			return nil, fmt.Errorf("entry transform: %w", err)
		}
	}
	return entries, nil
}
