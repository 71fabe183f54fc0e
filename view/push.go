package view

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/sessiontree/sessiontree/store"
)

// WritePushReport writes what a push or a pull (verb: "pushed",
// "pulled") did: one line per session, its id and then "pushed N
// entries", "up to date", "skipped: deleted at the source during the
// push" (a session deleted while it ran), or its status, what was copied
// before it and the reason, then a line of totals.
func WritePushReport(w io.Writer, verb string, rep store.PushReport) error {
	bw := bufio.NewWriter(w)
	copied := 0
	for _, r := range rep.Results {
		copied += int(r.Pushed)
		// A session file may hold any id: folded as its reason is.
		id := OneLine(r.Session)
		switch r.Status {
		case store.PushPushed:
			fmt.Fprintf(bw, "%s  %s %s\n", id, verb, entries(int(r.Pushed)))
		case store.PushUpToDate:
			fmt.Fprintf(bw, "%s  up to date\n", id)
		case store.PushSkipped:
			// The reason is the store's, said of a push; a pull is one
			// too, but is called so here.
			first := ""
			if r.Pushed > 0 {
				first = fmt.Sprintf(" (%s %s first)", verb, entries(int(r.Pushed)))
			}
			fmt.Fprintf(bw, "%s  skipped%s: deleted at the source during the %s\n", id, first, strings.TrimSuffix(verb, "ed"))
		default:
			fmt.Fprintf(bw, "%s  %s (%s %s first): %s\n", id, r.Status, verb, entries(int(r.Pushed)), ErrorLine(r.Reason))
		}
	}
	fmt.Fprintf(bw, "%s: %d %s (%s), %d up to date, %d in conflict, %d claimed, %d failed, %d skipped\n",
		plural(len(rep.Results), "session"), rep.Count(store.PushPushed), verb, entries(copied),
		rep.Count(store.PushUpToDate), rep.Count(store.PushConflict), rep.Count(store.PushClaimed), rep.Count(store.PushFailed),
		rep.Count(store.PushSkipped))
	return bw.Flush()
}
