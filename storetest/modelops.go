package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/sessiontree/sessiontree"
)

// opKind is what a step of a run does.
type opKind int

const (
	opAppend opKind = iota
	opAppendUnder
	opAppendAll
	opBatch
	opSetLeaf
	opMove
	opCompact
	opLabel
	opName
	opEdit
	opClaim
	opRenew
	opRelease
	opAdvance
	opReopen
	opDelete
	nOps
)

// opWeights are how often each kind is drawn.
var opWeights = [nOps]int{
	opAppend: 14, opAppendUnder: 2, opAppendAll: 2, opBatch: 2, opSetLeaf: 4, opMove: 2, opCompact: 2,
	opLabel: 2, opName: 1, opEdit: 2, opClaim: 3, opRenew: 1, opRelease: 1, opAdvance: 3, opReopen: 1, opDelete: 1,
}

// op is one step: its kind, and the seed its arguments are drawn from.
type op struct {
	kind opKind
	seed uint64
}

// randomOps draws n steps for a backend h drives.
func randomOps(rng *rand.Rand, n int, h ModelHarness) []op {
	total := 0
	for k, w := range opWeights {
		if usable(opKind(k), h) {
			total += w
		}
	}
	ops := make([]op, 0, n)
	for len(ops) < n {
		r := rng.IntN(total)
		for k, w := range opWeights {
			if !usable(opKind(k), h) {
				continue
			}
			if r -= w; r < 0 {
				ops = append(ops, op{kind: opKind(k), seed: rng.Uint64()})
				break
			}
		}
	}
	return ops
}

// usable reports whether h can run steps of kind k.
func usable(k opKind, h ModelHarness) bool {
	return k != opDelete || h.DB != nil && h.Recreate != nil
}

// step runs o and updates the model; it returns what it did and how the
// backend's answer differed from the model's.
func (r *modelRun) step(o op) (string, error) {
	d := &drawer{rng: rand.New(rand.NewPCG(o.seed, 13)), m: r.m, nul: !r.h.NoNUL}
	switch o.kind {
	case opAppend, opAppendUnder:
		return r.appendOne(d, o.kind == opAppendUnder)
	case opAppendAll:
		return r.appendAll(d)
	case opBatch:
		return r.batch(d)
	case opSetLeaf:
		return r.setLeaf(d)
	case opMove, opCompact, opLabel, opName, opEdit:
		return r.sessionWrite(o.kind, d)
	case opClaim, opRenew, opRelease:
		return r.claimStep(o.kind, d)
	case opAdvance:
		dt := []time.Duration{time.Second, 10 * time.Second, 29 * time.Second, 30 * time.Second, 31 * time.Second}[d.intn(5)]
		if d.oneIn(3) && r.m.claim.holder != "" {
			dt = max(r.m.claim.expires.Sub(r.clk.now()), 0) // to the lease's end exactly
		}
		r.clk.advance(dt)
		return fmt.Sprintf("clock +%s", dt), nil
	case opReopen:
		r.st = r.h.Reopen(r.t, r.st, r.clk.now)
		for _, c := range r.claims {
			c.closed = c.closed || c.primary // closed with its database; its lease is kept
		}
		return "reopen", nil
	}
	return r.deleteStep(d)
}

// now is a timestamp of the run's clock, as entries carry them.
func (r *modelRun) now() string { return sessiontree.FormatTime(r.clk.now()) }

func (r *modelRun) appendOne(d *drawer, under bool) (string, error) {
	w := r.writer(d.intn(6))
	dr, opts := d.draft(r.now()), d.guard()
	parent := r.m.r.Leaf
	if under {
		parent = d.ref()
	}
	what := fmt.Sprintf("Append %s %s id=%q ts=%q guard=%v via %s", dr.Type, dr.Fields, dr.ID, dr.Timestamp, guardOf(opts), w)
	allowed := append(r.m.writeErrs(w, r.clk.now()), r.m.appendErrs(dr, opts, parent, under)...)
	var e sessiontree.Entry
	var err error
	if under {
		what = fmt.Sprintf("AppendUnder %q: %s", parent, what)
		e, err = w.storage().AppendUnder(r.ctx, parent, dr, opts)
	} else {
		e, err = w.storage().Append(r.ctx, dr, opts)
	}
	if err := wantResult(err, allowed); err != nil || len(allowed) > 0 {
		return what, err
	}
	return what + " -> " + e.ID, r.stored(w, e, dr, parent)
}

