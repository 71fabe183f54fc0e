package engine

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/sessiontree/sessiontree"
)

// node is what a child inherits from its parent: where it is and the
// latest state-setting entries on its full path.
type node struct {
	pk, depth, start       int64
	thinking, model, tools sql.NullInt64
	isLeaf                 bool // a leaf entry, which is not part of the tree (shape.go)
}

// head is the session as a write transaction finds it.
type head struct {
	leaf     *node // nil when the leaf is null
	leafID   string
	count    int64 // entries so far: the next seq is count+1
	hasFirst bool  // first_user_text is already set
	// cost is the session's cost total, to which a write adds each
	// record's cost in log order (see delta).
	cost float64
	// buckets is the cost breakdown in order of first use (see
	// breakdown.go). A head's buckets are never changed in place: a
	// remembered head shares them with the delta that made it.
	buckets []bucket
}

// depth is the leaf's depth: how many rows the branch has.
func (h *head) depth() int64 {
	if h.leaf == nil {
		return 0
	}
	return h.leaf.depth
}

// delta is what a write adds to the session row.
//
// Costs are floating-point sums, whose last bits depend on the order of
// the additions: pi adds one record at a time in log order, to the
// session's total and to its bucket's, so a write does too, starting from
// the head's sums.
type delta struct {
	leaf   *node
	leafID string
	// tally counts what the write adds: entries, messages, tool calls,
	// tokens (integers, which add up in any order).
	tally sessiontree.Tally
	// cost is the session's cost total after the write's entries so far.
	cost float64
	// buckets is the breakdown after the write's entries so far: the
	// head's until a record changes it (ownBuckets), then a copy.
	buckets    []bucket
	ownBuckets bool
	// days is the usage the write adds per day and bucket (usage.go).
	days dayUsages
	// created is the session's creation time, updatedAt its last change
	// after the write's entries (sessiontree.LastChange).
	created, updatedAt string
	setsName           bool
	name               string
	firstUser          *string
	// shape is what the write adds to the tree's counts (shape.go).
	shape sessiontree.Shape
}

// bucket is one bucket of the breakdown: its key, the seq of the entry
// that first used it, its tokens and its cost.
type bucket struct {
	key      string
	firstSeq int64
	tokens   int64
	cost     float64
}

// newDelta starts the delta of a write on a session created at created
// with head h.
func newDelta(h head, created string) delta {
	return delta{cost: h.cost, buckets: h.buckets, created: created}
}

// head returns the session's head inside a write transaction. The write
// connection remembers the head of each session it appended to (see
// q.remember), as long as no other connection has written since, so an
// append on the same session does not read it again.
func (w q) head(session int64) (head, error) {
	if h, ok := w.c.heads[session]; ok {
		if h.leaf != nil {
			n := *h.leaf
			h.leaf = &n
		}
		return h, nil
	}
	var h head
	var deleting bool
	var leafPK, start sql.NullInt64
	var leafDepth int64
	var n node
	var breakdown []byte
	err := w.row(qWriteState, args(session), &deleting, &leafPK, &h.leafID, &leafDepth, &h.count, &h.hasFirst,
		&h.cost, &breakdown, &start, &n.thinking, &n.model, &n.tools, &n.isLeaf)
	if errors.Is(err, sql.ErrNoRows) || err == nil && deleting {
		return h, sessiontree.ErrNotFound
	}
	if err != nil {
		return h, err
	}
	if h.buckets, err = parseBreakdown(breakdown); err != nil {
		return h, err
	}
	if leafPK.Valid {
		n.pk, n.depth, n.start = leafPK.Int64, leafDepth, start.Int64
		h.leaf = &n
	}
	return h, nil
}

// remember keeps h as the session's head once the transaction commits.
func (w q) remember(session int64, h head) {
	if h.leaf != nil {
		n := *h.leaf
		h.leaf = &n
	}
	w.c.pending = &pendingHead{session: session, h: h}
}

