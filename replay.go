package sessiontree

// This file is the one owner of the tree rules (DESIGN.md sections 1, 3
// and 4): what an entry does to its session when the log is replayed in
// order. Every backend's load, append and batch, the engine's Check and
// the CLI's file check go through it, so a new entry rule is one change
// here.

import "fmt"

// Effects is what one entry does to its session beyond being stored, read
// from its JSON by [EffectsOf]: the state settings it sets, where it cuts
// the path, the target it needs, the label and name it sets, the entry a
// context edit names.
type Effects struct {
	// SetsThinking, SetsModel, SetsTools: [State.Apply] takes the entry
	// for that setting.
	SetsThinking, SetsModel, SetsTools bool
	// Compaction: the entry is a compaction. Tail: it carries its kept
	// messages inline, so a path through it starts at itself. Keep: its
	// firstKeptEntryId ("" if none).
	Compaction, Tail bool
	Keep             string
	// Target is the targetId of a label or leaf entry ("" for null): a
	// leaf entry's must exist earlier in the log, a label entry's labels
	// something only then ([CheckTarget]).
	Target string
	// Label: a label entry that labels its target; LabelText is the label
	// it sets, "" clears. [CheckTarget] clears Label when the target does
	// not exist.
	Label     bool
	LabelText string
	// SetsName: a session_info entry; Name is the name it sets, "" clears.
	SetsName bool
	Name     string
	// EditTarget is the entry a context_edit names. It is not checked
	// when reading: an edit whose target is missing does nothing (PI1.md
	// section 2); [ContextEditOf] reads the whole edit.
	EditTarget string
}

// EffectsOf reads the effects of entry e. role is the role of a message
// entry ([MessageInfo.Role], which [StatsOf] reads too, so callers that
// count stats pass it rather than reading the message twice); for other
// types it is ignored. A caller that needs no state settings may pass ""
// for a message: then only SetsModel is wrong, and it stays false.
func EffectsOf(e Entry, role string) Effects {
	var f Effects
	switch e.Type {
	case TypeThinkingLevelChange, TypeActiveToolsChange, TypeCompaction, TypeLabel,
		TypeLeaf, TypeSessionInfo, TypeContextEdit:
		m := readMembers(e.Raw)
		f.read(e.Type, &m, role)
	default:
		f.read(e.Type, nil, role) // the others' effects read nothing of it
	}
	return f
}

// read sets f, zero, to the effects of an entry of type t whose members
// are m (EffectsOf), in place: Effects is large enough that returning it
// through two calls cost as much as a message's effects.
func (f *Effects) read(t EntryType, m *members, role string) {
	switch t {
	case TypeMessage:
		f.SetsModel = role == "assistant"
	case TypeThinkingLevelChange:
		_, f.SetsThinking = stringOf(m.get(mThinkingLevel))
	case TypeModelChange:
		f.SetsModel = true
	case TypeActiveToolsChange:
		_, f.SetsTools = toolNames(m.get(mActiveToolNames))
	case TypeCompaction:
		f.Compaction = true
		f.Tail = retainedTail(m.get(mRetainedTail))
		f.Keep, _ = stringOf(m.get(mFirstKept))
	case TypeLabel:
		f.Label = true
		f.Target, _ = stringOf(m.get(mTargetID))
		f.LabelText = labelText(m.get(mLabel))
	case TypeLeaf:
		f.Target, _ = stringOf(m.get(mTargetID))
	case TypeSessionInfo:
		f.SetsName = true
		f.Name = nameText(m.get(mName))
	case TypeContextEdit:
		f.EditTarget, _ = stringOf(m.get(mTargetID))
	}
}

// Placement is where an entry sits in the tree: its depth, the depth its
// path starts at, and the latest entries on its full path that set each
// state setting. Entries are named by a key of the caller's choosing (the
// engine's row key, a backend's sequence number); 0 means none.
type Placement struct {
	// Key is the entry's own key.
	Key int64
	// Depth is 1 for a root, its parent's plus one otherwise.
	Depth int64
	// Start is the depth the entry's path starts at: the compaction
	// boundary (DESIGN.md section 4), 1 when there is none.
	Start int64
	// Thinking, Model, Tools are the keys of the latest entries on the
	// full path (the entry itself included) that set each setting.
	Thinking, Model, Tools int64
}

// StateSetting is one of the three settings a [Placement] keeps a pointer
// for, in the order Thinking, Model, Tools.
type StateSetting int