// stored checks e, the entry a write through w stored from dr under
// parent, and adds it to the model.
func (r *modelRun) stored(w *handle, e sessiontree.Entry, dr sessiontree.Draft, parent string) error {
	if err := r.m.checkStored(e, dr, parent); err != nil {
		return err
	}
	r.m.renewed(w, r.clk.now())
	return r.m.add(e)
}

func guardOf(opts sessiontree.AppendOptions) string {
	if opts.IfLeaf == nil {
		return "none"
	}
	return fmt.Sprintf("%q", *opts.IfLeaf)
}

// allAppender is a storage that appends drafts in one transaction
// ([sessiontree.DatabaseSession]'s AppendAll).
type allAppender interface {
	AppendAll(ctx context.Context, drafts []sessiontree.Draft, opts sessiontree.AppendOptions) ([]sessiontree.Entry, error)
}

func (r *modelRun) appendAll(d *drawer) (string, error) {
	w := r.writer(d.intn(6))
	aa, ok := w.storage().(allAppender)
	if !ok {
		return "AppendAll: not a DatabaseSession", nil
	}
	drafts := make([]sessiontree.Draft, 1+d.intn(4))
	for i := range drafts {
		drafts[i] = d.draft(r.now())
	}
	opts := d.guard()
	what := fmt.Sprintf("AppendAll %d drafts guard=%s via %s", len(drafts), guardOf(opts), w)
	// Each draft goes under the one before it: predict on a copy.
	scratch, guard, failed := r.m.clone(), opts, false
	allowed := r.m.writeErrs(w, r.clk.now())
	for i, dr := range drafts {
		what += fmt.Sprintf("\n       %s %s id=%q", dr.Type, dr.Fields, dr.ID)
		errs := scratch.appendErrs(dr, guard, scratch.r.Leaf, false)
		if i > 0 && dr.ID != "" && slices.ContainsFunc(drafts[:i], func(o sessiontree.Draft) bool { return o.ID == dr.ID }) {
			errs = append(errs, sessiontree.ErrConflict)
		}
		allowed = append(allowed, errs...)
		if len(errs) > 0 || failed {
			// A backend may check every draft before the first write:
			// the refusal of any later draft may come first.
			failed = true
			continue
		}
		guard = sessiontree.AppendOptions{} // the guard is checked once
		id := dr.ID
		if id == "" {
			id = fmt.Sprintf("0fresh%02d", i)
		}
		e, _ := sessiontree.BuildEntry(dr, id, scratch.r.Leaf, "2026-12-07T10:00:00.000Z")
		if err := scratch.add(e); err != nil {
			return what, err
		}
	}
	got, err := aa.AppendAll(r.ctx, drafts, opts)
	if err := wantResult(err, allowed); err != nil || len(allowed) > 0 {
		return what, err
	}
	if len(got) != len(drafts) {
		return what, fmt.Errorf("stored %d entries of %d drafts", len(got), len(drafts))
	}
	for i, e := range got {
		if err := r.stored(w, e, drafts[i], r.m.r.Leaf); err != nil {
			return what, err
		}
	}
	return what, nil
}

// clone copies the model, for a prediction that must not change it.
func (m *model) clone() *model {
	c := &model{log: slices.Clone(m.log), byID: make(map[string]int, len(m.byID)), r: m.r, claim: m.claim}
	for k, v := range m.byID {
		c.byID[k] = v
	}
	c.r.Labels = make(map[string]string, len(m.r.Labels))
	for k, v := range m.r.Labels {
		c.r.Labels[k] = v
	}
	c.tally = sessiontree.ResumeTally(m.tally.Stats(), m.tally.Buckets())
	return c
}

