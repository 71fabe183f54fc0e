package sessiontree

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/sessiontree/sessiontree/internal/jsonx"
)

// Session is the API an agent uses on one session: typed appends, labels,
// names, moving the leaf, paths and the model's context, on top of any
// [Storage]. A Session holds no state of its own beyond its options, so it
// is safe for concurrent use exactly when its storage is.
type Session struct {
	store Storage
	opts  SessionOptions
	// guard is the leaf every write must find, nil for none (IfLeaf).
	guard *string
}

// SessionOptions configure a [Session]. The zero value works.
type SessionOptions struct {
	// Now is the clock used to stamp entries; nil means time.Now.
	Now func() time.Time
	// Transforms run on the context entries of every Context call, before
	// the call's own transforms.
	Transforms []EntryTransform
	// Projectors project custom entries in every Context call; a call's
	// own projectors win for the same customType.
	Projectors map[string]Projector
}

// NewSession returns a Session over store.
func NewSession(store Storage, opts SessionOptions) *Session {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Session{store: store, opts: opts}
}

// IfLeaf returns the session guarded on leaf ("" for an empty leaf):
// each write through it, typed or not, happens only if the current leaf
// is leaf, and otherwise fails with a [ConflictError] and writes nothing,
// as [AppendOptions.IfLeaf] guards a write to the storage. A write that
// reads the leaf first ([Session.MoveTo], [Session.AppendCompaction],
// [Session.EditContext]) takes leaf for it instead. Since a write moves
// the leaf, guard the next write on the entry it returned:
//
//	e, err := s.IfLeaf(leaf).AppendMessage(ctx, m)
//	...
//	_, err = s.IfLeaf(e.ID).AppendMessage(ctx, reply)
//
// The guarded session shares s's storage and options (its Close closes
// the storage); s itself is not guarded.
func (s *Session) IfLeaf(leaf string) *Session {
	g := *s
	g.guard = &leaf
	return &g
}

// leaf is the leaf a write that reads it first works from: the guard's
// when the session has one, else the storage's.
func (s *Session) leaf(ctx context.Context) (string, error) {
	if s.guard != nil {
		return *s.guard, nil
	}
	return s.store.Leaf(ctx)
}

// Storage returns the storage under the session.
func (s *Session) Storage() Storage { return s.store }

// ID returns the session id, without I/O: from a storage that knows its
// own (an ID() string method: a [DatabaseSession], and the memory and
// JSONL backends), "" from one that does not, whose [Session.Meta] has
// it.
func (s *Session) ID() string {
	if st, ok := s.store.(interface{ ID() string }); ok {
		return st.ID()
	}
	return ""
}

// Close closes the storage.
func (s *Session) Close() error { return s.store.Close() }

// Meta returns the session's metadata.
func (s *Session) Meta(ctx context.Context) (SessionMeta, error) { return s.store.Meta(ctx) }

// Leaf returns the current leaf id, "" when none.
func (s *Session) Leaf(ctx context.Context) (string, error) { return s.store.Leaf(ctx) }

// Entry returns one entry by id.
func (s *Session) Entry(ctx context.Context, id string) (Entry, error) {
	return s.store.Entry(ctx, id)
}

// Name returns the session name, "" when none.
func (s *Session) Name(ctx context.Context) (string, error) { return s.store.Name(ctx) }

// Label returns the current label of an entry, "" when none.
func (s *Session) Label(ctx context.Context, id string) (string, error) {
	return s.store.Label(ctx, id)
}

// Stats returns counts and usage totals.
func (s *Session) Stats(ctx context.Context) (Stats, error) { return s.store.Stats(ctx) }

// Append appends an entry of any non-leaf type with the given fields.
// Without a guard in opts it takes the session's ([Session.IfLeaf]).
func (s *Session) Append(ctx context.Context, t EntryType, fields json.RawMessage, opts AppendOptions) (Entry, error) {
	if opts.IfLeaf == nil {
		opts.IfLeaf = s.guard
	}
	d := Draft{Type: t, Timestamp: FormatTime(s.opts.Now()), Fields: fields}
	e, err := s.store.Append(ctx, d, opts)
	if err != nil {
		return Entry{}, fmt.Errorf("append %s: %w", t, err)
	}
	return e, nil
}

func (s *Session) appendFields(ctx context.Context, t EntryType, pairs ...any) (Entry, error) {
	f, err := Fields(pairs...)
	if err != nil {
		return Entry{}, fmt.Errorf("append %s: %w", t, err)
	}
	return s.Append(ctx, t, f, AppendOptions{})
}

// AppendMessage appends a message entry; message is the agent message
// object, stored exactly as given.
func (s *Session) AppendMessage(ctx context.Context, message json.RawMessage) (Entry, error) {
	return s.appendFields(ctx, TypeMessage, "message", message)
}

