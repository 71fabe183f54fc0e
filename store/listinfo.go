package store

import "github.com/sessiontree/sessiontree"

// ListRow is one row of a session list as `sessiontree ls --json` and the
// HTTP API's session list give it: the store's row with pi's session-list
// fields (messageCount, firstMessage) beside it.
type ListRow struct {
	SessionInfo
	sessiontree.ListInfo
}

// ListRows returns the list rows of sessions, in order; never nil, so
// that no sessions is written [].
func ListRows(sessions []SessionInfo) []ListRow {
	rows := make([]ListRow, 0, len(sessions))
	for _, in := range sessions {
		rows = append(rows, ListRow{in, in.ListInfo()})
	}
	return rows
}