func (r *modelRun) batch(d *drawer) (string, error) {
	w := r.writer(d.intn(6))
	ba, ok := w.storage().(sessiontree.BatchAppender)
	if !ok {
		return "AppendBatch: not a BatchAppender", nil
	}
	scratch := r.m.clone()
	allowed := r.m.writeErrs(w, r.clk.now())
	var entries []sessiontree.Entry
	parent := d.ref()
	what := fmt.Sprintf("AppendBatch via %s", w)
	for range 1 + d.intn(4) {
		dr := d.draft(r.now())
		if dr.ID == "" {
			dr.ID = fmt.Sprintf("%08x", d.rng.Uint32())
		}
		if dr.Timestamp == "" {
			dr.Timestamp = r.now()
		}
		if dr.Type == sessiontree.TypeLeaf || d.oneIn(8) {
			dr.Type, dr.Fields = sessiontree.TypeLeaf, []byte(`{"targetId":`+quoted(d.ref())+`}`)
		}
		e, err := sessiontree.BuildEntry(dr, dr.ID, parent, dr.Timestamp)
		if err != nil {
			continue // a draft no entry can be made of
		}
		what += fmt.Sprintf("\n       %s", e.Raw)
		entries = append(entries, e)
		// A backend may check every entry's fields, or its targets,
		// before the tree: any entry's refusal may come first.
		switch err := e.Validate(); {
		case err != nil:
			allowed = append(allowed, err)
		case r.m.taken(e.ID):
			// Stored before the batch: a conflict, not bad data.
			allowed = append(allowed, &sessiontree.IDTakenError{ID: e.ID})
		default:
			// Each check on effects of its own: CheckTarget clears the
			// label of a missing target it lets through, and a second
			// look at the same effects would refuse it.
			f, g := sessiontree.EffectsOf(e, ""), sessiontree.EffectsOf(e, "")
			for _, err := range []error{sessiontree.CheckBatchEntry(e, &f, scratch.earlier()),
				sessiontree.CheckTarget(&g, scratch.earlier()), scratch.add(e)} {
				if err != nil {
					allowed = append(allowed, err)
				}
			}
		}
		parent = e.ID
	}
	if len(entries) == 0 && !w.closed {
		allowed = nil // writes nothing: no claim to check
	}
	err := ba.AppendBatch(r.ctx, entries)
	if err := wantResult(err, allowed); err != nil || len(allowed) > 0 {
		return what, err
	}
	r.m.renewed(w, r.clk.now())
	for _, e := range entries {
		if err := r.m.add(e); err != nil {
			return what, err
		}
	}
	return what, nil
}

func (r *modelRun) setLeaf(d *drawer) (string, error) {
	w := r.writer(d.intn(6))
	target, opts := d.ref(), d.guard()
	what := fmt.Sprintf("SetLeaf %q guard=%s via %s", target, guardOf(opts), w)
	allowed := r.m.writeErrs(w, r.clk.now())
	if err := sessiontree.CheckLeafGuard(opts, r.m.r.Leaf); err != nil {
		allowed = append(allowed, err)
	}
	if target != "" && !r.m.taken(target) {
		allowed = append(allowed, &sessiontree.EntryNotFoundError{ID: target})
	}
	e, err := w.storage().SetLeaf(r.ctx, target, opts)
	if err := wantResult(err, allowed); err != nil || len(allowed) > 0 {
		return what, err
	}
	dr, err := sessiontree.LeafDraft(target)
	if err != nil {
		return what, err
	}
	return what + " -> " + e.ID, r.stored(w, e, dr, r.m.r.Leaf)
}