// The settings of a State that entries set.
const (
	ThinkingSetting StateSetting = iota
	ModelSetting
	ToolsSetting
)

// MaySet reports whether entry e may be what a stored pointer for setting
// s names ([Place] sets it to an entry that sets s): a store checks its
// pointers by it. e's effects are read without a message's role, since a
// message may be large; any message may then be the model's (an
// assistant's sets it), [State.Apply] reading the role.
func MaySet(s StateSetting, e Entry) bool {
	f := EffectsOf(e, "")
	switch s {
	case ThinkingSetting:
		return f.SetsThinking
	case ModelSetting:
		return f.SetsModel || e.Type == TypeMessage
	default:
		return f.SetsTools
	}
}

// Place computes the placement of entry e, with effects f and key key,
// under the placement of its parent (nil for a root): the depth, the
// path's start (inherited from the parent, except that a compaction starts
// it at itself when it has a retainedTail or keeps itself, at its
// firstKeptEntryId when that is an ancestor, else at the root) and the
// state keys. ancestorDepth gives the depth of an entry when it is an
// ancestor of e, 0 otherwise; it is called only for a compaction.
func Place(e Entry, f *Effects, key int64, parent *Placement, ancestorDepth func(id string) (int64, error)) (Placement, error) {
	p := Placement{Key: key, Depth: 1, Start: 1}
	if parent != nil {
		p.Depth, p.Start = parent.Depth+1, parent.Start
		p.Thinking, p.Model, p.Tools = parent.Thinking, parent.Model, parent.Tools
	}
	if f.SetsThinking {
		p.Thinking = key
	}
	if f.SetsModel {
		p.Model = key
	}
	if f.SetsTools {
		p.Tools = key
	}
	if !f.Compaction {
		return p, nil
	}
	switch {
	case f.cutsAtSelf(e.ID):
		p.Start = p.Depth
	case f.Keep != "":
		d, err := ancestorDepth(f.Keep)
		if err != nil {
			return p, err
		}
		p.Start = max(d, 1)
	default:
		p.Start = 1
	}
	return p, nil
}

// cutsAtSelf reports whether a compaction with effects f, id id, starts
// the paths through it at itself: it carries its kept messages, or keeps
// itself (which keeps nothing before it).
func (f *Effects) cutsAtSelf(id string) bool { return f.Tail || f.Keep == id }

// Earlier is how a [Replayer] looks up the entries before the one it
// replays.
type Earlier interface {
	// Taken reports whether an earlier entry has id, for the duplicate
	// check. A store that refuses duplicates itself (a unique index) may
	// answer for the entries it holds in memory only.
	Taken(id string) bool
	// Exists reports whether an earlier entry has id, for parents and
	// targets.
	Exists(id string) (bool, error)
}

// EarlierMap is an [Earlier] over a map from the ids of the entries
// before the one checked to whatever a caller keeps of them (the entry,
// a hash, a row): an id is taken, and exists, when the map has it.
type EarlierMap[V any] map[string]V

// Taken implements [Earlier]: whether the map has id.
func (m EarlierMap[V]) Taken(id string) bool { _, ok := m[id]; return ok }

// Exists implements [Earlier]: whether the map has id; it never fails.
func (m EarlierMap[V]) Exists(id string) (bool, error) { return m.Taken(id), nil }

// Replayer replays a session's log in order: [Replayer.Next] checks each
// entry against the entries before it (unique id, a parent and a target
// that exist earlier, so no cycle can form) and follows the leaf rule,
// the labels and the name. The zero value is an empty session. A Replayer
// is not safe for concurrent use.
type Replayer struct {
	// Leaf is the leaf after the entries replayed ("" for null).
	Leaf string
	// Name is the session name they set ("" for none).
	Name string
	// Labels are the current labels by target id, nil until a label is
	// set.
	Labels map[string]string
}

// Next replays entry e, whose effects are f, after the entries earlier
// knows. It returns a [CorruptError] naming e for a duplicate id or a
// missing parent, an [EntryNotFoundError] naming the target for a missing
// label or leaf target, or earlier's error; the Replayer is then
// unchanged.
func (r *Replayer) Next(e Entry, f *Effects, earlier Earlier) error {
	if err := CheckEntry(e, f, earlier); err != nil {
		return err
	}
	r.Apply(e, f)
	return nil
}

// CheckEntry checks entry e, whose effects are f, against the entries earlier
// knows, as [Replayer.Next] does, without applying it.
func CheckEntry(e Entry, f *Effects, earlier Earlier) error {
	return checkEntry(e, f, earlier, CheckParent)
}

