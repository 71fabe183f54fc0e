package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/sessiontree/sessiontree"
)

// PushOptions say what a [Push] copies and how.
type PushOptions struct {
	// Sessions are the sessions to push, each a full id or a unique
	// prefix in the source; none means every session of the source.
	Sessions []string
	// BatchEntries is how many entries one transaction on the target
	// appends; 0 means [DefaultPushBatch]. An interruption leaves every
	// batch before it committed, so a rerun continues from there.
	BatchEntries int
	// BatchBytes bounds the entries' JSON one batch holds: it takes
	// entries until they hold that much, so the last one may pass it (a
	// batch has one entry at least); 0 means [DefaultPushBatchBytes].
	BatchBytes int
	// Progress, when set, is called before the first batch and after
	// every batch committed.
	Progress func(PushProgress)
	// Verb is what Push calls the copy in what it says: the step its
	// errors begin with ("push: session 0198f2a4 not found") and the
	// reasons of results that name the copy ([PushDeletedReason]). ""
	// means "push"; the command's pull, the same copy asked for by the
	// database copied into, gives "pull".
	Verb string
}

// verb returns [PushOptions.Verb], "push" when it is empty.
func (o PushOptions) verb() string {
	if o.Verb == "" {
		return "push"
	}
	return o.Verb
}

// DefaultPushBatch is how many entries a [Push] appends per transaction
// on the target unless told otherwise: enough to amortize a commit (an
// fsync on SQLite, a round trip on PostgreSQL). A batch of large entries
// is cut sooner, by [DefaultPushBatchBytes].
const DefaultPushBatch = 4096

// DefaultPushBatchBytes is how much of the entries' JSON a [Push] holds
// in memory and appends per transaction unless told otherwise, whatever
// the count: as much as an import commits at once.
const DefaultPushBatchBytes = 8 << 20

// PushProgress is how far a [Push] has come.
type PushProgress struct {
	// Entries counts the entries appended so far, of EntriesTotal to
	// append.
	Entries, EntriesTotal int64
	// Sessions counts the sessions finished, of SessionsTotal.
	Sessions, SessionsTotal int
}

// PushStatus is what a [Push] did with one session.
type PushStatus string

// The statuses of a [PushResult].
const (
	// PushPushed: entries the target lacked were appended (a session it
	// lacked was created).
	PushPushed PushStatus = "pushed"
	// PushUpToDate: the target already had every entry (and may have
	// more of its own: the source's session is a prefix of the target's).
	PushUpToDate PushStatus = "up-to-date"
	// PushConflict: the target's session is not a prefix of the
	// source's; it was left alone.
	PushConflict PushStatus = "conflict"
	// PushClaimed: another writer holds a live claim on the target's
	// session; it was left alone.
	PushClaimed PushStatus = "claimed"
	// PushFailed: an error stopped the session's push; the batches
	// before it are committed.
	PushFailed PushStatus = "failed"
	// PushSkipped: the session was deleted at the source while the push
	// ran (after the listing, or the naming, that found it): there is
	// nothing left to push, which is not a failure. The batches before
	// the delete stay on the target, a prefix of the source's session as
	// it was; a target that lacked the session is not given one.
	PushSkipped PushStatus = "skipped"
)

// PushDeletedReason returns the [PushResult.Reason] of a [PushSkipped]
// session of a copy called verb ([PushOptions.Verb]; "" is "push").
func PushDeletedReason(verb string) string {
	return "deleted at the source during the " + PushOptions{Verb: verb}.verb()
}

// PushRemadeReason begins the [PushResult.Reason] of a session deleted
// at the source during its push and made again there with the same id,
// when the target's copy of the first is not a prefix of the second's,
// or when it was made again once more after the push planned it again
// three times (as often as it does for one session): a conflict.
const PushRemadeReason = "deleted at the source and made again there with its id while it was copied"

