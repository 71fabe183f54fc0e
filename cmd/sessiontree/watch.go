package main

import (
	"context"
	"fmt"

	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/view"
	"github.com/sessiontree/sessiontree/watch"
)

// watchImport runs import --watch: events on stderr as they come, the
// summary on stdout once interrupted.
func watchImport(ctx context.Context, a *app, s *store.Store, paths []string, opts store.ImportOptions, asJSON bool) error {
	opts.Waiting = func() { fmt.Fprintln(a.stderr, waitingMessage) }
	started := false
	sum, err := watch.Watch(ctx, s, paths, watch.Options{Import: opts, Report: func(e watch.Event) {
		if e.Kind == watch.CaughtUp && !started {
			started = true
			fmt.Fprintln(a.stderr, "watching for changes; Ctrl-C to stop")
		}
		_ = view.WriteWatchEvent(a.stderr, e)
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
