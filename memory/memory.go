package memory

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/sessiontree/sessiontree"
)

var (
	_ sessiontree.Storage       = (*Storage)(nil)
	_ sessiontree.BatchAppender = (*Storage)(nil)
)

// Options configure a [Storage]. The zero value works.
type Options struct {
	// OnAppend, when set, is called with each new entry (from Append,
	// SetLeaf and AppendBatch) while the storage is locked and before the
	// entry is indexed. An error aborts the append. AppendBatch calls it
	// once per entry.
	OnAppend func(ctx context.Context, e sessiontree.Entry) error
}

// Storage is a session held in memory.
type Storage struct {
	opts Options

	mu      sync.RWMutex // guards every field below
	meta    sessiontree.SessionMeta
	entries []sessiontree.Entry
	byID    map[string]int
	byType  map[sessiontree.EntryType][]int
	// replay holds the leaf, labels and name, by the root package's
	// rules.
	replay sessiontree.Replayer
	closed bool

	// Usage totals are folded in lazily, on the first Stats call after
	// entries were added: reading every message's usage is most of the
	// cost of indexing, and opening a large session should not pay it.
	// statsMu guards stats and counted; callers also hold mu (read or
	// write), which keeps entries stable.
	statsMu sync.Mutex
	stats   sessiontree.Tally
	counted int // entries[:counted] are in stats
}

// New returns an empty session with the given metadata. An empty meta.ID
// gets a fresh UUID v7 and an empty CreatedAt the current time.
func New(meta sessiontree.SessionMeta, opts Options) (*Storage, error) {
	if meta.ID == "" {
		id, err := sessiontree.NewSessionID()
		if err != nil {
			return nil, fmt.Errorf("new session id: %w", err)
		}
		meta.ID = id
	}
	if meta.Version == 0 {
		meta.Version = 3
	}
	if meta.CreatedAt == "" {
		meta.CreatedAt = sessiontree.FormatTime(now())
	}
	return &Storage{
		opts:   opts,
		meta:   meta,
		byID:   map[string]int{},
		byType: map[sessiontree.EntryType][]int{},
	}, nil
}

// NewUnchecked returns a session holding entries as given, without checking
// that parents exist or ids are unique (later duplicates shadow earlier
// ones). It is for tests and recovery tools that need to look at broken
// data: paths over it report [sessiontree.ErrCorrupt] where it is broken.
func NewUnchecked(meta sessiontree.SessionMeta, entries []sessiontree.Entry) (*Storage, error) {
	s, err := New(meta, Options{})
	if err != nil {
		return nil, err
	}
	s.indexAll(entries)
	return s, nil
}

// indexAll indexes entries, unchecked. The caller holds mu.
func (s *Storage) indexAll(entries []sessiontree.Entry) {
	for _, e := range entries {
		f := sessiontree.EffectsOf(e, "")
		// Checked before; this sees again what a label labels.
		_ = sessiontree.CheckTarget(&f, (*earlier)(s))
		s.index(e, &f)
	}
}

// index adds a checked entry, with effects f, to every index. The caller
// holds mu.
func (s *Storage) index(e sessiontree.Entry, f *sessiontree.Effects) sessiontree.Entry {
	e.Seq = int64(len(s.entries) + 1)
	pos := len(s.entries)
	if len(s.entries) == cap(s.entries) {
		// Double, rather than append's quarter for long slices: loading a
		// large session then copies and discards far less.
		s.entries = slices.Grow(s.entries, max(len(s.entries), 64))
	}
	s.entries = append(s.entries, e)
	s.byID[e.ID] = pos
	s.byType[e.Type] = append(s.byType[e.Type], pos)
	s.replay.Apply(e, f)
	return e
}

func (s *Storage) get(id string) (sessiontree.Entry, bool) {
	pos, ok := s.byID[id]
	if !ok {
		return sessiontree.Entry{}, false
	}
	return s.entries[pos], true
}

func (s *Storage) taken(id string) bool {
	_, ok := s.byID[id]
	return ok
}

// earlier is the session as the root package's replay looks it up.
type earlier Storage

func (s *earlier) Taken(id string) bool { return (*Storage)(s).taken(id) }

func (s *earlier) Exists(id string) (bool, error) { return (*Storage)(s).taken(id), nil }

// rlock takes the read lock and checks the storage is open.
func (s *Storage) rlock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return sessiontree.ErrClosed
	}
	return nil
}

// lock takes the write lock and checks the storage is open.
func (s *Storage) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return sessiontree.ErrClosed
	}
	return nil
}

// Meta returns the session's metadata.
func (s *Storage) Meta(ctx context.Context) (sessiontree.SessionMeta, error) {
	if err := s.rlock(ctx); err != nil {
		return sessiontree.SessionMeta{}, err
	}
	defer s.mu.RUnlock()
	return s.meta, nil
}

// ID returns the session id, as Meta gives it, without taking a lock:
// the metadata never changes.
func (s *Storage) ID() string { return s.meta.ID }