// PushResult is one session's line of a [PushReport].
type PushResult struct {
	// Session is the session id.
	Session string `json:"session"`
	// Status says what happened.
	Status PushStatus `json:"status"`
	// Pushed counts the entries appended to the target.
	Pushed int64 `json:"pushed"`
	// Reason says why a session was not pushed in full, "" otherwise.
	Reason string `json:"reason,omitempty"`
	// Err is the error behind Reason: a [*PushConflictError] (matching
	// sessiontree.ErrConflict) for a conflict, a
	// *sessiontree.ClaimedError (matching sessiontree.ErrLocked) for a
	// claim, the error met for a failure, and for a skip the source's,
	// matching sessiontree.ErrNotFound, when asked for the session after
	// its copy stopped.
	Err error `json:"-"`
}

// PushReport is what a [Push] did, one result per session in the order
// they were pushed.
type PushReport struct {
	Results []PushResult `json:"sessions"`
}

// Count returns how many results have status st.
func (r PushReport) Count(st PushStatus) int {
	n := 0
	for _, res := range r.Results {
		if res.Status == st {
			n++
		}
	}
	return n
}

// OK reports that every session was pushed, up to date, or skipped
// (deleted at the source during the push): [PushReport.Unfinished] is 0.
func (r PushReport) OK() bool { return r.Unfinished() == 0 }

// Unfinished counts the sessions not pushed in full: in conflict,
// claimed or failed. A session skipped, deleted at the source during the
// push, is not one: nothing of it was left to push.
func (r PushReport) Unfinished() int {
	return len(r.Results) - r.Count(PushPushed) - r.Count(PushUpToDate) - r.Count(PushSkipped)
}

// PushTotals counts what a [Push] did over every session, as the
// command's totals line and its --json's "totals" say it.
type PushTotals struct {
	// Sessions counts the results.
	Sessions int `json:"sessions"`
	// Entries counts the entries appended over every session, those of
	// sessions not pushed in full included.
	Entries int64 `json:"entries"`
	// Pushed, UpToDate, Conflict, Claimed, Failed and Skipped count the
	// results of each status.
	Pushed   int `json:"pushed"`
	UpToDate int `json:"upToDate"`
	Conflict int `json:"conflict"`
	Claimed  int `json:"claimed"`
	Failed   int `json:"failed"`
	Skipped  int `json:"skipped"`
}

// Totals returns the report's [PushTotals].
func (r PushReport) Totals() PushTotals {
	t := PushTotals{Sessions: len(r.Results), Pushed: r.Count(PushPushed), UpToDate: r.Count(PushUpToDate),
		Conflict: r.Count(PushConflict), Claimed: r.Count(PushClaimed), Failed: r.Count(PushFailed), Skipped: r.Count(PushSkipped)}
	for _, res := range r.Results {
		t.Entries += res.Pushed
	}
	return t
}

// PushConflictError says why a target's session cannot take the
// source's entries. It matches sessiontree.ErrConflict.
type PushConflictError struct {
	// Session is the session id.
	Session string
	// Reason says what differs.
	Reason string
}

func (e *PushConflictError) Error() string {
	return fmt.Sprintf("session %s differs on the target: %s", e.Session, e.Reason)
}

// Is makes errors.Is(err, sessiontree.ErrConflict) true.
func (e *PushConflictError) Is(target error) bool { return target == sessiontree.ErrConflict }