func (w q) node(session int64, id string) (*node, error) {
	var n node
	err := w.row(qEntryNode, args(session, id), &n.pk, &n.depth, &n.start, &n.thinking, &n.model, &n.tools, &n.isLeaf)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// insert stores entry e as entry seq of session under parent (nil for a
// root) and returns its node. ancestorDepth tells the depth of an entry
// if it is an ancestor of e, 0 otherwise; it places a compaction's kept
// entry. The entry insert is the first write, so a duplicate id leaves the
// transaction as it was.
func (w q) insert(session, seq int64, e sessiontree.Entry, f *facts, parent *node,
	ancestorDepth func(id string) (int64, error)) (node, error) {
	n, err := place(e, f, entryPK(session, seq), parent, ancestorDepth)
	if err != nil {
		return n, err
	}
	n.isLeaf = e.Type == sessiontree.TypeLeaf
	_, err = w.exec(qInsertEntry, entryArgs(nil, session, seq, e, f, parent, n)...)
	return n, err
}

// entryArgs appends the parameters of one entries row to a (see
// entryColumns), the checksum of its JSON among them.
func entryArgs(a []any, session, seq int64, e sessiontree.Entry, f *facts, parent *node, n node) []any {
	var parentPK, canonical any
	if parent != nil {
		parentPK = parent.pk
	}
	if f.canonical {
		canonical = int64(1)
	}
	return append(a, n.pk, session, seq, e.ID, nullString(e.ParentID), parentPK, string(e.Type),
		e.Timestamp, n.depth, n.start, n.thinking, n.model, n.tools, nullString(f.Target),
		nullString(f.customType), nullString(f.role), text(e.Raw), canonical, f.checksum)
}

// count adds entry e to the delta.
func (d *delta) count(seq int64, e sessiontree.Entry, f *facts, h *head) {
	d.tally.AddEntryStats(f.stats)
	d.updatedAt = sessiontree.LastChange(d.created, e.Timestamp)
	if f.role == "user" && !h.hasFirst && d.firstUser == nil {
		if t, ok := sessiontree.UserText(e); ok {
			d.firstUser = &t
		}
	}
	if f.SetsName {
		d.setsName, d.name = true, f.Name
	}
	if f.stats.HasUsage {
		d.addUsage(seq, f.stats.Bucket, f.stats.Usage)
		d.days.add(e.Timestamp, f.stats.Bucket, f.stats.Usage)
	}
}

// addUsage adds usage record u, of entry seq, to the session's cost and
// to bucket key's tokens and cost.
func (d *delta) addUsage(seq int64, key string, u sessiontree.Usage) {
	d.cost += u.Cost
	if !d.ownBuckets {
		d.buckets, d.ownBuckets = slices.Clone(d.buckets), true
	}
	i := slices.IndexFunc(d.buckets, func(b bucket) bool { return b.key == key })
	if i < 0 {
		d.buckets = append(d.buckets, bucket{key: key, firstSeq: seq})
		i = len(d.buckets) - 1
	}
	d.buckets[i].tokens += u.Tokens()
	d.buckets[i].cost += u.Cost
}

func (w q) label(session int64, e sessiontree.Entry, f *facts, pk int64) error {
	if !f.Label {
		return nil
	}
	if f.LabelText == "" {
		_, err := w.exec(qDeleteLabel, session, f.Target)
		return err
	}
	_, err := w.exec(qUpsertLabel, session, f.Target, f.LabelText, pk)
	return err
}

// apply writes the delta to the session row, the breakdown only when a
// record changed it, and its usage to the session's usage_days rows.
func (w q) apply(session int64, d *delta) error {
	if _, err := w.exec(qUpdateSession, d.rowArgs(session)...); err != nil {
		return err
	}
	return w.applyDays(session, &d.days)
}

// rowArgs are the parameters, in order, of the statement that writes d
// to session's row: qUpdateSession, or the repair's qSetDerived.
func (d *delta) rowArgs(session int64) []any {
	var leafPK, leafID any
	var depth, start int64
	if d.leaf != nil {
		leafPK, leafID, depth, start = d.leaf.pk, d.leafID, d.leaf.depth, d.leaf.start
	}
	var first any
	if d.firstUser != nil {
		first = *d.firstUser
	}
	var breakdown any
	if d.ownBuckets {
		var buf [256]byte
		breakdown = string(appendBreakdown(buf[:0], d.buckets))
	}
	st := d.tally.Stats()
	t := st.Tokens
	return []any{leafPK, leafID, depth, start, st.Entries, st.TotalMessages,
		st.UserMessages, st.AssistantMessages, st.ToolResults, st.ToolCalls,
		t.Input, t.Output, t.CacheRead, t.CacheWrite, d.cost, breakdown,
		d.updatedAt, d.setsName, nullString(d.name), first,
		d.shape.Branches, d.shape.Roots, d.shape.Compactions, session}
}

func (s *Storage) now() string { return sessiontree.FormatTime(s.db.opts.Now()) }

// write runs one appending transaction with the session's head; bounded
// says that its statements are short (see q).
func (s *Storage) write(ctx context.Context, opts sessiontree.AppendOptions, bounded bool, fn func(w q, h head) error) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	return s.db.update(ctx, true, func(w q) error {
		w.bounded = bounded
		h, err := s.begin(w, opts)
		if err != nil {
			return err
		}
		return fn(w, h)
	})
}