// AppendThinkingLevel records a thinking-level change.
func (s *Session) AppendThinkingLevel(ctx context.Context, level string) (Entry, error) {
	return s.appendFields(ctx, TypeThinkingLevelChange, "thinkingLevel", level)
}

// AppendModelChange records a model change.
func (s *Session) AppendModelChange(ctx context.Context, provider, modelID string) (Entry, error) {
	return s.appendFields(ctx, TypeModelChange, "provider", provider, "modelId", modelID)
}

// AppendActiveTools records a change of the active tool names.
func (s *Session) AppendActiveTools(ctx context.Context, names []string) (Entry, error) {
	if names == nil {
		names = []string{}
	}
	return s.appendFields(ctx, TypeActiveToolsChange, "activeToolNames", names)
}

// Compaction is a compaction to append. At most one of FirstKeptEntryID
// and RetainedTail says what the summary keeps; with neither it keeps
// nothing (pi's retain-none: firstKeptEntryId is the compaction's own id).
type Compaction struct {
	Summary string
	// FirstKeptEntryID is the oldest entry on the path still sent to the
	// model after the summary.
	FirstKeptEntryID string
	// RetainedTail are messages kept inline instead (the newer harness).
	// pi 1.6.0 does not know them: it reads such a compaction as keeping
	// nothing, so the model it builds from an exported file lacks them
	// (FirstKeptEntryID reads the same everywhere).
	RetainedTail []json.RawMessage
	TokensBefore int64
	Details      json.RawMessage
	Usage        json.RawMessage
	FromHook     bool
}

// AppendCompaction appends a compaction entry as pi 1.6.0 writes it: when
// the current context holds system messages, the compaction carries their
// replay as its systemMessage ([CurrentSystemMessage], stamped with the
// compaction's time), which replaces them in later contexts. The append is
// guarded on the leaf the snapshot was taken at.
func (s *Session) AppendCompaction(ctx context.Context, c Compaction) (Entry, error) {
	if c.FirstKeptEntryID != "" && c.RetainedTail != nil {
		return Entry{}, fmt.Errorf("append compaction: %w",
			invalid("", "give at most one of firstKeptEntryId and retainedTail"))
	}
	now := s.opts.Now()
	leaf, sys, err := s.systemSnapshot(ctx, now)
	if err != nil {
		return Entry{}, fmt.Errorf("append compaction: %w", err)
	}
	var id string
	var keep, tail any
	switch {
	case c.FirstKeptEntryID != "":
		keep = c.FirstKeptEntryID
	case c.RetainedTail != nil:
		tail = c.RetainedTail
	default:
		if id, err = s.store.NewEntryID(ctx); err != nil {
			return Entry{}, fmt.Errorf("append compaction: %w", err)
		}
		keep = id
	}
	f, err := Fields("summary", c.Summary, "firstKeptEntryId", keep, "retainedTail", tail,
		"tokensBefore", c.TokensBefore, "details", c.Details, "usage", c.Usage,
		"fromHook", c.FromHook, "systemMessage", sys)
	if err != nil {
		return Entry{}, fmt.Errorf("append compaction: %w", err)
	}
	d := Draft{Type: TypeCompaction, ID: id, Timestamp: FormatTime(now), Fields: f}
	e, err := s.store.Append(ctx, d, IfLeaf(leaf))
	if err != nil {
		return Entry{}, fmt.Errorf("append compaction: %w", err)
	}
	return e, nil
}

// systemSnapshot returns the leaf and the replay of the system messages
// in the context there (nil when it holds none), stamped with now.
func (s *Session) systemSnapshot(ctx context.Context, now time.Time) (string, json.RawMessage, error) {
	leaf, err := s.leaf(ctx)
	if err != nil {
		return "", nil, err
	}
	path, err := s.store.Path(ctx, leaf)
	if err != nil {
		return "", nil, err
	}
	proj, err := Projection(ContextEntries(path), s.opts.Projectors)
	if err != nil {
		return "", nil, err
	}
	// The time is the compaction's own, at millisecond precision.
	ms := now.UTC().Truncate(time.Millisecond).UnixMilli()
	sys, ok := CurrentSystemMessage(proj.Messages(), ms)
	if !ok {
		return leaf, nil, nil
	}
	return leaf, sys, nil
}

// AppendCustom appends a custom entry (extension data, not in context
// unless a projector is registered for its customType).
func (s *Session) AppendCustom(ctx context.Context, customType string, data json.RawMessage) (Entry, error) {
	return s.appendFields(ctx, TypeCustom, "customType", customType, "data", data)
}

// CustomMessage is a custom message to append; it reaches the context as
// a message of role "custom".
type CustomMessage struct {
	CustomType string
	// Content is a string or an array of text/image blocks, as JSON.
	Content json.RawMessage
	Display bool
	Details json.RawMessage
}

