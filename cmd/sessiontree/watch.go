package main

import (
	"context"
	"fmt"

	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/view"
	"github.com/sessiontree/sessiontree/watch"
)

// watchImport runs import --watch: events on stderr as they come, the
// summary on stdout once interrupted. The first round, which imports
// what is already there, is told in one line, not one per file.
func watchImport(ctx context.Context, a *app, s *store.Store, paths []string, opts store.ImportOptions, asJSON bool) error {
	opts.Waiting = func() { fmt.Fprintln(a.stderr, waitingMessage) }
	started := false
	var first watch.Summary
	sum, err := watch.Watch(ctx, s, paths, watch.Options{Import: opts, Report: func(e watch.Event) {
		switch {
		case started:
			_ = view.WriteWatchEvent(a.stderr, e)
		case e.Kind == watch.CaughtUp:
			started = true
			_ = view.WriteWatchStarted(a.stderr, first.Entries, first.Files)
		case e.Kind == watch.Imported:
			first.Entries += e.Result.Entries
			first.Files++
		default:
			_ = view.WriteWatchEvent(a.stderr, e)
		}
	}})
	if werr := writeWatchSummary(a, sum, asJSON); err == nil {
		err = werr
	}
	return err
}

func writeWatchSummary(a *app, sum watch.Summary, asJSON bool) error {
	if asJSON {
		return view.WriteJSON(a.stdout, sum, a.jsonOpts())
	}
	return view.WriteWatchSummary(a.stdout, sum)
}
