package engine

import (
	"encoding/json"
	"strconv"
	"strings"

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
				f.usage, f.hasUsage = usageOf(info.Usage)
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
		if raw, ok := e.Field("usage"); ok {
			f.usage, f.hasUsage = usageOf(raw)
		}
	case sessiontree.TypeBranchSummary:
		if raw, ok := e.Field("usage"); ok {
			f.usage, f.hasUsage = usageOf(raw)
		}
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

// usageOf reads a usage object as sessiontree.UsageOf does. The common
// shape (plain numbers under the exact field names, a cost object with a
// numeric total) is read here with the strict scanner; anything else
// (null, strings, other spellings of the names, which encoding/json would
// match case-insensitively, repeated names) goes to sessiontree.UsageOf
// itself, so both always agree.
func usageOf(raw []byte) (sessiontree.Usage, bool) {
	var u sessiontree.Usage
	var seen [5]bool
	plain := len(raw) > 0 && raw[0] == '{'
	number := func(v []byte) (float64, bool) {
		if len(v) == 0 || !(v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
			return 0, false
		}
		x, err := strconv.ParseFloat(string(v), 64)
		return x, err == nil
	}
	err := jsonx.ObjectMembers(raw, func(k, v []byte) error {
		if !plain {
			return nil
		}
		name, err := jsonx.Unquote(k)
		if err != nil {
			plain = false
			return nil
		}
		for i, want := range usageNames {
			if !strings.EqualFold(name, want) {
				continue
			}
			if name != want || seen[i] {
				plain = false
				return nil
			}
			seen[i] = true
			if i == 4 { // cost
				total, ok := jsonx.Field(v, "total")
				x, isNum := number(total)
				if len(v) == 0 || v[0] != '{' || !ok || !isNum || !costPlain(v) {
					plain = false
					return nil
				}
				u.Cost = x
				return nil
			}
			x, ok := number(v)
			if !ok {
				plain = false
				return nil
			}
			n := int64(x)
			switch i {
			case 0:
				u.Input = n
			case 1:
				u.Output = n
			case 2:
				u.CacheRead = n
			case 3:
				u.CacheWrite = n
			}
		}
		return nil
	})
	if err != nil || !plain {
		return sessiontree.UsageFromJSON(raw)
	}
	if !seen[0] || !seen[1] {
		return sessiontree.Usage{}, false
	}
	return u, true
}

var usageNames = [5]string{"input", "output", "cacheRead", "cacheWrite", "cost"}

// costPlain reports whether a cost object names "total" once, exactly.
func costPlain(v []byte) bool {
	n := 0
	plain := true
	_ = jsonx.ObjectMembers(v, func(k, _ []byte) error {
		name, err := jsonx.Unquote(k)
		if err != nil || strings.EqualFold(name, "total") && name != "total" {
			plain = false
		}
		if name == "total" {
			n++
		}
		return nil
	})
	return plain && n == 1
}

func usageWrapper(usage []byte) []byte {
	b := make([]byte, 0, len(usage)+10)
	b = append(b, `{"usage":`...)
	b = append(b, usage...)
	return append(b, '}')
}