// sessionWrite runs one of Session's writes, whose entries the model
// takes from the log once it has checked how many were written where.
func (r *modelRun) sessionWrite(k opKind, d *drawer) (string, error) {
	w := r.writer(d.intn(6))
	s := sessiontree.NewSession(w.storage(), sessiontree.SessionOptions{Now: r.clk.now})
	allowed := r.m.writeErrs(w, r.clk.now())
	parent := r.m.r.Leaf
	var what string
	var err error
	switch k {
	case opMove:
		target := d.ref()
		what = fmt.Sprintf("MoveTo %q", target)
		if target != "" && !r.m.taken(target) {
			allowed = append(allowed, &sessiontree.EntryNotFoundError{ID: target})
		}
		var sum *sessiontree.BranchSummary
		if d.oneIn(2) {
			sum = &sessiontree.BranchSummary{Summary: "left behind", Usage: json.RawMessage(d.usageJSON())}
			what, parent = what+" with a summary", target
		}
		_, err = s.MoveTo(r.ctx, target, sum)
	case opCompact:
		c := sessiontree.Compaction{Summary: "compacted", TokensBefore: 1000}
		switch d.intn(4) {
		case 0:
			c.FirstKeptEntryID = d.existing()
		case 1:
			c.FirstKeptEntryID = d.ref()
		case 2:
			c.RetainedTail = []json.RawMessage{json.RawMessage(`{"role":"user","content":"kept","timestamp":1}`)}
		}
		what = fmt.Sprintf("AppendCompaction keep=%q tail=%v", c.FirstKeptEntryID, c.RetainedTail != nil)
		_, err = s.AppendCompaction(r.ctx, c)
	case opLabel:
		target, label := d.ref(), d.text("star")
		what = fmt.Sprintf("SetLabel %q %q", target, label)
		if !r.m.taken(target) {
			allowed = append(allowed, &sessiontree.EntryNotFoundError{ID: target})
		}
		_, err = s.SetLabel(r.ctx, target, label)
	case opName:
		name := d.text("Refactor")
		what = fmt.Sprintf("SetName %q", name)
		_, err = s.SetName(r.ctx, name)
	case opEdit:
		target := d.ref()
		repl := []json.RawMessage{nil, json.RawMessage(`"edited"`), json.RawMessage(`[{"type":"text","text":"blocks"}]`)}[d.intn(3)]
		what = fmt.Sprintf("EditContext %q %s", target, repl)
		allowed = append(allowed, r.m.editErrs(target)...)
		_, err = s.EditContext(r.ctx, target, repl)
	}
	what += " via " + w.String()
	if err := wantResult(err, allowed); err != nil || len(allowed) > 0 {
		return what, err
	}
	return what, r.adopt(w, parent)
}

// editErrs are the refusals of a context edit of target by pi's rules:
// a missing target, one off the active branch, one that contributes no
// editable content.
func (m *model) editErrs(target string) []error {
	e, ok := m.lookup(target)
	if !ok {
		return []error{&sessiontree.EntryNotFoundError{ID: target}}
	}
	full, err := sessiontree.WalkPath(context.Background(), m.r.Leaf, true, len(m.log)+1, m.lookup)
	if err != nil || !slices.ContainsFunc(full, func(p sessiontree.Entry) bool { return p.ID == target }) {
		return []error{sessiontree.ErrEditRefused}
	}
	switch sessiontree.MessageInfoOf(e).Role {
	case "user", "assistant", "toolResult":
		return nil
	}
	if e.Type == sessiontree.TypeCustomMessage {
		return nil
	}
	return []error{sessiontree.ErrEditRefused}
}

// adopt takes into the model the one entry a Session write through w
// stored, checking it went under parent.
func (r *modelRun) adopt(w *handle, parent string) error {
	got, err := w.storage().Log(r.ctx, int64(len(r.m.log)), 0)
	if err != nil {
		return fmt.Errorf("Log after the write: %w", err)
	}
	if len(got) != 1 {
		return fmt.Errorf("the write stored %d entries; want 1", len(got))
	}
	if got[0].ParentID != parent {
		return fmt.Errorf("stored %s under %q; want under %q", got[0].ID, got[0].ParentID, parent)
	}
	r.m.renewed(w, r.clk.now())
	return r.m.add(got[0])
}

