package view

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/watch"
)

// WriteWatchEvent writes the line `sessiontree import --watch` prints for
// an event of a watch, or nothing for the events it keeps quiet about
// (caught up; unsettled, which is reported as a problem if it lasts).
// It writes only text, on one line: a file's name or an error quoting a
// session is folded by [OneLine], so its control characters show as
// [TermText] shows them and a line break in it cannot start a line that
// reads as another event.
func WriteWatchEvent(w io.Writer, e watch.Event) error {
	line := OneLine(watchLine(e))
	if line == "" {
		return nil
	}
	if _, err := io.WriteString(w, line+"\n"); err != nil {
		return fmt.Errorf("write watch event: %w", err)
	}
	return nil
}

// watchLine is an event's line, "" for none.
func watchLine(e watch.Event) string {
	r := e.Result
	switch e.Kind {
	case watch.Imported:
		var how []string
		if r.Outcome == store.OutcomeNew {
			how = append(how, "new session")
		}
		switch {
		case r.MovedFrom != "":
			how = append(how, "moved from "+r.MovedFrom)
		case r.Rewritten:
			how = append(how, "file rewritten")
		}
		line := fmt.Sprintf("%s: %s into %s", e.Path, entries(r.Entries), ShortID(r.SessionID))
		if len(how) > 0 {
			line += " (" + strings.Join(how, ", ") + ")"
		}
		for _, p := range r.Problems {
			if p != r.Torn {
				line += fmt.Sprintf("; line %d skipped: %s", p.Line, ErrorLine(p.Err.Error()))
			}
		}
		return line
	case watch.Problem:
		msg := "unknown problem"
		switch {
		case r.Err != nil:
			msg = r.Err.Error()
		case r.Torn != nil:
			msg = fmt.Sprintf("line %d is unfinished and has not changed since; it is imported once it is finished", r.Torn.Line)
		}
		msg = strings.TrimPrefix(strings.TrimPrefix(ErrorLine(msg), "import "+e.Path+": "), e.Path+": ")
		return fmt.Sprintf("problem: %s: %s", e.Path, msg)
	case watch.Gone:
		return fmt.Sprintf("%s: gone (its session stays in the database)", e.Path)
	case watch.Waiting:
		return fmt.Sprintf("waiting for %s to be created", e.Path)
	case watch.Dropped:
		if e.Path != "" {
			return fmt.Sprintf("warning: cannot watch %s: %s; rescanning it every while instead", e.Path, ErrorLine(fmt.Sprint(e.Err)))
		}
		return fmt.Sprintf("warning: file events were lost (%s); rescanning", ErrorLine(fmt.Sprint(e.Err)))
	case watch.IndexFailed:
		return fmt.Sprintf("warning: the search index is not up to date (%s); trying again", ErrorLine(fmt.Sprint(e.Err)))
	}
	return ""
}

// WriteWatchStarted writes the line `sessiontree import --watch` prints
// once it has imported what was there when it started: how much, and
// that it is now watching.
func WriteWatchStarted(w io.Writer, nEntries, nFiles int) error {
	_, err := fmt.Fprintf(w, "imported %s from %s; watching for changes (Ctrl-C to stop)\n", entries(nEntries), plural(nFiles, "file"))
	if err != nil {
		return fmt.Errorf("write watch start: %w", err)
	}
	return nil
}

// WriteWatchSummary writes what a watch did, on one line: how long it
// ran, the files it followed and what it imported.
func WriteWatchSummary(w io.Writer, s watch.Summary) error {
	_, err := fmt.Fprintf(w, "followed %s for %s: %s imported from %s, %s, %s\n",
		plural(s.Followed, "file"), s.Duration.Round(time.Second), entries(s.Entries), plural(s.Files, "file"),
		plural(s.NewSessions, "new session"), plural(s.Problems, "problem"))
	if err != nil {
		return fmt.Errorf("write watch summary: %w", err)
	}
	return nil
}
