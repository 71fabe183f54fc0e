package storetest

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
)

// model is the reference a run compares a backend with: the log as a
// list, and what the root package's rules make of it.
type model struct {
	log   []sessiontree.Entry
	byID  map[string]int
	r     sessiontree.Replayer
	tally sessiontree.Tally
	// claim is the session's claim row: holder "" when there is none or
	// it was released; fence the last claim's, 0 before the first.
	claim struct {
		holder  string
		fence   int64
		expires time.Time
	}
}

func newModel() *model { return &model{byID: map[string]int{}} }

// earlier is the model's log as the root package's checks look it up.
func (m *model) earlier() sessiontree.Earlier { return sessiontree.EarlierMap[int](m.byID) }

func (m *model) lookup(id string) (sessiontree.Entry, bool) {
	i, ok := m.byID[id]
	if !ok {
		return sessiontree.Entry{}, false
	}
	return m.log[i], true
}

func (m *model) taken(id string) bool { _, ok := m.byID[id]; return ok }

// add appends e, stored by the backend, to the model's log by the root
// package's replay.
func (m *model) add(e sessiontree.Entry) error {
	e.Seq = int64(len(m.log) + 1)
	f := sessiontree.EffectsOf(e, "")
	if err := m.r.Next(e, &f, m.earlier()); err != nil {
		return fmt.Errorf("the model refuses %s: %w", e.Raw, err)
	}
	m.byID[e.ID] = len(m.log)
	m.log = append(m.log, e)
	m.tally.Add(e)
	return nil
}

// liveClaim reports whether someone holds a live claim at now.
func (m *model) liveClaim(now time.Time) bool {
	return m.claim.holder != "" && m.claim.expires.After(now)
}

// handle is a writer: the session's storage, or a claim on it.
type handle struct {
	st     sessiontree.Storage
	claim  sessiontree.Claim // nil for the plain storage
	holder string
	fence  int64
	ttl    time.Duration
	// primary: taken through the session's storage, not the other
	// handle's, so closed with its database when that is reopened.
	primary bool
	// dead: the session the claim was taken on was deleted since;
	// closed: its database was closed (reopened) since.
	dead, closed bool
}

// writeErrs are the errors a write through w may meet at now beyond its
// own: a stale claim, or another holder's live claim.
func (m *model) writeErrs(w *handle, now time.Time) []error {
	switch {
	case w.closed:
		return []error{sessiontree.ErrClosed}
	case w.dead:
		return []error{sessiontree.ErrNotFound, sessiontree.ErrStaleClaim}
	case w.claim != nil && (w.fence != m.claim.fence || m.claim.holder != w.holder):
		return []error{sessiontree.ErrStaleClaim}
	case w.claim == nil && m.liveClaim(now):
		return []error{sessiontree.ErrLocked}
	}
	return nil
}

// releaseErrs are the errors a Release through w may return, given
// those of a write (writeErrs): none when w's claim is the one released
// last and nobody claimed the session since (releasing it again).
func (m *model) releaseErrs(w *handle, writeErrs []error) []error {
	if !w.closed && !w.dead && w.claim != nil && m.claim.holder == "" && m.claim.fence == w.fence {
		return nil
	}
	return writeErrs
}

// renewed renews the claim w wrote through, after a write that succeeded.
func (m *model) renewed(w *handle, now time.Time) {
	if w.claim != nil {
		m.claim.expires = now.Add(w.ttl)
	}
}

// sentinels are the root errors a result is classed by.
var sentinels = []error{
	sessiontree.ErrInvalidEntry, sessiontree.ErrConflict, sessiontree.ErrNotFound, sessiontree.ErrLocked,
	sessiontree.ErrStaleClaim, sessiontree.ErrBadClaim, sessiontree.ErrEditRefused, sessiontree.ErrCorrupt,
	sessiontree.ErrClosed,
}

// wantResult checks got against the errors the model allows: none means
// success; otherwise got must match the sentinel of one of them.
func wantResult(got error, allowed []error) error {
	if len(allowed) == 0 {
		if got != nil {
			return fmt.Errorf("failed: %w; the model expects success", got)
		}
		return nil
	}
	for _, want := range allowed {
		for _, s := range sentinels {
			if errors.Is(want, s) && errors.Is(got, s) {
				return nil
			}
		}
	}
	return fmt.Errorf("returned %v; the model expects one of %v", got, allowed)
}

var entryIDPattern = regexp.MustCompile(`^[0-9a-f]{8}$`)

