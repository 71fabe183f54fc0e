package view_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/view"
	"github.com/sessiontree/sessiontree/watch"
)

// TestWriteWatchEvent checks the line import --watch prints per event,
// and that it keeps quiet about the events it does not print.
func TestWriteWatchEvent(t *testing.T) {
	t.Parallel()
	skipped := &jsonl.LineError{Path: "/s/a.jsonl", Line: 7, Err: &sessiontree.CorruptError{Reason: "a torn line"}}
	torn := &jsonl.LineError{Path: "/s/a.jsonl", Line: 9, Err: errors.New("torn")}
	for _, tc := range []struct {
		e    watch.Event
		want string
	}{
		{watch.Event{Kind: watch.Imported, Path: "/s/a.jsonl", Result: store.FileResult{Outcome: store.OutcomeNew, SessionID: "0198f2a4-5c1e", Entries: 3}},
			"/s/a.jsonl: 3 entries into 0198f2a4 (new session)\n"},
		{watch.Event{Kind: watch.Imported, Path: "/s/b.jsonl", Result: store.FileResult{Outcome: store.OutcomeGrown, SessionID: "0198f2a4", Entries: 1, MovedFrom: "/s/a.jsonl", Rewritten: true}},
			"/s/b.jsonl: 1 entry into 0198f2a4 (moved from /s/a.jsonl)\n"},
		{watch.Event{Kind: watch.Imported, Path: "/s/a.jsonl", Result: store.FileResult{Outcome: store.OutcomeGrown, SessionID: "0198f2a4", Entries: 2, Rewritten: true, Problems: []*jsonl.LineError{skipped, torn}, Torn: torn}},
			"/s/a.jsonl: 2 entries into 0198f2a4 (file rewritten); line 7 skipped: corrupt session: a torn line\n"},
		{watch.Event{Kind: watch.Problem, Path: "/s/a.jsonl", Result: store.FileResult{Torn: torn}},
			"problem: /s/a.jsonl: line 9 is unfinished and has not changed since; it is imported once it is finished\n"},
		{watch.Event{Kind: watch.Problem, Path: "/s/a.jsonl", Result: store.FileResult{Err: errors.New("import /s/a.jsonl: session x is already in the store")}},
			"problem: /s/a.jsonl: session x is already in the store\n"},
		{watch.Event{Kind: watch.Gone, Path: "/s/a.jsonl"}, "/s/a.jsonl: gone (its session stays in the database)\n"},
		{watch.Event{Kind: watch.Waiting, Path: "/s"}, "waiting for /s to be created\n"},
		{watch.Event{Kind: watch.Dropped, Err: errors.New("queue overflow")}, "warning: file events were lost (queue overflow); rescanning\n"},
		{watch.Event{Kind: watch.IndexFailed, Err: errors.New("index: storage failure: connection refused")},
			"warning: the search index is not up to date (index: storage failure: connection refused); trying again\n"},
		// A file name and an error quoting a session are text from
		// outside: their escape sequences show harmlessly.
		{watch.Event{Kind: watch.Gone, Path: "/s/\x1b]52;c;aGk=\a\x1b[2J.jsonl"}, "/s/\uFFFD]52;c;aGk=\uFFFD\uFFFD[2J.jsonl: gone (its session stays in the database)\n"},
		{watch.Event{Kind: watch.Problem, Path: "/s/a.jsonl", Result: store.FileResult{Err: errors.New("session \x1b[2Jx\u009b is bad")}},
			"problem: /s/a.jsonl: session \uFFFD[2Jx\uFFFD is bad\n"},
		// A line break in a file name would start a line that reads as
		// another event; the event stays on its line.
		{watch.Event{Kind: watch.Gone, Path: "/s/a\n/s/b.jsonl: 9 entries into 0198f2a4\n/s/c.jsonl"},
			"/s/a /s/b.jsonl: 9 entries into 0198f2a4 /s/c.jsonl: gone (its session stays in the database)\n"},
		{watch.Event{Kind: watch.CaughtUp}, ""},
		{watch.Event{Kind: watch.Unsettled, Path: "/s/a.jsonl", Result: store.FileResult{Torn: torn}}, ""},
	} {
		var b strings.Builder
		if err := view.WriteWatchEvent(&b, tc.e); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("WriteWatchEvent(%v) = %q; want %q", tc.e.Kind, b.String(), tc.want)
		}
	}
}

func TestWriteWatchSummary(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	s := watch.Summary{Followed: 3, Files: 2, NewSessions: 1, Entries: 41, Problems: 1, Duration: 90*time.Second + 300*time.Millisecond}
	if err := view.WriteWatchSummary(&b, s); err != nil {
		t.Fatal(err)
	}
	if want := "followed 3 files for 1m30s: 41 entries imported from 2 files, 1 new session, 1 problem\n"; b.String() != want {
		t.Errorf("WriteWatchSummary = %q; want %q", b.String(), want)
	}
	b.Reset()
	if err := view.WriteWatchStarted(&b, 1, 1); err != nil {
		t.Fatal(err)
	}
	if want := "imported 1 entry from 1 file; watching for changes (Ctrl-C to stop)\n"; b.String() != want {
		t.Errorf("WriteWatchStarted = %q; want %q", b.String(), want)
	}
}