func (r *modelRun) claimStep(k opKind, d *drawer) (string, error) {
	now := r.clk.now()
	if k == opClaim {
		return r.claim(d, now)
	}
	if len(r.claims) == 0 {
		return "no claim to renew or release", nil
	}
	w := r.claims[d.intn(len(r.claims))]
	allowed := r.m.writeErrs(w, now)
	if k == opRenew {
		err := wantResult(w.claim.Renew(r.ctx), allowed)
		if err == nil && len(allowed) == 0 {
			r.m.renewed(w, now)
		}
		return "Renew " + w.String(), err
	}
	allowed = r.m.releaseErrs(w, allowed)
	err := wantResult(w.claim.Release(r.ctx), allowed)
	if err == nil && len(allowed) == 0 {
		r.m.claim.holder, r.m.claim.expires = "", time.Time{}
	}
	return "Release " + w.String(), err
}

// claim takes a claim on the session at now.
func (r *modelRun) claim(d *drawer, now time.Time) (string, error) {
	via := r.plain(d.intn(2)).st
	cl, ok := via.(sessiontree.Claimer)
	if !ok {
		return "Claim: not a Claimer", nil
	}
	holder := []string{"agent-a", "agent-b", "agent-a", ""}[d.intn(4)]
	ttl := []time.Duration{0, 10 * time.Second, 30 * time.Second}[d.intn(3)]
	what := fmt.Sprintf("Claim %q ttl %s", holder, ttl)
	var allowed []error
	switch {
	case holder == "":
		allowed = append(allowed, sessiontree.ErrBadClaim)
	case r.m.liveClaim(now) && r.m.claim.holder != holder:
		allowed = append(allowed, sessiontree.ErrLocked)
	}
	c, err := cl.Claim(r.ctx, holder, ttl)
	if err := wantResult(err, allowed); err != nil || len(allowed) > 0 {
		return what, err
	}
	if ttl == 0 {
		ttl = sessiontree.DefaultClaimTTL
	}
	m := r.m
	m.claim.holder, m.claim.fence, m.claim.expires = holder, m.claim.fence+1, now.Add(ttl)
	if c.Holder() != holder || c.Fence() != m.claim.fence {
		return what, fmt.Errorf("claim %q fence %d; the model has %q fence %d", c.Holder(), c.Fence(), holder, m.claim.fence)
	}
	r.claims = append(r.claims, &handle{st: via, primary: via == r.st, claim: c, holder: holder, fence: c.Fence(), ttl: ttl})
	return what + fmt.Sprintf(" -> fence %d", c.Fence()), nil
}

// deleteStep deletes the session, checks the storage then finds it
// gone, and makes it again, empty, with the same id, which the deleted
// session's storage does not find.
func (r *modelRun) deleteStep(d *drawer) (string, error) {
	force := d.oneIn(2)
	what := fmt.Sprintf("Delete force=%v", force)
	var allowed []error
	if !force && r.m.liveClaim(r.clk.now()) {
		allowed = append(allowed, sessiontree.ErrLocked)
	}
	err := r.h.DB(r.st).DeleteSession(r.ctx, sessionID(r.st), sessiontree.DeleteOptions{Force: force})
	if err := wantResult(err, allowed); err != nil || len(allowed) > 0 {
		return what, err
	}
	if _, err := r.st.Leaf(r.ctx); !errors.Is(err, sessiontree.ErrNotFound) {
		return what, fmt.Errorf("Leaf of the deleted session = %v; want ErrNotFound", err)
	}
	if err := appendText(r.st, "after delete"); !errors.Is(err, sessiontree.ErrNotFound) {
		return what, fmt.Errorf("Append to the deleted session = %v; want ErrNotFound", err)
	}
	if r.other != nil {
		if _, err := r.other.Leaf(r.ctx); !errors.Is(err, sessiontree.ErrNotFound) {
			return what, fmt.Errorf("Leaf of the deleted session through another handle = %v; want ErrNotFound", err)
		}
	}
	deleted := r.st
	r.st = r.h.Recreate(r.t, r.st, r.meta)
	// A handle is the session it opened, not its id: another session
	// made with the id is not read through it (store.Push relies on it).
	if _, err := deleted.Leaf(r.ctx); !errors.Is(err, sessiontree.ErrNotFound) {
		return what, fmt.Errorf("Leaf of the deleted session once it is made again = %v; want ErrNotFound", err)
	}
	r.openOther()
	r.m = newModel()
	for _, c := range r.claims {
		c.dead = true
	}
	return what, nil
}