// Push copies sessions from one store to another, which may be of
// another engine: for each session only the entries the target lacks,
// byte for byte, appended in transactions of opts.BatchEntries entries,
// so that it is incremental, idempotent and, after an interruption,
// continues where the last committed batch ended. A session the target
// lacks is created with the source's id, header (cwd, created time,
// parent session) and metadata; its name and labels are entries and come
// with them.
//
// A session whose target copy is not a prefix of the source's nor the
// source's a prefix of it (another header, or other entries where they
// overlap: both were written to) is a conflict and is left alone; a
// target that is ahead, holding every entry of the source's and more, is
// up to date; a session another
// writer holds a live claim on in the target is reported as claimed.
// Either is a result, not an error: Push goes on with the next session.
// So is a session deleted at the source during the push
// ([PushSkipped]). One deleted at the source and made again there with
// the same id during its push is another session, and the entries of
// the two are never mixed: it is pushed as it is now when the target
// holds none of the first's entries or a prefix of it, and is a
// conflict otherwise ([PushRemadeReason]), the target keeping what it
// had; made again over and over, a fourth time during its push, it is
// such a conflict too.
// The error Push returns is one that stops it all (listing the source,
// or ctx ended), with the report of what was done until then.
func Push(ctx context.Context, from, to *Store, opts PushOptions) (PushReport, error) {
	if opts.BatchEntries <= 0 {
		opts.BatchEntries = DefaultPushBatch
	}
	if opts.BatchBytes <= 0 {
		opts.BatchBytes = DefaultPushBatchBytes
	}
	ids, err := pushIDs(ctx, from, opts.Sessions)
	if err != nil {
		return PushReport{}, fmt.Errorf("%s: %w", opts.verb(), err)
	}
	p := pusher{from: from, to: to, opts: opts}
	plans := make([]pushPlan, 0, len(ids))
	defer func() {
		for _, pl := range plans {
			pl.close() // those an error left unpushed
		}
	}()
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return p.report, fmt.Errorf("%s: %w", opts.verb(), err)
		}
		pl, res := p.plan(ctx, id, false)
		if res != nil {
			p.report.Results = append(p.report.Results, *res)
			continue
		}
		plans = append(plans, pl)
		p.progress.EntriesTotal += pl.want - pl.have
	}
	p.progress.SessionsTotal = len(plans)
	p.tell()
	for i, pl := range plans {
		plans[i].src = nil // push closes it
		res := p.push(ctx, pl)
		p.report.Results = append(p.report.Results, res)
		p.progress.Sessions++
		p.tell()
		if err := ctx.Err(); err != nil {
			return p.report, fmt.Errorf("%s: %w", opts.verb(), err)
		}
	}
	return p.report, nil
}

