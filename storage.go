package sessiontree

import (
	"context"
	"encoding/json"
)

// SessionMeta describes a session: the header of pi's session file.
type SessionMeta struct {
	// ID is the session id, a UUID v7 for new sessions.
	ID string `json:"id"`
	// Version is the session format version (3).
	Version int `json:"version"`
	// CreatedAt is the header's ISO-8601 timestamp.
	CreatedAt string `json:"timestamp"`
	// Cwd is the working directory the session belongs to.
	Cwd string `json:"cwd"`
	// ParentSession is the session this one was forked from, if any.
	ParentSession string `json:"parentSession,omitempty"`
}

// AppendOptions modify a write.
type AppendOptions struct {
	// IfLeaf, when not nil, is a guard: the write happens only if the
	// current leaf is *IfLeaf ("" for an empty leaf); otherwise it fails
	// with a [ConflictError] and nothing is written.
	IfLeaf *string
	// Timestamp is the ISO-8601 time of the leaf entry [Storage.SetLeaf]
	// appends; empty means now. An appended draft carries its own
	// ([Draft].Timestamp), so Append and AppendUnder do not read it.
	Timestamp string
}

// IfLeaf returns AppendOptions guarded on leaf.
func IfLeaf(leaf string) AppendOptions { return AppendOptions{IfLeaf: &leaf} }

// Storage is where a session's entries live. The memory, JSONL and SQLite
// backends implement it, and one conformance suite (package storetest)
// holds them to the same behaviour.
//
// Contract for implementers:
//   - Every method takes a context and returns errors matching the package
//     sentinels: [ErrNotFound] (an [EntryNotFoundError] for entries),
//     [ErrCorrupt] (a [CorruptError]) for broken stored data, never a hang
//     on a cycle, [ErrInvalidEntry], [ErrConflict], [ErrStorage],
//     [ErrClosed].
//   - Entries come back with Raw byte-for-byte as appended.
//   - A method that returns an [Entry] with an error returns the zero
//     Entry: a refused or failed write has no entry to show.
//   - Ids are entry ids; "" stands for null wherever an id may be null.
//   - Lists are in append order unless said otherwise.
//   - Each method should be answerable without loading the whole session.
//
// Implementations document whether they are safe for concurrent use.
type Storage interface {
	// Meta returns the session's metadata.
	Meta(ctx context.Context) (SessionMeta, error)
	// Leaf returns the current leaf id, "" when the leaf is null.
	Leaf(ctx context.Context) (string, error)
	// SetLeaf moves the leaf to target ("" for before the first entry) by
	// appending a leaf entry whose parentId is the old leaf and whose
	// targetId is target, stamped opts.Timestamp (now when empty). A
	// target that does not exist is an [EntryNotFoundError]. It returns
	// the leaf entry.
	SetLeaf(ctx context.Context, target string, opts AppendOptions) (Entry, error)
	// NewEntryID returns an id not used in the session: 8 lowercase hex
	// characters.
	NewEntryID(ctx context.Context) (string, error)
	// Append adds an entry under the current leaf (the append rule) and
	// makes it the leaf. It fills in the id and timestamp when the draft
	// has none, refuses an id already used with an [IDTakenError]
	// (it matches [ErrConflict]), refuses
	// d.Type == TypeLeaf and malformed fields with [ErrInvalidEntry].
	Append(ctx context.Context, d Draft, opts AppendOptions) (Entry, error)
	// AppendUnder is Append of an entry under parent ("" for a new root)
	// instead of under the current leaf: the leaf moves to parent and the
	// entry is appended there in one write, all of it or nothing, as pi
	// writes a branch with a summary (a branch_summary whose parentId is
	// the target). No leaf entry is written; by the leaf rule the entry
	// is the leaf. A parent that does not exist is an
	// [EntryNotFoundError]; the guard in opts is checked against the leaf
	// before the write.
	AppendUnder(ctx context.Context, parent string, d Draft, opts AppendOptions) (Entry, error)
	// Entry returns one entry by id.
	Entry(ctx context.Context, id string) (Entry, error)
	// EntriesByType returns every entry of type t in append order.
	EntriesByType(ctx context.Context, t EntryType) ([]Entry, error)
	// Label returns the current label of an entry, "" when it has none.
	Label(ctx context.Context, id string) (string, error)
	// Labels returns every current label by target id.
	Labels(ctx context.Context) (map[string]string, error)
	// Name returns the session name, "" when it has none.
	Name(ctx context.Context) (string, error)
	// Stats returns counts and usage totals over the whole log.
	Stats(ctx context.Context) (Stats, error)
	// Path returns the path from entry from up to the root or to the
	// compaction boundary (DESIGN.md section 4), root first. from == ""
	// gives an empty path.
	Path(ctx context.Context, from string) ([]Entry, error)
	// FullPath returns the path from entry from to the root, root first,
	// not cut at compactions. from == "" gives an empty path.
	FullPath(ctx context.Context, from string) ([]Entry, error)
	// Log returns up to limit entries with Seq > after, in append order.
	// limit <= 0 means no limit.
	Log(ctx context.Context, after int64, limit int) ([]Entry, error)
	// Close releases the storage. Further calls return [ErrClosed].
	Close() error
}

