package store

import "github.com/sessiontree/sessiontree"

// ListInfo returns the row's message count and first message as pi's
// session list gives them ([sessiontree.ListInfo]): every message entry
// counted, system messages included, and the first user message's text,
// or [sessiontree.NoMessages] when the session has none.
func (in SessionInfo) ListInfo() sessiontree.ListInfo {
	first := in.FirstUserMessage
	if first == "" {
		first = sessiontree.NoMessages
	}
	return sessiontree.ListInfo{MessageCount: in.Messages, FirstMessage: first}
}
