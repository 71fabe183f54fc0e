package view

import (
	"bufio"
	"fmt"
	"io"

	"github.com/sessiontree/sessiontree/store"
)

// WritePushReport writes what a push or a pull (verb: "pushed",
// "pulled") did: one line per session, its id and then "pushed N
// entries", "up to date", "skipped: " and its reason ("deleted at the
// source during the pull", store.PushDeletedReason, for a session deleted
// while it ran), or its status, what was copied before it and the
// reason, then a line of totals.
func WritePushReport(w io.Writer, verb string, rep store.PushReport) error {
	bw := bufio.NewWriter(w)
	for _, r := range rep.Results {
		// A session file may hold any id: folded as its reason is.
		id := OneLine(r.Session)
		switch r.Status {
		case store.PushPushed:
			fmt.Fprintf(bw, "%s  %s %s\n", id, verb, entries(int(r.Pushed)))
		case store.PushUpToDate:
			fmt.Fprintf(bw, "%s  up to date\n", id)
		case store.PushSkipped:
			// The reason is the store's, in the copy's own word
			// (store.PushOptions.Verb), as --json gives it.
			first := ""
			if r.Pushed > 0 {
				first = fmt.Sprintf(" (%s %s first)", verb, entries(int(r.Pushed)))
			}
			fmt.Fprintf(bw, "%s  skipped%s: %s\n", id, first, ErrorLine(r.Reason))
		default:
			fmt.Fprintf(bw, "%s  %s (%s %s first): %s\n", id, r.Status, verb, entries(int(r.Pushed)), ErrorLine(r.Reason))
		}
	}
	t := rep.Totals()
	fmt.Fprintf(bw, "%s: %d %s (%s), %d up to date, %d in conflict, %d claimed, %d failed, %d skipped\n",
		plural(t.Sessions, "session"), t.Pushed, verb, entries(int(t.Entries)), t.UpToDate, t.Conflict, t.Claimed, t.Failed, t.Skipped)
	return bw.Flush()
}

// PushJSON is what push --json and pull --json print: one JSON document
// with every session's result (an empty array when there is none) and
// the totals the text output's last line says.
type PushJSON struct {
	Sessions []store.PushResult `json:"sessions"`
	Totals   store.PushTotals   `json:"totals"`
}

// NewPushJSON returns rep's [PushJSON].
func NewPushJSON(rep store.PushReport) PushJSON {
	sessions := rep.Results
	if sessions == nil {
		sessions = []store.PushResult{}
	}
	return PushJSON{Sessions: sessions, Totals: rep.Totals()}
}