// Leaf returns the current leaf.
func (s *Storage) Leaf(ctx context.Context) (string, error) {
	if err := s.rlock(ctx); err != nil {
		return "", err
	}
	defer s.mu.RUnlock()
	return s.replay.Leaf, nil
}

// NewEntryID returns an unused 8-hex-character id.
func (s *Storage) NewEntryID(ctx context.Context) (string, error) {
	if err := s.rlock(ctx); err != nil {
		return "", err
	}
	defer s.mu.RUnlock()
	return sessiontree.NewEntryID(s.taken), nil
}

// Append appends an entry under the current leaf.
func (s *Storage) Append(ctx context.Context, d sessiontree.Draft, opts sessiontree.AppendOptions) (sessiontree.Entry, error) {
	if err := sessiontree.CheckDraft(d); err != nil {
		return sessiontree.Entry{}, err
	}
	if err := s.lock(ctx); err != nil {
		return sessiontree.Entry{}, err
	}
	defer s.mu.Unlock()
	return s.appendLocked(ctx, d, opts, s.replay.Leaf)
}

// AppendUnder appends an entry under parent, not the current leaf, and
// makes it the leaf: the move and the append are one write.
func (s *Storage) AppendUnder(ctx context.Context, parent string, d sessiontree.Draft, opts sessiontree.AppendOptions) (sessiontree.Entry, error) {
	if err := sessiontree.CheckDraft(d); err != nil {
		return sessiontree.Entry{}, err
	}
	if err := s.lock(ctx); err != nil {
		return sessiontree.Entry{}, err
	}
	defer s.mu.Unlock()
	if parent != "" && !s.taken(parent) {
		return sessiontree.Entry{}, &sessiontree.EntryNotFoundError{ID: parent}
	}
	return s.appendLocked(ctx, d, opts, parent)
}

// appendLocked appends d under parent; the caller holds mu.
func (s *Storage) appendLocked(ctx context.Context, d sessiontree.Draft, opts sessiontree.AppendOptions, parent string) (sessiontree.Entry, error) {
	if err := sessiontree.CheckLeafGuard(opts, s.replay.Leaf); err != nil {
		return sessiontree.Entry{}, err
	}
	id := d.ID
	if id == "" {
		id = sessiontree.NewEntryID(s.taken)
	} else if s.taken(id) {
		return sessiontree.Entry{}, &sessiontree.IDTakenError{ID: id}
	}
	ts := d.Timestamp
	if ts == "" {
		ts = sessiontree.FormatTime(now())
	}
	e, err := sessiontree.BuildEntry(d, id, parent, ts)
	if err != nil {
		return sessiontree.Entry{}, err
	}
	f := sessiontree.EffectsOf(e, "")
	if err := sessiontree.CheckNewTarget(&f, (*earlier)(s)); err != nil {
		return sessiontree.Entry{}, err
	}
	return s.commit(ctx, e, &f)
}

// commit runs the OnAppend hook and indexes e, whose effects are f. The
// caller holds mu.
func (s *Storage) commit(ctx context.Context, e sessiontree.Entry, f *sessiontree.Effects) (sessiontree.Entry, error) {
	e.Seq = int64(len(s.entries) + 1)
	if s.opts.OnAppend != nil {
		if err := s.opts.OnAppend(ctx, e); err != nil {
			return sessiontree.Entry{}, err
		}
	}
	return s.index(e, f), nil
}

// SetLeaf appends a leaf entry moving the leaf to target.
func (s *Storage) SetLeaf(ctx context.Context, target string, opts sessiontree.AppendOptions) (sessiontree.Entry, error) {
	if err := s.lock(ctx); err != nil {
		return sessiontree.Entry{}, err
	}
	defer s.mu.Unlock()
	d, err := sessiontree.LeafDraft(target)
	if err != nil {
		return sessiontree.Entry{}, err
	}
	d.Timestamp = cmp.Or(opts.Timestamp, sessiontree.FormatTime(now()))
	return s.appendLocked(ctx, d, opts, s.replay.Leaf)
}

// AppendBatch appends entries that carry their own ids, parents and
// timestamps, checking each: valid fields, an unused id, a parent and a
// target that exist ([sessiontree.CheckBatchEntry]). On error nothing of
// the batch is kept.
func (s *Storage) AppendBatch(ctx context.Context, entries []sessiontree.Entry) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	mark := len(s.entries)
	for i, e := range entries {
		f, err := s.checkBatchEntry(e, mark)
		if err != nil {
			s.rollback(mark)
			return fmt.Errorf("batch entry %d: %w", i+1, err)
		}
		if _, err := s.commit(ctx, e, &f); err != nil {
			s.rollback(mark)
			return fmt.Errorf("batch entry %d: %w", i+1, err)
		}
	}
	return nil
}