// begin returns the session's head in the write transaction w once the
// checks every write makes before it writes hold: the session exists and
// the guard in opts holds.
func (s *Storage) begin(w q, opts sessiontree.AppendOptions) (head, error) {
	h, err := s.head(w)
	if err != nil {
		return h, err
	}
	if err := sessiontree.CheckLeafGuard(opts, h.leafID); err != nil {
		return h, err
	}
	// The writer must still hold the session (a claim's fence,
	// engine/claim.go): checked inside the transaction before anything is
	// written, so it fails only this write, also in a group (group.go).
	if err := s.checkClaim(w); err != nil {
		return h, err
	}
	return h, nil
}

// head returns the session's head in the write transaction w; a session
// deleted meanwhile is a SessionNotFoundError.
func (s *Storage) head(w q) (head, error) {
	h, err := w.head(s.pk)
	if errors.Is(err, sessiontree.ErrNotFound) {
		return h, &SessionNotFoundError{ID: s.meta.ID}
	}
	return h, err
}

// insertNew inserts an entry built by build with a fresh id (or the
// draft's own), retrying the rare collision of a fresh id. pre, when not
// nil, is the entry built before the transaction (prebuild.go), with a
// fresh id or the draft's own: the first attempt takes it.
func (s *Storage) insertNew(w q, h head, ownID string, pre *built, build builder,
	ancestorDepth func(string) (int64, error)) (sessiontree.Entry, facts, node, error) {
	for attempt := 0; ; attempt++ {
		e, f, err := s.attemptEntry(w, attempt, ownID, pre, build)
		if err != nil {
			return e, f, node{}, err
		}
		n, err := w.insert(s.pk, h.count+1, e, &f, h.leaf, ancestorDepth)
		if isUniqueID(err) {
			if ownID != "" {
				return e, f, n, &sessiontree.IDTakenError{ID: e.ID}
			}
			continue
		}
		e.Seq = h.count + 1
		return e, f, n, err
	}
}

// attemptEntry returns the entry, and its facts, of insertNew's attempt:
// the first takes pre, when there is one, or the draft's own id; the
// others a fresh id not taken in the session.
func (s *Storage) attemptEntry(w q, attempt int, ownID string, pre *built,
	build builder) (sessiontree.Entry, facts, error) {
	if attempt == 0 && pre != nil {
		e, _, err := build(pre.e.ID)
		return e, pre.f, err
	}
	id := ownID
	if id == "" {
		var qerr error
		var taken func(string) bool
		if attempt > 0 {
			taken = func(id string) bool { return s.taken(w, id, &qerr) }
		}
		id = sessiontree.NewEntryID(taken)
		if qerr != nil {
			return sessiontree.Entry{}, facts{}, qerr
		}
	}
	e, sf, err := build(id)
	if err != nil {
		return e, facts{}, err
	}
	return e, factsFrom(e, sf), nil
}

// builder builds an append's entry with the id given, and reads its
// facts (sessiontree.BuildEntryFacts).
type builder func(id string) (sessiontree.Entry, sessiontree.Facts, error)