// pushIDs returns the full ids of the sessions to push: those named,
// each once however many names it has (every session is planned before
// the first is pushed, so a second plan of one would be stale), or every
// session of the source, listed in one snapshot.
func pushIDs(ctx context.Context, from *Store, named []string) ([]string, error) {
	var ids []string
	if len(named) > 0 {
		seen := make(map[string]bool, len(named))
		for _, n := range named {
			id, err := from.Resolve(ctx, n)
			if err != nil {
				return nil, err
			}
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		return ids, nil
	}
	all, err := from.ListN(ctx, ListOptions{}, 0)
	for _, in := range all {
		ids = append(ids, in.ID)
	}
	return ids, err
}

// pusher is one run of [Push]. It is not safe for concurrent use.
type pusher struct {
	from, to *Store
	opts     PushOptions
	report   PushReport
	progress PushProgress
}

// pushPlan is what one session's push has to do: append the source's
// entries have+1..want to the target, creating it first when it lacks
// the session.
type pushPlan struct {
	id string
	// src is the source's session, open from the plan to the end of the
	// copy, which reads it: the session the plan compared, never another
	// made since with its id (an engine's session reads its own rows,
	// found no more once it is deleted).
	src        sessiontree.DatabaseSession
	meta       sessiontree.SessionMeta
	info       SessionInfo // src's row
	have, want int64
	exists     bool
}

// close closes the plan's source session.
func (pl pushPlan) close() {
	if pl.src != nil {
		pl.src.Close()
	}
}

func (p *pusher) tell() {
	if p.opts.Progress != nil {
		p.opts.Progress(p.progress)
	}
}

// plan compares session id on both sides; a session that needs no
// batches (up to date, a conflict, an error) gets its result at once,
// and its plan holds no session open. A session deleted at the source
// and made again there with its id while it is planned is planned
// again, as it is now (pushReplans times at most); remade says it was
// made again during the push before this plan ([pusher.ended]).
func (p *pusher) plan(ctx context.Context, id string, remade bool) (pushPlan, *PushResult) {
	for tries := 0; ; tries++ {
		pl, err := p.planOnce(ctx, id)
		if err == nil && !(pl.exists && pl.have >= pl.want) {
			return pl, nil
		}
		again := err != nil && p.remade(ctx, pl)
		remade = remade || again
		pl.close()
		switch {
		case err == nil:
			return pl, &PushResult{Session: id, Status: PushUpToDate}
		case !again || tries == pushReplans:
			res := p.ended(ctx, id, 0, err, remade, again)
			return pl, &res
		}
	}
}

// planOnce is one try of plan: the plan, src open, or an error.
func (p *pusher) planOnce(ctx context.Context, id string) (pl pushPlan, err error) {
	pl = pushPlan{id: id}
	if pl.src, err = p.from.d.OpenSession(ctx, id); err != nil {
		return pl, err
	}
	if pl.info, err = p.from.Info(ctx, id); err != nil {
		return pl, err
	}
	// src still there after its row was read: the row is src's, not
	// that of a session made again with its id since src was opened.
	if _, err = pl.src.Leaf(ctx); err != nil {
		return pl, err
	}
	if pl.meta, err = pl.src.Meta(ctx); err != nil {
		return pl, err
	}
	pl.want = pl.info.Entries
	dst, err := p.to.Info(ctx, id)
	switch {
	case errors.Is(err, sessiontree.ErrNotFound):
		return pl, nil
	case err != nil:
		return pl, err
	}
	pl.exists, pl.have = true, dst.Entries
	if err := p.samePrefix(ctx, pl, dst); err != nil {
		if _, gone := p.to.Info(ctx, id); errors.Is(gone, sessiontree.ErrNotFound) {
			// Deleted on the target since its row was read: whatever
			// the comparison met, the plan is to make it, as when it
			// was not there.
			pl.exists, pl.have = false, 0
			return pl, nil
		}
		return pl, err
	}
	return pl, nil
}

// remade reports whether the source's session of plan pl is gone while
// the source has its id again: deleted and made again, another session.
func (p *pusher) remade(ctx context.Context, pl pushPlan) bool {
	if pl.src == nil {
		return false
	}
	if _, err := pl.src.Leaf(ctx); !errors.Is(err, sessiontree.ErrNotFound) {
		return false
	}
	_, err := p.from.Info(ctx, pl.id)
	return err == nil
}

// samePrefix checks that one copy of a session is a prefix of the other:
// the target's (dst, its row) of the source's (pl.src), or the source's of
// the target's when the target is ahead: the same header, and the same
// first and last entries of the shorter, byte for byte.
//
// Comparing the two ends rather than every entry keeps the check at four
// single-entry reads however long the session (reading the target's whole
// session would cost as much as pushing it). It is enough because of how
// a session comes to exist on two databases: its id is a UUID v7 and its
// entry ids are random, so a target holds the session only through an
// earlier push or pull of it, and the two copies part only by appends
// made to one side after that. An append to one side puts its own entry
// at that side's last position, where the other has another entry or
// none: appends to both make the last entry of the shorter differ, an
// append to one side alone leaves the shorter a prefix. An entry's bytes
// hold its id, parent and timestamp, so two copies whose entries at the
// same position are byte-equal wrote the same entry there. The first
// entry is compared too, so that two unrelated sessions given the same id
// by hand are told apart even when they have one entry each.
func (p *pusher) samePrefix(ctx context.Context, pl pushPlan, dst SessionInfo) error {
	conflict := func(format string, args ...any) error {
		return &PushConflictError{Session: pl.id, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case dst.Cwd != pl.info.Cwd:
		return conflict("its cwd is %q, the source's %q", dst.Cwd, pl.info.Cwd)
	case dst.CreatedAt != pl.info.CreatedAt:
		return conflict("it was created at %s, the source's at %s", dst.CreatedAt, pl.info.CreatedAt)
	case dst.ParentSession != pl.info.ParentSession:
		return conflict("its parent session is %q, the source's %q", dst.ParentSession, pl.info.ParentSession)
	case pl.have == 0 || pl.want == 0:
		return nil
	}
	tgt, err := p.to.d.OpenSession(ctx, pl.id)
	if err != nil {
		return err
	}
	defer tgt.Close()
	for _, seq := range []int64{1, min(pl.have, pl.want)} {
		a, err := entryAt(ctx, pl.src, seq)
		if err != nil {
			return fmt.Errorf("source: %w", err)
		}
		b, err := entryAt(ctx, tgt, seq)
		if err != nil {
			return fmt.Errorf("target: %w", err)
		}
		if a.ID != b.ID || !bytes.Equal(a.Raw, b.Raw) {
			return conflict("entry %d is %s, the source's %s", seq, b.ID, a.ID)
		}
	}
	return nil
}

// entryAt reads the entry at position seq (1-based) of s's log.
func entryAt(ctx context.Context, s sessiontree.Storage, seq int64) (sessiontree.Entry, error) {
	page, err := s.Log(ctx, seq-1, 1)
	if err != nil {
		return sessiontree.Entry{}, err
	}
	if len(page) == 0 || page[0].Seq != seq {
		return sessiontree.Entry{}, fmt.Errorf("entry %d of the log: %w", seq, sessiontree.ErrNotFound)
	}
	return page[0], nil
}

// pushReplans bounds how many times one session's push plans again after
// finding the target written to under it when the target did not grow
// (by another push's batches) since the plan before.
const pushReplans = 3

// push carries out a plan, and closes its source session. When a batch
// finds the target's session changed since the plan (made, or grown, by
// another push of it into the same target, or deleted), it plans again
// from what the target has now (a deleted session is made again, as a
// push begun after the delete would make it): if that is still a prefix
// of the source's session the push goes on from there, and only a
// target that really differs is a conflict. Two pushes at once may take
// turns for every batch; as long as the target grows, they go on. So
// does a session deleted at the source and made again there with its
// id during the copy (remade): it is another session, planned again as
// it is now, and a conflict says so ([PushRemadeReason]).
func (p *pusher) push(ctx context.Context, pl pushPlan) PushResult {
	defer func() { pl.close() }()
	var pushed int64
	remade := false
	for stuck := 0; ; {
		n, err := p.appendPlan(ctx, pl)
		pushed += n
		again := err != nil && p.remade(ctx, pl)
		remade = remade || again
		if err == nil || !again && !errors.Is(err, sessiontree.ErrConflict) || stuck == pushReplans {
			return p.ended(ctx, pl.id, pushed, err, remade, again)
		}
		pl.close()
		next, res := p.plan(ctx, pl.id, remade)
		if res != nil {
			if res.Status == PushUpToDate && pushed > 0 {
				res.Status = PushPushed
			}
			res.Pushed = pushed
			pl = pushPlan{}
			return *res
		}
		if again || pl.exists && next.have <= pl.have+n {
			stuck++
		}
		pl = next
	}
}

// appendPlan appends the entries a plan says, a batch per transaction,
// and returns how many it appended. Each batch checks in its transaction
// that the target still has the entries the one before left, so a writer
// on the target meanwhile makes an error matching
// sessiontree.ErrConflict, not an interleaving.
func (p *pusher) appendPlan(ctx context.Context, pl pushPlan) (int64, error) {
	src := pl.src
	have := pl.have
	create := !pl.exists
	for create || have < pl.want {
		page, err := readPushBatch(ctx, src, have, int(min(int64(p.opts.BatchEntries), pl.want-have)), p.opts.BatchBytes)
		if err != nil {
			return have - pl.have, fmt.Errorf("read the source: %w", err)
		}
		if len(page) == 0 && (!create || pl.want > 0) {
			// The source lost entries since the plan (deleted, perhaps
			// made again, which src does not read): what is pushed
			// stays pushed, and a session the target lacks is not made
			// empty.
			return have - pl.have, fmt.Errorf("the source has %d entries, not %d", have, pl.want)
		}
		err = p.to.d.Update(ctx, func(tx sessiontree.DatabaseTx) error {
			return appendPushBatch(tx, pl, create, have, page, p.opts.verb())
		})
		if err != nil {
			return have - pl.have, err
		}
		create = false
		have += int64(len(page))
		p.progress.Entries += int64(len(page))
		p.tell()
	}
	return have - pl.have, nil
}

// readPushBatch reads the source's entries after seq have, up to n of
// them and, of those, until they hold maxBytes of JSON (the entry that
// reaches it included). It reads one entry first, then as many as the
// bytes left would hold at the average size read so far, so that a run
// of large entries is not read whole to be cut.
func readPushBatch(ctx context.Context, src sessiontree.Storage, have int64, n, maxBytes int) ([]sessiontree.Entry, error) {
	var batch []sessiontree.Entry
	size, want := 0, 1
	for len(batch) < n && size < maxBytes {
		page, err := src.Log(ctx, have+int64(len(batch)), min(want, n-len(batch)))
		if err != nil || len(page) == 0 {
			return batch, err
		}
		for _, e := range page {
			size += len(e.Raw)
		}
		batch = append(batch, page...)
		want = max(1, (maxBytes-size)/max(1, size/len(batch)))
	}
	return batch, nil
}

// appendPushBatch appends one batch in tx: to a session it creates, or
// to the target's session if it still has have entries. A target
// session changed since the plan, grown or deleted, is a
// [*PushConflictError], on which [pusher.push] plans again: a deleted
// one is then made again from the source's, as a push begun after the
// delete would. verb names the copy in the conflict's reason.
func appendPushBatch(tx sessiontree.DatabaseTx, pl pushPlan, create bool, have int64, page []sessiontree.Entry, verb string) error {
	var dst sessiontree.DatabaseSession
	var err error
	if create {
		dst, err = tx.NewSession(pl.meta, pl.info.Metadata)
	} else {
		var in SessionInfo
		in, err = tx.SessionInfo(pl.id)
		switch {
		case errors.Is(err, sessiontree.ErrNotFound):
			return &PushConflictError{Session: pl.id, Reason: "it was deleted during the " + verb}
		case err == nil && in.Entries != have:
			return &PushConflictError{Session: pl.id, Reason: fmt.Sprintf("it has %d entries, not %d: written to during the %s", in.Entries, have, verb)}
		}
		if err == nil {
			dst, err = tx.Session(pl.id)
		}
	}
	if err != nil {
		return err
	}
	if len(page) == 0 {
		return nil
	}
	return tx.AppendEntries(dst, page)
}

// ended is the result of a session whose push ended with err after
// pushed entries ([pusher.result]), for a session made again at the
// source during its push (remade) too: its conflict says so
// ([PushRemadeReason]). One made again once more when the push has
// planned it again as often as it does (err comes of that: last) is a
// conflict too, whatever err is (a read of the source finding its
// session gone, or fewer entries than planned), saying why.
func (p *pusher) ended(ctx context.Context, id string, pushed int64, err error, remade, last bool) PushResult {
	if last {
		err = &PushConflictError{Session: id, Reason: fmt.Sprintf("the source's was made again once more after the %s planned it again %d times, as many as it does",
			p.opts.verb(), pushReplans)}
	}
	res := p.result(ctx, id, pushed, err)
	if remade && res.Status == PushConflict {
		res.Reason = PushRemadeReason + ": " + res.Reason
	}
	return res
}

// result is the result of a session whose push ended with err after
// pushed entries. Whatever err is (a read of the source finding the
// session gone, or finding fewer entries than planned, or a conflict
// found on entries since deleted), a session the source no longer has
// was deleted during the push: it is skipped, not failed. Asking the
// source once more, rather than telling errors apart, holds for every
// step the delete can fall before, on either engine.
func (p *pusher) result(ctx context.Context, id string, pushed int64, err error) PushResult {
	if err == nil {
		return PushResult{Session: id, Status: PushPushed, Pushed: pushed}
	}
	if _, gone := p.from.Info(ctx, id); errors.Is(gone, sessiontree.ErrNotFound) {
		return PushResult{Session: id, Status: PushSkipped, Pushed: pushed, Reason: PushDeletedReason(p.opts.Verb), Err: gone}
	}
	st, reason := PushFailed, err.Error()
	var claimed *sessiontree.ClaimedError
	switch {
	case errors.As(err, &claimed):
		// Only a claim: the target's write lock held past the busy
		// timeout, which matches sessiontree.ErrLocked too, is a failure.
		// The claim says it all in its own words, which read the same
		// whichever engine's write step met it (SQLite's append, or
		// PostgreSQL's commit).
		st, reason = PushClaimed, claimed.Error()
	case errors.Is(err, sessiontree.ErrConflict):
		// A *PushConflictError, or the target taking the session's id or
		// an entry's id since the plan: another writer got there first.
		st = PushConflict
	}
	return PushResult{Session: id, Status: st, Pushed: pushed, Reason: reason, Err: err}
}
