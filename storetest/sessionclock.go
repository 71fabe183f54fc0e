package storetest

import (
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
)

// SessionClock: every entry a Session writes takes its time from
// SessionOptions.Now, the leaf entry of a move without a summary too
// (through AppendOptions.Timestamp), as the log shows it after a reopen.
var _ = register("SessionClock", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	at := time.Date(2001, 2, 3, 4, 5, 6, 7e6, time.UTC)
	clock := sessiontree.SessionOptions{Now: func() time.Time { return at }}
	s := sessiontree.NewSession(f.st, clock)
	u := f.ok(s.AppendMessage(f.ctx, userMessage("one")))
	f.ok(s.AppendMessage(f.ctx, assistantMessage("two", "p", "m")))
	if _, err := s.MoveTo(f.ctx, u.ID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MoveTo(f.ctx, "", &sessiontree.BranchSummary{Summary: "left"}); err != nil {
		t.Fatal(err)
	}
	f.ok(s.SetLabel(f.ctx, u.ID, "mark"))
	f.ok(s.SetName(f.ctx, "named"))
	f.reopen()
	log, err := f.st.Log(f.ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := sessiontree.FormatTime(at)
	for _, e := range log {
		if e.Timestamp != want {
			t.Errorf("%s entry %s stamped %q; want the session's clock, %q", e.Type, e.ID, e.Timestamp, want)
		}
	}
	if len(log) != 6 {
		t.Errorf("log has %d entries; want 6", len(log))
	}
	// Storage.SetLeaf takes the time it is given, and stamps now without.
	e := f.ok(f.st.SetLeaf(f.ctx, u.ID, sessiontree.AppendOptions{Timestamp: "2002-01-01T00:00:00.000Z"}))
	if e.Timestamp != "2002-01-01T00:00:00.000Z" {
		t.Errorf("SetLeaf(Timestamp 2002-01-01) stamped %q", e.Timestamp)
	}
	if e = f.ok(f.st.SetLeaf(f.ctx, u.ID, sessiontree.AppendOptions{})); e.Timestamp == want || e.Timestamp == "" {
		t.Errorf("SetLeaf() without a time stamped %q; want now", e.Timestamp)
	}
})