// checkBatchEntry validates e and checks it against the session by the
// root package's replay, and returns its effects. An id among the mark
// entries stored before the batch is taken; one earlier in the batch is
// the replay's duplicate.
func (s *Storage) checkBatchEntry(e sessiontree.Entry, mark int) (sessiontree.Effects, error) {
	if err := e.Validate(); err != nil {
		return sessiontree.Effects{}, err
	}
	if pos, ok := s.byID[e.ID]; ok && pos < mark {
		return sessiontree.Effects{}, &sessiontree.IDTakenError{ID: e.ID}
	}
	f := sessiontree.EffectsOf(e, "")
	return f, sessiontree.CheckBatchEntry(e, &f, (*earlier)(s))
}

// rollback drops every entry from position mark on and rebuilds the
// derived state. Only a failed batch pays for it.
func (s *Storage) rollback(mark int) {
	if mark == len(s.entries) {
		return // nothing was indexed; a refused first entry costs nothing
	}
	kept := s.entries[:mark]
	s.entries = nil
	s.byID = map[string]int{}
	s.byType = map[sessiontree.EntryType][]int{}
	s.replay = sessiontree.Replayer{}
	s.statsMu.Lock()
	s.stats, s.counted = sessiontree.Tally{}, 0
	s.statsMu.Unlock()
	s.indexAll(kept)
}

// Entry returns one entry by id.
func (s *Storage) Entry(ctx context.Context, id string) (sessiontree.Entry, error) {
	if err := s.rlock(ctx); err != nil {
		return sessiontree.Entry{}, err
	}
	defer s.mu.RUnlock()
	e, ok := s.get(id)
	if !ok {
		return sessiontree.Entry{}, &sessiontree.EntryNotFoundError{ID: id}
	}
	return e, nil
}

// EntriesByType returns the entries of type t in append order.
func (s *Storage) EntriesByType(ctx context.Context, t sessiontree.EntryType) ([]sessiontree.Entry, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	out := make([]sessiontree.Entry, 0, len(s.byType[t]))
	for _, pos := range s.byType[t] {
		out = append(out, s.entries[pos])
	}
	return out, nil
}

// UnknownTypes counts the stored entries whose type this package does
// not know, per type in the order first appended. It costs one look at
// each type held, not at each entry.
func (s *Storage) UnknownTypes(ctx context.Context) (sessiontree.UnknownTypes, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	var u sessiontree.UnknownTypes
	for t, pos := range s.byType {
		if !t.Known() && len(pos) > 0 {
			u = append(u, sessiontree.TypeCount{Type: t, Count: len(pos)})
		}
	}
	// byType is a map: order the types as they were first appended.
	slices.SortFunc(u, func(a, b sessiontree.TypeCount) int {
		return s.byType[a.Type][0] - s.byType[b.Type][0]
	})
	return u, nil
}

// Label returns the current label of an entry.
func (s *Storage) Label(ctx context.Context, id string) (string, error) {
	if err := s.rlock(ctx); err != nil {
		return "", err
	}
	defer s.mu.RUnlock()
	return s.replay.Labels[id], nil
}

// Labels returns every current label.
func (s *Storage) Labels(ctx context.Context) (map[string]string, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	out := make(map[string]string, len(s.replay.Labels))
	maps.Copy(out, s.replay.Labels)
	return out, nil
}

// Name returns the session name.
func (s *Storage) Name(ctx context.Context) (string, error) {
	if err := s.rlock(ctx); err != nil {
		return "", err
	}
	defer s.mu.RUnlock()
	return s.replay.Name, nil
}

// Stats returns counts and usage totals over the whole log.
func (s *Storage) Stats(ctx context.Context) (sessiontree.Stats, error) {
	if err := s.rlock(ctx); err != nil {
		return sessiontree.Stats{}, err
	}
	defer s.mu.RUnlock()
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	for ; s.counted < len(s.entries); s.counted++ {
		s.stats.Add(s.entries[s.counted])
	}
	return s.stats.Stats(), nil
}

// Path returns the path from an entry to the root or compaction boundary.
func (s *Storage) Path(ctx context.Context, from string) ([]sessiontree.Entry, error) {
	return s.walk(ctx, from, false)
}

// FullPath returns the path from an entry to the root.
func (s *Storage) FullPath(ctx context.Context, from string) ([]sessiontree.Entry, error) {
	return s.walk(ctx, from, true)
}

func (s *Storage) walk(ctx context.Context, from string, full bool) ([]sessiontree.Entry, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return sessiontree.WalkPath(ctx, from, full, len(s.entries), s.get)
}

// Log returns up to limit entries after sequence number after.
func (s *Storage) Log(ctx context.Context, after int64, limit int) ([]sessiontree.Entry, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	start := min(max(after, 0), int64(len(s.entries)))
	end := int64(len(s.entries))
	if limit > 0 {
		end = min(end, start+int64(limit))
	}
	return append([]sessiontree.Entry(nil), s.entries[start:end]...), nil
}

// Close marks the storage closed.
func (s *Storage) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}