// Append adds an entry under the current leaf, read inside the write
// transaction, and makes it the leaf. The entry row, its branch row, the
// label and the session's counters change in one transaction.
func (s *Storage) Append(ctx context.Context, d sessiontree.Draft, opts sessiontree.AppendOptions) (sessiontree.Entry, error) {
	out, err := s.AppendAll(ctx, []sessiontree.Draft{d}, opts)
	if err != nil {
		return sessiontree.Entry{}, err
	}
	return out[0], nil
}

// AppendAll appends drafts in order, each under the one before (the first
// under the current leaf), in one transaction: all of them or, on error,
// none. The guard in opts is checked once, against the leaf before the
// first. It returns the stored entries; no drafts is a no-op.
//
// Concurrent calls, on any sessions of the DB, share one transaction
// (see group.go) and return once it has committed; the failure of one
// fails only that call. ctx is checked before the call's appends run, not
// while it waits for the write lock or for its group to commit.
func (s *Storage) AppendAll(ctx context.Context, drafts []sessiontree.Draft, opts sessiontree.AppendOptions) ([]sessiontree.Entry, error) {
	for _, d := range drafts {
		if err := sessiontree.CheckDraft(d); err != nil {
			return nil, err
		}
	}
	if len(drafts) == 0 {
		return []sessiontree.Entry{}, nil
	}
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	now := s.now()
	r := &appendReq{ctx: ctx, s: s, drafts: drafts, opts: opts, now: now, pre: s.prebuild(drafts, now)}
	s.db.appendGrouped(r)
	if r.err != nil {
		// No "append <type>" step here: as with the other backends, the
		// caller says what it was appending (sessiontree.Session.Append,
		// the command's append), and saying it here too doubled it.
		return nil, translate(r.err)
	}
	s.guess.store(r.out[len(r.out)-1].ID)
	return r.out, nil
}

// appendIn appends drafts, stamped with now when they have no time, in
// the write transaction w (see AppendAll) and returns the stored entries.
func (s *Storage) appendIn(w q, drafts []sessiontree.Draft, opts sessiontree.AppendOptions, now string, pre *prebuilt) ([]sessiontree.Entry, error) {
	h, err := s.begin(w, opts)
	if err != nil {
		return nil, err
	}
	out := make([]sessiontree.Entry, 0, len(drafts))
	for i, d := range drafts {
		if d.Timestamp == "" {
			d.Timestamp = now
		}
		e, next, err := s.appendDraft(w, h, d, pre.at(i, h.leafID))
		if err != nil {
			return nil, err
		}
		out, h = append(out, e), next
	}
	return out, nil
}

// appendDraft stores draft d, stamped, under head h in the write
// transaction w, and returns the entry with the session's new head. pre,
// when not nil, is d built under h's leaf before the transaction.
func (s *Storage) appendDraft(w q, h head, d sessiontree.Draft, pre *built) (sessiontree.Entry, head, error) {
	// The kept entry of a compaction is an ancestor exactly when it
	// is on the active branch, which is the new entry's path.
	onBranch := func(id string) (int64, error) {
		var pk, depth, start int64
		var on bool
		err := w.row(qEntryPlace, args(s.pk, id), &pk, &depth, &start, &on)
		if errors.Is(err, sql.ErrNoRows) || err == nil && !on {
			return 0, nil
		}
		return depth, err
	}
	build := func(id string) (sessiontree.Entry, sessiontree.Facts, error) {
		if pre != nil && id == pre.e.ID {
			return pre.e, sessiontree.Facts{}, checkTarget(w, s.pk, &pre.f.Effects) // attemptEntry keeps pre.f
		}
		e, f, err := sessiontree.BuildEntryFacts(d, id, h.leafID, d.Timestamp)
		if err != nil {
			return e, f, err
		}
		return e, f, checkTarget(w, s.pk, &f.Effects)
	}
	e, f, n, err := s.insertNew(w, h, d.ID, pre, build, onBranch)
	if err != nil {
		return e, h, err
	}
	if _, err := w.exec(qInsertBranch, s.pk, n.depth, n.pk); err != nil {
		return e, h, fmt.Errorf("extend branch: %w", err)
	}
	if err := w.label(s.pk, e, &f, n.pk); err != nil {
		return e, h, err
	}
	dl := newDelta(h, s.meta.CreatedAt)
	dl.leaf, dl.leafID = &n, e.ID
	dl.count(e.Seq, e, &f, &h)
	if err := w.countShape(&dl.shape, e.Type, h.leaf, n.pk); err != nil {
		return e, h, err
	}
	if err := w.apply(s.pk, &dl); err != nil {
		return e, h, err
	}
	next := head{leaf: &n, leafID: e.ID, count: h.count + 1,
		hasFirst: h.hasFirst || dl.firstUser != nil, cost: dl.cost, buckets: dl.buckets}
	w.remember(s.pk, next)
	return e, next, nil
}

