package sessiontree

import (
	"strings"

	"github.com/sessiontree/sessiontree/internal/jsonx"
)

// NoMessages is the first message pi's session list shows for a session
// without a user message with text.
const NoMessages = "(no messages)"

// ListInfo is what pi's session list (SessionManager.list) computes from a
// session's entries, beyond its header and name.
type ListInfo struct {
	// MessageCount counts every message entry, system messages included.
	MessageCount int64 `json:"messageCount"`
	// FirstMessage is the text of the first user message with text, else
	// [NoMessages].
	FirstMessage string `json:"firstMessage"`
}

// ListInfoOf computes [ListInfo] over a session's log.
func ListInfoOf(log []Entry) ListInfo {
	info := ListInfo{}
	for _, e := range log {
		if e.Type != TypeMessage {
			continue
		}
		info.MessageCount++
		if info.FirstMessage == "" {
			if text, ok := UserText(e); ok {
				info.FirstMessage = text
			}
		}
	}
	if info.FirstMessage == "" {
		info.FirstMessage = NoMessages
	}
	return info
}

// UserText returns the text pi's session list takes from a user message:
// its content when that is a string, else its text blocks' texts joined
// by spaces, a NUL made a space ([DerivedText]). ok is false for other
// entries and when the text is empty.
func UserText(e Entry) (string, bool) {
	if e.Type != TypeMessage || MessageInfoOf(e).Role != "user" {
		return "", false
	}
	text, ok := messageText(e)
	return DerivedText(text), ok
}

// messageText extracts a message's text as pi's session list does.
func messageText(e Entry) (string, bool) {
	msg, _ := e.Field("message")
	content, ok := jsonx.Field(msg, "content")
	if !ok {
		return "", false
	}
	if s, err := jsonx.Unquote(content); err == nil {
		return s, s != ""
	}
	if len(content) == 0 || content[0] != '[' {
		return "", false
	}
	var texts []string
	_ = jsonx.ArrayElements(content, func(v []byte) error {
		if t, ok := jsonx.Field(v, "type"); !ok || string(t) != `"text"` {
			return nil
		}
		raw, _ := jsonx.Field(v, "text")
		text, _ := jsonx.Unquote(raw) // JavaScript joins undefined as ""
		texts = append(texts, text)
		return nil
	})
	s := strings.Join(texts, " ")
	return s, s != ""
}