// StateReader is implemented by backends that can tell the context state
// at an entry without walking the full path (the SQLite engine reads it
// from an index). [StateAt] falls back to walking when a backend does not.
type StateReader interface {
	// State returns the state on the full path from entry from to the
	// root; from == "" gives the default state.
	State(ctx context.Context, from string) (State, error)
}

// BatchAppender is implemented by backends that can take entries that
// already have ids, parents and timestamps, as when importing a file. The
// entries are validated (the fields their types require, unique ids,
// parents that exist earlier in the session or in the batch; a type this
// package does not know is kept as it is) and stored in order in one
// transaction; the leaf then follows the leaf rule over them. An id the
// session held before the batch is refused with an [IDTakenError] (a
// batch sent again conflicts), one twice in the batch with a
// [CorruptError], as in a file. A parent neither stored nor earlier in
// the batch is the caller's mistake, not damage: an [EntryNotFoundError]
// naming it ([CheckBatchEntry]), where a file's is a [CorruptError].
type BatchAppender interface {
	AppendBatch(ctx context.Context, entries []Entry) error
}

// State is the configuration in effect at an entry: the latest of each
// setting on the full path from the root.
type State struct {
	// ThinkingLevel is the latest thinking level, "off" by default.
	ThinkingLevel string `json:"thinkingLevel"`
	// Model is the latest model, nil by default.
	Model *ModelRef `json:"model"`
	// ActiveToolNames is the latest tool list, nil by default.
	ActiveToolNames []string `json:"activeToolNames"`
}

// ModelRef names a model: the provider and model id of the entry that set
// it, a model_change's provider and modelId or an assistant message's
// provider and model. pi copies those fields as they are, so its model
// lacks a field the entry lacks ({} for an assistant message with
// neither): NoProvider and NoModelID say the entry had no such field, and
// the JSON of a ModelRef leaves it out ([ModelRef.MarshalJSON]). A field
// that is there but not a string reads as "".
type ModelRef struct {
	Provider string `json:"provider"`
	ModelID  string `json:"modelId"`
	// NoProvider, NoModelID: the entry had no such field; Provider or
	// ModelID is then "".
	NoProvider, NoModelID bool `json:"-"`
}

// modelJSON is the JSON form of a ModelRef: a missing field left out.
type modelJSON struct {
	Provider *string `json:"provider,omitempty"`
	ModelID  *string `json:"modelId,omitempty"`
}

// MarshalJSON writes the model as pi's context has it:
// {"provider":…,"modelId":…}, without a field the entry lacked.
func (m ModelRef) MarshalJSON() ([]byte, error) {
	var out modelJSON
	if !m.NoProvider {
		out.Provider = &m.Provider
	}
	if !m.NoModelID {
		out.ModelID = &m.ModelID
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON writes: a field left out sets
// NoProvider or NoModelID.
func (m *ModelRef) UnmarshalJSON(b []byte) error {
	var in modelJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*m = ModelRef{NoProvider: in.Provider == nil, NoModelID: in.ModelID == nil}
	if in.Provider != nil {
		m.Provider = *in.Provider
	}
	if in.ModelID != nil {
		m.ModelID = *in.ModelID
	}
	return nil
}

// DefaultState is the state of an empty path.
func DefaultState() State { return State{ThinkingLevel: "off"} }

// StateAt returns the state at entry from: through [StateReader] when the
// backend has it, otherwise by walking the full path.
func StateAt(ctx context.Context, s Storage, from string) (State, error) {
	if r, ok := s.(StateReader); ok {
		return r.State(ctx, from)
	}
	path, err := s.FullPath(ctx, from)
	if err != nil {
		return State{}, err
	}
	st := DefaultState()
	for _, e := range path {
		st.Apply(e)
	}
	return st, nil
}

// Apply updates the state with one entry of the path, as pi does when it
// replays a branch; [EffectsOf] says which settings it takes, by the same
// rules. Entries that set nothing leave it unchanged.
func (st *State) Apply(e Entry) {
	switch e.Type {
	case TypeThinkingLevelChange, TypeModelChange, TypeActiveToolsChange, TypeMessage:
		m := readMembers(e.Raw) // one walk for every member the setting takes
		st.apply(e.Type, &m)
	}
}

// apply is Apply of an entry of type t whose members are m.
func (st *State) apply(t EntryType, m *members) {
	switch t {
	case TypeThinkingLevelChange:
		if s, ok := stringOf(m.get(mThinkingLevel)); ok {
			st.ThinkingLevel = s
		}
	case TypeModelChange:
		praw, pfound := m.get(mProvider)
		iraw, ifound := m.get(mModelID)
		p, _ := stringOf(praw, pfound)
		id, _ := stringOf(iraw, ifound)
		st.Model = &ModelRef{Provider: p, ModelID: id, NoProvider: !pfound, NoModelID: !ifound}
	case TypeActiveToolsChange:
		if names, ok := toolNames(m.get(mActiveToolNames)); ok {
			st.ActiveToolNames = names
		}
	case TypeMessage:
		if r := readMessage(t, m, false); r.info.Role == "assistant" {
			st.Model = &ModelRef{Provider: r.info.Provider, ModelID: r.info.Model, NoProvider: !r.hasProvider, NoModelID: !r.hasModel}
		}
	}
}