// checkTarget checks that the target of a draft's entry with effects f, a
// label's or a leaf entry's, exists in the session
// (sessiontree.CheckNewTarget); an entry without one needs no lookup.
func checkTarget(w q, session int64, f *sessiontree.Effects) error {
	if f.Target == "" {
		return nil // no lookup, and no storedIDs made for it
	}
	return sessiontree.CheckNewTarget(f, storedIDs{w: w, session: session})
}

// target returns the node of entry id of session, which a move goes to:
// nil for "" (before the first entry), an EntryNotFoundError when the
// session has no such entry.
func (w q) target(session int64, id string) (*node, error) {
	if id == "" {
		return nil, nil
	}
	to, err := w.node(session, id)
	if err == nil && to == nil {
		err = &sessiontree.EntryNotFoundError{ID: id}
	}
	return to, err
}

// AppendUnder appends d under parent instead of the current leaf, in one
// write transaction: the materialized branch moves to parent, as SetLeaf
// moves it, and the entry is appended there, as Append appends, so the
// move happens with the entry or not at all. No leaf entry is written.
func (s *Storage) AppendUnder(ctx context.Context, parent string, d sessiontree.Draft, opts sessiontree.AppendOptions) (sessiontree.Entry, error) {
	if err := sessiontree.CheckDraft(d); err != nil {
		return sessiontree.Entry{}, err
	}
	if d.Timestamp == "" {
		d.Timestamp = s.now()
	}
	var out sessiontree.Entry
	err := s.write(ctx, opts, true, func(w q, h head) error {
		to, err := w.target(s.pk, parent)
		if err != nil {
			return err
		}
		if err := w.moveBranch(s.pk, h.depth(), to); err != nil {
			return err
		}
		h.leaf, h.leafID = to, parent
		out, _, err = s.appendDraft(w, h, d, nil)
		return err
	})
	if err != nil {
		return sessiontree.Entry{}, translate(err)
	}
	s.guess.store(out.ID)
	return out, nil
}

// SetLeaf appends a leaf entry under the current leaf and moves the leaf
// to target. The materialized branch is rewritten only below the point
// where the old and new paths meet.
func (s *Storage) SetLeaf(ctx context.Context, target string, opts sessiontree.AppendOptions) (sessiontree.Entry, error) {
	d, err := sessiontree.LeafDraft(target)
	if err != nil {
		return sessiontree.Entry{}, err
	}
	d.Timestamp = cmp.Or(opts.Timestamp, s.now())
	var out sessiontree.Entry
	err = s.write(ctx, opts, true, func(w q, h head) error {
		to, err := w.target(s.pk, target)
		if err != nil {
			return err
		}
		build := func(id string) (sessiontree.Entry, sessiontree.Facts, error) {
			return sessiontree.BuildEntryFacts(d, id, h.leafID, d.Timestamp)
		}
		e, f, _, err := s.insertNew(w, h, "", nil, build, nil)
		if err != nil {
			return err
		}
		if err := w.moveBranch(s.pk, h.depth(), to); err != nil {
			return err
		}
		dl := newDelta(h, s.meta.CreatedAt)
		dl.leaf, dl.leafID = to, target
		dl.count(e.Seq, e, &f, &h)
		out = e
		if err := w.apply(s.pk, &dl); err != nil {
			return err
		}
		w.remember(s.pk, head{leaf: to, leafID: target, count: h.count + 1, hasFirst: h.hasFirst,
			cost: dl.cost, buckets: dl.buckets})
		return nil
	})
	if err != nil {
		return sessiontree.Entry{}, fmt.Errorf("set leaf to %q: %w", target, translate(err))
	}
	s.guess.store(target)
	return out, nil
}