// CheckBatchEntry is [CheckEntry] for an entry a caller gives to a
// write with its parent named (a [BatchAppender]'s batch): a parent
// earlier does not know is the caller's mistake, not damage, so it is
// refused with an [EntryNotFoundError] naming the parent (it matches
// [ErrNotFound], as [Storage.AppendUnder] of a missing parent does),
// wrapped with e's id, not with a [CorruptError].
func CheckBatchEntry(e Entry, f *Effects, earlier Earlier) error {
	return checkEntry(e, f, earlier, givenParent)
}

// checkEntry is CheckEntry with parent the rule for e's parent.
func checkEntry(e Entry, f *Effects, earlier Earlier, parent func(Entry, Earlier) error) error {
	if earlier.Taken(e.ID) {
		return &CorruptError{EntryID: e.ID, Reason: "duplicate id"}
	}
	if err := parent(e, earlier); err != nil {
		return err
	}
	return CheckTarget(f, earlier)
}

// CheckParent refuses entry e when it has a parent earlier does not know,
// with a [CorruptError] naming e: the rule for data read (a file, a
// stored log).
func CheckParent(e Entry, earlier Earlier) error {
	ok, err := parentExists(e, earlier)
	if err == nil && !ok {
		err = &CorruptError{EntryID: e.ID, Reason: "parent " + e.ParentID + " does not exist"}
	}
	return err
}

// givenParent is CheckBatchEntry's rule for e's parent.
func givenParent(e Entry, earlier Earlier) error {
	ok, err := parentExists(e, earlier)
	if err == nil && !ok {
		err = fmt.Errorf("parent of %s: %w", e.ID, &EntryNotFoundError{ID: e.ParentID})
	}
	return err
}

// parentExists reports whether e is a root or earlier knows its parent.
func parentExists(e Entry, earlier Earlier) (bool, error) {
	if e.ParentID == "" {
		return true, nil
	}
	return earlier.Exists(e.ParentID)
}

// CheckTarget checks the target of a label or leaf entry, with effects f,
// against the entries earlier knows. A leaf entry whose target is not
// among them is refused, with an [EntryNotFoundError] naming the target:
// the leaf would name no entry. A label entry whose target is not among
// them is kept, as pi keeps it (a label entry is a node of the tree
// whatever it points at; refusing it would cut every entry after it off
// the tree), but labels nothing: CheckTarget sets f.Label false, so that
// it neither sets nor clears a label and follows the leaf rule as any
// entry does. Every backend's append and replay go through here, so the
// labels agree. (pi also keeps the label of an id that no entry has yet,
// and shows it once an entry with that id is written; pi's ids are
// random, so only a hand-made file has such an entry, and sessiontree
// applies a label only to an entry written before it.)
func CheckTarget(f *Effects, earlier Earlier) error {
	if f.Target == "" {
		return nil
	}
	ok, err := earlier.Exists(f.Target)
	switch {
	case err != nil:
		return err
	case ok:
	case f.Label:
		f.Label, f.LabelText = false, ""
	default:
		return &EntryNotFoundError{ID: f.Target}
	}
	return nil
}

// CheckNewTarget is [CheckTarget] for an entry written now (an append of
// a [Draft]): a label of an entry that does not exist is refused too,
// with an [EntryNotFoundError] naming the target, as pi's
// appendLabelChange refuses it ("Entry <id> not found"). Only a label
// entry already written (a file read, a batch imported) is kept
// labelling nothing.
func CheckNewTarget(f *Effects, earlier Earlier) error {
	label := f.Label
	if err := CheckTarget(f, earlier); err != nil {
		return err
	}
	if label && !f.Label {
		return &EntryNotFoundError{ID: f.Target}
	}
	return nil
}

// Apply follows entry e, with effects f, without checking it: the leaf
// rule (a leaf entry moves the leaf to its target, any other entry to
// itself), the latest label per target (an empty one clears it) and the
// latest name.
func (r *Replayer) Apply(e Entry, f *Effects) {
	switch {
	case e.Type == TypeLeaf:
		r.Leaf = f.Target
		return
	case f.Label:
		if f.LabelText == "" {
			delete(r.Labels, f.Target)
		} else {
			if r.Labels == nil {
				r.Labels = map[string]string{}
			}
			r.Labels[f.Target] = f.LabelText
		}
	case f.SetsName:
		r.Name = f.Name
	}
	r.Leaf = e.ID
}
