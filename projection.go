package sessiontree

import (
	"encoding/json"
	"fmt"

	"github.com/sessiontree/sessiontree/internal/jsonx"
)

// ProjectedEntry is one entry of the context entry list with the messages
// it contributes to the context after context edits: pi 1.6.0's
// buildSessionProjection pairs, which map each context message back to its
// source entry. State entries, dropped targets and older compactions
// contribute no messages.
type ProjectedEntry struct {
	// SourceID is the id of the entry the messages come from.
	SourceID string `json:"sourceId"`
	// Entry is the source entry itself.
	Entry Entry `json:"-"`
	// Messages are the agent message objects it contributes, in order;
	// never nil.
	Messages []json.RawMessage `json:"messages"`
}

// Projected is a projection: one [ProjectedEntry] per context entry, in
// order.
type Projected []ProjectedEntry

// Messages returns every message of the projection, in order.
func (p Projected) Messages() []json.RawMessage {
	n := 0
	for _, pe := range p {
		n += len(pe.Messages)
	}
	msgs := make([]json.RawMessage, 0, n)
	for _, pe := range p {
		msgs = append(msgs, pe.Messages...)
	}
	return msgs
}

// Projection projects context entries (see [ContextEntries]) entry by
// entry, as pi 1.6.0's buildSessionProjection does: per target, the last
// context_edit in the list wins; each entry contributes its messages
// (DESIGN.md section 4) with its edit applied, except that a compaction
// other than the first entry contributes nothing (only the newest
// compaction, which heads the list, is summarised).
func Projection(entries []Entry, projectors map[string]Projector) (Projected, error) {
	edits := ContextEdits(entries)
	out := make(Projected, 0, len(entries))
	for i, e := range entries {
		msgs := []json.RawMessage{}
		if e.Type != TypeCompaction || i == 0 {
			got, err := projectEntry(e, projectors)
			if err != nil {
				return nil, fmt.Errorf("project entry %s: %w", e.ID, err)
			}
			if edit, ok := edits[e.ID]; ok {
				got = applyEdit(got, edit)
			}
			msgs = append(msgs, got...)
		}
		out = append(out, ProjectedEntry{SourceID: e.ID, Entry: e, Messages: msgs})
	}
	return out, nil
}

// ContextEdit is what a context_edit entry says: its target, and either
// Omit (replacement null: the target contributes nothing) or the raw JSON
// of the content that replaces the target's.
type ContextEdit struct {
	TargetID string
	Omit     bool
	// Content is the replacement's "content" value; nil when the
	// replacement has no content key (the content becomes absent).
	Content json.RawMessage
}

// ContextEditOf reads a context_edit entry. ok is false when e is not a
// context_edit, names no target, or has no replacement (pi 1.6.0 throws
// building the context then): it does nothing. A replacement that is
// neither null nor an object (a string, a number, an array) has no
// content for pi, as {} has none: the edit removes the target's content.
func ContextEditOf(e Entry) (edit ContextEdit, ok bool) {
	if e.Type != TypeContextEdit {
		return edit, false
	}
	target, ok := e.String("targetId")
	if !ok {
		return edit, false
	}
	edit.TargetID = target
	repl, found := e.Field("replacement")
	if found && jsonx.IsNull(repl) {
		edit.Omit = true
		return edit, true
	}
	if !found {
		return edit, false
	}
	if len(repl) > 0 && repl[0] == '{' {
		edit.Content, _ = jsonx.Field(repl, "content")
	}
	return edit, true
}

// ContextEdits returns the context edits in effect in a list of context
// entries (see [ContextEntries]): per target id, the last context_edit of
// the list, as [Projection] applies them. Nil when there are none.
func ContextEdits(entries []Entry) map[string]ContextEdit {
	var edits map[string]ContextEdit
	for _, e := range entries {
		if edit, ok := ContextEditOf(e); ok {
			if edits == nil {
				edits = map[string]ContextEdit{}
			}
			edits[edit.TargetID] = edit
		}
	}
	return edits
}

// applyEdit applies an edit to the messages of its target: Omit drops
// them all; a replacement swaps the content of messages of role user,
// assistant, toolResult and custom, a string becoming one text block for
// assistant and toolResult, and leaves other roles as they are.
func applyEdit(msgs []json.RawMessage, edit ContextEdit) []json.RawMessage {
	if edit.Omit {
		return nil
	}
	out := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		out[i] = m
		role := messageRole(m)
		switch role {
		case "user", "custom":
			out[i] = withContent(m, edit.Content)
		case "assistant", "toolResult":
			out[i] = withContent(m, textBlockIfString(edit.Content))
		}
	}
	return out
}

// textBlockIfString turns a JSON string into one text block.
func textBlockIfString(content json.RawMessage) json.RawMessage {
	if len(content) == 0 || content[0] != '"' {
		return content
	}
	buf := append([]byte(nil), `[{"type":"text","text":`...)
	buf = append(buf, content...)
	return append(buf, '}', ']')
}

// messageRole reads the role of a message object, "" when it has none.
func messageRole(m json.RawMessage) string {
	raw, ok := jsonx.Field(m, "role")
	if !ok {
		return ""
	}
	role, _ := jsonx.Unquote(raw)
	return role
}

// normalizeContent gives a message whose content is null or missing the
// content pi 1.6.0 puts in the context: "" for role system, [] for user,
// assistant and toolResult. Other messages are returned as they are.
func normalizeContent(m json.RawMessage) json.RawMessage {
	var empty json.RawMessage
	switch messageRole(m) {
	case "system":
		empty = json.RawMessage(`""`)
	case "user", "assistant", "toolResult":
		empty = json.RawMessage(`[]`)
	default:
		return m
	}
	if c, ok := jsonx.Field(m, "content"); ok && !jsonx.IsNull(c) {
		return m
	}
	return withContent(m, empty)
}

// withContent returns message m with its content set to content, as
// JavaScript's {...m, content} does: in place when m has a content member,
// else added last. A nil content removes the member (JSON.stringify drops
// an undefined value).
func withContent(m json.RawMessage, content json.RawMessage) json.RawMessage {
	var w objectWriter
	replaced := false
	_ = jsonx.ObjectMembers(m, func(k, v []byte) error {
		if jsonx.KeyEquals(k, "content") {
			if !replaced && content != nil {
				w.rawKey(k, content)
			}
			replaced = true
			return nil
		}
		w.rawKey(k, v)
		return nil
	})
	if !replaced && content != nil {
		w.raw("content", content)
	}
	if len(w.buf) == 0 {
		return json.RawMessage(`{}`)
	}
	return w.done()
}
