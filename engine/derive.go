package engine

import (
	"encoding/json"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/jsonx"
)

// facts are what the engine reads from an entry's JSON when it stores it:
// the indexed columns, what it contributes to the session's state, and
// how it affects paths and the context state.
type facts struct {
	role, customType, targetID string
	message                    bool
	usage                      sessiontree.Usage
	hasUsage                   bool
	// setsThinking, setsModel, setsTools: the entry is the latest of that
	// setting on its own full path (sessiontree.State.Apply would take it).
	setsThinking, setsModel, setsTools bool
	// compaction: hasTail ends the path at the entry itself; otherwise
	// keep (may be "") is where the path starts if it is an ancestor.
	compaction bool
	hasTail    bool
	keep       string
	// setsName: a session_info entry; name is the name it sets ("" clears).
	setsName bool
	name     string
	// label: a label entry; labelText "" clears.
	label     bool
	labelText string
}

func factsOf(e sessiontree.Entry) facts {
	var f facts
	switch e.Type {
	case sessiontree.TypeMessage:
		f.message = true
		info := sessiontree.MessageInfoOf(e)
		f.role = info.Role
		if info.Role == "assistant" {
			f.setsModel = true
			if info.Usage != nil {
				// UsageOf reads a compaction's "usage" exactly as a
				// message's; handing it the usage object alone spares a
				// second scan of the whole message.
				u := sessiontree.Entry{Type: sessiontree.TypeCompaction, Raw: usageWrapper(info.Usage)}
				f.usage, f.hasUsage = sessiontree.UsageOf(u)
			}
		}
	case sessiontree.TypeThinkingLevelChange:
		_, f.setsThinking = e.String("thinkingLevel")
	case sessiontree.TypeModelChange:
		f.setsModel = true
	case sessiontree.TypeActiveToolsChange:
		var names []string
		raw, ok := e.Field("activeToolNames")
		f.setsTools = ok && json.Unmarshal(raw, &names) == nil
	case sessiontree.TypeCompaction:
		f.compaction = true
		f.hasTail = sessiontree.HasRetainedTail(e)
		f.keep = sessiontree.FirstKeptEntryID(e)
		f.usage, f.hasUsage = sessiontree.UsageOf(e)
	case sessiontree.TypeBranchSummary:
		f.usage, f.hasUsage = sessiontree.UsageOf(e)
	case sessiontree.TypeCustom, sessiontree.TypeCustomMessage:
		f.customType, _ = e.String("customType")
	case sessiontree.TypeLabel:
		f.label = true
		f.targetID = e.TargetID()
		f.labelText = sessiontree.LabelOf(e)
	case sessiontree.TypeLeaf:
		f.targetID = e.TargetID()
	case sessiontree.TypeSessionInfo:
		f.setsName = true
		f.name = sessiontree.NameOf(e)
	}
	return f
}

// userText returns the text a session list shows for a user message: its
// content when it is a string, else its first text block.
func userText(e sessiontree.Entry) (string, bool) {
	msg, ok := e.Field("message")
	if !ok {
		return "", false
	}
	content, ok := jsonx.Field(msg, "content")
	if !ok {
		return "", false
	}
	if s, err := jsonx.Unquote(content); err == nil {
		return s, true
	}
	var blocks []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if json.Unmarshal(content, &blocks) != nil {
		return "", false
	}
	for _, b := range blocks {
		if b.Type == "text" && b.Text != nil {
			return *b.Text, true
		}
	}
	return "", false
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func usageWrapper(usage []byte) []byte {
	b := make([]byte, 0, len(usage)+10)
	b = append(b, `{"usage":`...)
	b = append(b, usage...)
	return append(b, '}')
}