// AppendCustomMessage appends a custom_message entry.
func (s *Session) AppendCustomMessage(ctx context.Context, m CustomMessage) (Entry, error) {
	return s.appendFields(ctx, TypeCustomMessage,
		"customType", m.CustomType, "content", m.Content, "display", m.Display, "details", m.Details)
}

// SetLabel labels an entry; an empty label clears it. The label is kept as
// written (pi does not trim labels). A target that does not exist gives
// "Entry <id> not found".
func (s *Session) SetLabel(ctx context.Context, target, label string) (Entry, error) {
	if _, err := s.store.Entry(ctx, target); err != nil {
		return Entry{}, fmt.Errorf("label: %w", err)
	}
	var l any
	if label != "" {
		l = label
	}
	return s.appendFields(ctx, TypeLabel, "targetId", target, "label", l)
}

// SetName names the session; line breaks become spaces, surrounding space
// is trimmed, and an empty name clears it.
func (s *Session) SetName(ctx context.Context, name string) (Entry, error) {
	return s.appendFields(ctx, TypeSessionInfo, "name", CleanName(name))
}

// BranchSummary is the optional summary of the branch being left, written
// by [Session.MoveTo].
type BranchSummary struct {
	Summary  string
	Details  json.RawMessage
	Usage    json.RawMessage
	FromHook bool
}

// MoveTo moves the leaf to target ("" for before the first entry), which
// starts a new branch at the next append: a leaf entry. With a summary it
// instead appends, in one write, a branch_summary under target whose
// fromId is the leaf being left ("root" when there was none), as pi 1.x's
// branchWithSummary writes it: the summary becomes the leaf, and the move
// happens with it or not at all. It returns the summary's id ("" without
// a summary). Either way the move is guarded on the leaf it reads first
// (or the session's guard, [Session.IfLeaf]): another writer moving the
// leaf in between makes it fail with a [ConflictError], having written
// nothing.
func (s *Session) MoveTo(ctx context.Context, target string, summary *BranchSummary) (string, error) {
	left, err := s.leaf(ctx)
	if err != nil {
		return "", fmt.Errorf("move to %s: %w", leafName(target), err)
	}
	if summary == nil {
		opts := AppendOptions{IfLeaf: &left, Timestamp: FormatTime(s.opts.Now())}
		if _, err := s.store.SetLeaf(ctx, target, opts); err != nil {
			return "", fmt.Errorf("move to %s: %w", leafName(target), err)
		}
		return "", nil
	}
	from := left
	if from == "" {
		from = "root"
	}
	f, err := Fields("fromId", from, "summary", summary.Summary, "details", summary.Details,
		"usage", summary.Usage, "fromHook", summary.FromHook)
	if err != nil {
		return "", fmt.Errorf("move to %s: %w", leafName(target), err)
	}
	d := Draft{Type: TypeBranchSummary, Timestamp: FormatTime(s.opts.Now()), Fields: f}
	e, err := s.store.AppendUnder(ctx, target, d, IfLeaf(left))
	if err != nil {
		return "", fmt.Errorf("move to %s: %w", leafName(target), err)
	}
	return e.ID, nil
}

// from resolves "" to the current leaf.
func (s *Session) from(ctx context.Context, from string) (string, error) {
	if from != "" {
		return from, nil
	}
	return s.store.Leaf(ctx)
}

// Branch returns the path from entry from (the leaf when "") to the root or
// the compaction boundary, root first.
func (s *Session) Branch(ctx context.Context, from string) ([]Entry, error) {
	from, err := s.from(ctx, from)
	if err != nil {
		return nil, err
	}
	return s.store.Path(ctx, from)
}

// FullBranch returns the path from entry from (the leaf when "") to the
// root, root first, not cut at compactions.
func (s *Session) FullBranch(ctx context.Context, from string) ([]Entry, error) {
	from, err := s.from(ctx, from)
	if err != nil {
		return nil, err
	}
	return s.store.FullPath(ctx, from)
}

// ContextEntries returns the entries the context is built from, after the
// session's and the call's transforms.
func (s *Session) ContextEntries(ctx context.Context, opts ContextOptions) ([]Entry, error) {
	path, err := s.Branch(ctx, opts.From)
	if err != nil {
		return nil, err
	}
	return applyTransforms(ctx, ContextEntries(path), s.transforms(opts))
}

// Context builds what the model sees at the leaf (or at opts.From).
func (s *Session) Context(ctx context.Context, opts ContextOptions) (Context, error) {
	from, err := s.from(ctx, opts.From)
	if err != nil {
		return Context{}, err
	}
	path, err := s.store.Path(ctx, from)
	if err != nil {
		return Context{}, err
	}
	st, err := StateAt(ctx, s.store, from)
	if err != nil {
		return Context{}, err
	}
	return BuildContext(ctx, path, st, ContextOptions{
		Transforms: s.transforms(opts),
		Projectors: s.projectors(opts),
	})
}