// checkStored checks e, returned by a write of draft d under parent,
// against what the root package's BuildEntry makes of d: the id given
// or a fresh one, the timestamp given or a valid one, the bytes.
func (m *model) checkStored(e sessiontree.Entry, d sessiontree.Draft, parent string) error {
	switch {
	case d.ID != "" && e.ID != d.ID:
		return fmt.Errorf("stored id %q; the draft's is %q", e.ID, d.ID)
	case d.ID == "" && !entryIDPattern.MatchString(e.ID):
		return fmt.Errorf("fresh id %q is not 8 lowercase hex characters", e.ID)
	case d.ID == "" && m.taken(e.ID):
		return fmt.Errorf("fresh id %q is taken", e.ID)
	case d.Timestamp != "" && e.Timestamp != d.Timestamp:
		return fmt.Errorf("stored timestamp %q; the draft's is %q", e.Timestamp, d.Timestamp)
	case e.ParentID != parent:
		return fmt.Errorf("stored %s under %q; want under %q", e.ID, e.ParentID, parent)
	case e.Seq != int64(len(m.log)+1):
		return fmt.Errorf("stored %s with seq %d; want %d", e.ID, e.Seq, len(m.log)+1)
	}
	if _, err := sessiontree.ParseTime(e.Timestamp); d.Timestamp == "" && err != nil {
		return fmt.Errorf("stored timestamp %q: %w", e.Timestamp, err)
	}
	want, err := sessiontree.BuildEntry(d, e.ID, parent, e.Timestamp)
	if err != nil {
		return fmt.Errorf("the model refuses the draft the backend took: %w", err)
	}
	if string(want.Raw) != string(e.Raw) || want.Type != e.Type {
		return fmt.Errorf("stored %s; BuildEntry gives %s", e.Raw, want.Raw)
	}
	return nil
}

// appendErrs are the errors an append of d under parent (checked to
// exist when under) guarded by opts may meet, by the root package's
// rules; the entry it would store, when it meets none and d has an id.
func (m *model) appendErrs(d sessiontree.Draft, opts sessiontree.AppendOptions, parent string, under bool) []error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(sessiontree.CheckDraft(d))
	add(sessiontree.CheckLeafGuard(opts, m.r.Leaf))
	if _, ok := m.byID[parent]; under && parent != "" && !ok {
		add(&sessiontree.EntryNotFoundError{ID: parent})
	}
	id := d.ID
	if id == "" {
		id = "0fresh00"
	} else if _, ok := m.byID[id]; ok {
		add(fmt.Errorf("id %s taken: %w", id, sessiontree.ErrConflict))
	}
	ts := d.Timestamp
	if ts == "" {
		ts = "2026-12-07T10:00:00.000Z"
	}
	e, err := sessiontree.BuildEntry(d, id, parent, ts)
	add(err)
	if err == nil {
		f := sessiontree.EffectsOf(e, "")
		add(sessiontree.CheckNewTarget(&f, m.earlier()))
	}
	return errs
}

// modelRun is one run of a sequence of ops: the backend's session, its
// writers, the model and the clock.
type modelRun struct {
	t   testing.TB
	h   ModelHarness
	ctx context.Context
	clk *modelClock
	st  sessiontree.Storage
	// other is the session opened again through another handle on its
	// database (another process), nil when the harness has none; rd is
	// the one a compare reads.
	other, rd sessiontree.Storage
	m         *model
	claims    []*handle
	reads     uint64 // counts compare calls, to vary what they read
	meta      sessiontree.SessionMeta
}

func newModelRun(t testing.TB, h ModelHarness) *modelRun {
	t.Helper()
	r := &modelRun{t: t, h: h, ctx: context.Background(), clk: newModelClock(), m: newModel()}
	r.st = h.New(t, r.clk.now)
	r.openOther()
	var err error
	if r.meta, err = r.st.Meta(r.ctx); err != nil {
		t.Fatal(err)
	}
	return r
}

// closeAll closes the session, so that the harness's cleanups find it
// closed or close it themselves.
func (r *modelRun) closeAll() {}

// openOther opens the session through another handle, when the harness
// can.
func (r *modelRun) openOther() {
	if r.h.Other != nil {
		r.other = r.h.Other(r.t, r.st, r.clk.now)
	}
}

// plain picks from n a writer without a claim: the session's storage,
// or the other handle's.
func (r *modelRun) plain(n int) *handle {
	if r.other != nil && n%2 == 1 {
		return &handle{st: r.other}
	}
	return &handle{st: r.st}
}

// writer picks the writer of a step from n: a plain storage, or one of
// the claims taken.
func (r *modelRun) writer(n int) *handle {
	if len(r.claims) == 0 || n%3 != 0 {
		return r.plain(n / 3)
	}
	return r.claims[n%len(r.claims)]
}

// writerStorage is the storage a write through w goes to.
func (w *handle) storage() sessiontree.Storage {
	if w.claim != nil {
		return w.claim
	}
	return w.st
}

func (w *handle) String() string {
	if w.claim == nil {
		return "plain"
	}
	return fmt.Sprintf("claim %s#%d", w.holder, w.fence)
}