func (s *Session) transforms(opts ContextOptions) []EntryTransform {
	if len(opts.Transforms) == 0 {
		return s.opts.Transforms
	}
	return append(append([]EntryTransform(nil), s.opts.Transforms...), opts.Transforms...)
}

func (s *Session) projectors(opts ContextOptions) map[string]Projector {
	if len(opts.Projectors) == 0 {
		return s.opts.Projectors
	}
	m := maps.Clone(s.opts.Projectors)
	if m == nil {
		m = map[string]Projector{}
	}
	maps.Copy(m, opts.Projectors)
	return m
}

// UsageRecord is a usage entry to append: a cost record outside the
// context (pi writes kind "cache_warm" for its idle cache warms).
type UsageRecord struct {
	// Kind is free text.
	Kind     string
	Provider string
	Model    string
	// Usage has the shape of an assistant message's usage.
	Usage json.RawMessage
	// Note is written only when not empty.
	Note string
}

// AppendUsage appends a usage entry. Like pi's appendUsage it checks
// nothing about the record; it counts in [Stats].
func (s *Session) AppendUsage(ctx context.Context, u UsageRecord) (Entry, error) {
	var note any
	if u.Note != "" {
		note = u.Note
	}
	return s.appendFields(ctx, TypeUsage, "kind", u.Kind, "provider", u.Provider,
		"model", u.Model, "usage", u.Usage, "note", note)
}

// EditContext appends a context_edit of target: replacement nil omits
// what target contributes to the context; otherwise replacement is the
// JSON of the new content, a string or an array, and only the content of
// the target's message changes. It refuses, in pi 1.6.0's order and with
// its messages, a replacement that is not a string or an array
// ([EditBadReplacement]), a target that does not exist
// ([EntryNotFoundError]), a target off the active branch
// ([EditOffBranch]), and one that contributes no editable content
// ([EditNotEditable]). A string replacement for an assistant or toolResult
// target is stored as one text block, as pi stores it. The edit is
// guarded on the leaf it checked the branch at.
func (s *Session) EditContext(ctx context.Context, target string, replacement json.RawMessage) (Entry, error) {
	content := bytes.TrimSpace(replacement)
	if replacement != nil && (len(content) == 0 || content[0] != '"' && content[0] != '[' || jsonx.Valid(content) != nil) {
		return Entry{}, fmt.Errorf("edit context: %w",
			&EditRefusedError{TargetID: target, Reason: EditBadReplacement, Null: string(content) == "null"})
	}
	t, err := s.store.Entry(ctx, target)
	if err != nil {
		return Entry{}, fmt.Errorf("edit context: %w", err)
	}
	leaf, err := s.leaf(ctx)
	if err != nil {
		return Entry{}, fmt.Errorf("edit context: %w", err)
	}
	branch, err := s.store.FullPath(ctx, leaf)
	if err != nil {
		return Entry{}, fmt.Errorf("edit context: %w", err)
	}
	if !slices.ContainsFunc(branch, func(e Entry) bool { return e.ID == target }) {
		return Entry{}, fmt.Errorf("edit context: %w", &EditRefusedError{TargetID: target, Reason: EditOffBranch})
	}
	role, editable := editableRole(t)
	if !editable {
		return Entry{}, fmt.Errorf("edit context: %w", &EditRefusedError{TargetID: target, Reason: EditNotEditable})
	}
	repl := json.RawMessage("null")
	if replacement != nil {
		if role == "assistant" || role == "toolResult" {
			content = textBlockIfString(content)
		}
		repl = append(append(json.RawMessage(`{"content":`), content...), '}')
	}
	f, err := Fields("targetId", target, "replacement", repl)
	if err != nil {
		return Entry{}, fmt.Errorf("edit context: %w", err)
	}
	return s.Append(ctx, TypeContextEdit, f, IfLeaf(leaf))
}

// editableRole reports whether a context edit may target e, and the role
// of what it contributes ("custom" for a custom_message).
func editableRole(e Entry) (role string, ok bool) {
	switch e.Type {
	case TypeCustomMessage:
		return "custom", true
	case TypeMessage:
		role = MessageInfoOf(e).Role
		return role, role == "user" || role == "assistant" || role == "toolResult"
	}
	return "", false
}

// Projection returns, for every entry of the context entry list at the
// leaf (or at opts.From), the messages it contributes after context edits:
// pi 1.6.0's buildSessionProjection. Its messages, flattened, are
// [Session.Context]'s.
func (s *Session) Projection(ctx context.Context, opts ContextOptions) (Projected, error) {
	entries, err := s.ContextEntries(ctx, opts)
	if err != nil {
		return nil, err
	}
	return Projection(entries, s.projectors(opts))
}
