package sessiontree

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/sessiontree/sessiontree/internal/jsonx"
)

// EntryType names the kind of an entry, the "type" field of its JSON.
type EntryType string

// The entry types this package knows (pi's session format, version 3, as
// pi 1.6.0 writes it). Types are open: an entry of any other type is kept
// byte for byte, follows the append and leaf rules and contributes nothing
// to the context (DESIGN.md section 7).
const (
	TypeMessage             EntryType = "message"
	TypeThinkingLevelChange EntryType = "thinking_level_change"
	TypeModelChange         EntryType = "model_change"
	TypeActiveToolsChange   EntryType = "active_tools_change"
	TypeCompaction          EntryType = "compaction"
	TypeBranchSummary       EntryType = "branch_summary"
	TypeCustom              EntryType = "custom"
	TypeCustomMessage       EntryType = "custom_message"
	TypeLabel               EntryType = "label"
	TypeSessionInfo         EntryType = "session_info"
	TypeLeaf                EntryType = "leaf"
	// TypeUsage is a cost record outside the context (pi 1.x's cache warms).
	TypeUsage EntryType = "usage"
	// TypeContextEdit edits what an earlier entry contributes to the
	// context (pi 1.x).
	TypeContextEdit EntryType = "context_edit"
)

// EntryTypes lists every entry type in the order of the design document.
var EntryTypes = []EntryType{
	TypeMessage, TypeThinkingLevelChange, TypeModelChange, TypeActiveToolsChange,
	TypeCompaction, TypeBranchSummary, TypeCustom, TypeCustomMessage,
	TypeLabel, TypeSessionInfo, TypeLeaf, TypeUsage, TypeContextEdit,
}

// Known reports whether t is one of the types in [EntryTypes]. An unknown
// type is not an error: such entries are stored and read like any other.
func (t EntryType) Known() bool {
	for _, k := range EntryTypes {
		if t == k {
			return true
		}
	}
	return false
}

// TimeLayout is the timestamp format entries are written with: ISO-8601 in
// UTC with milliseconds, as JavaScript's Date.toISOString prints it.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime formats t the way entry timestamps are written.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// Entry is one record of a session's append log.
//
// Raw is the entry's complete JSON object exactly as written: every field,
// known or not, with numbers in their original text. The other fields are
// read from Raw and are there for convenience; Raw is the truth. An Entry
// is a value: do not modify Raw after handing it to a backend.
type Entry struct {
	// Seq is the entry's 1-based position in the append log. Backends set
	// it; it is not part of the JSON.
	Seq int64
	// Type is the "type" field.
	Type EntryType
	// ID is the "id" field, unique inside the session.
	ID string
	// ParentID is the "parentId" field; "" means null (a root).
	ParentID string
	// Timestamp is the "timestamp" field, an ISO-8601 string.
	Timestamp string
	// Raw is the whole JSON object.
	Raw json.RawMessage
}

// MarshalJSON writes the entry's raw JSON unchanged.
func (e Entry) MarshalJSON() ([]byte, error) {
	if len(e.Raw) == 0 {
		return []byte("null"), nil
	}
	return e.Raw, nil
}

// UnmarshalJSON reads an entry with [DecodeEntry].
func (e *Entry) UnmarshalJSON(b []byte) error {
	d, err := DecodeEntry(b)
	if err != nil {
		return err
	}
	*e = d
	return nil
}

// Field returns the raw JSON of a top-level field of the entry.
func (e Entry) Field(name string) (json.RawMessage, bool) {
	return jsonx.Field(e.Raw, name)
}

// String returns the value of a top-level string field; ok is false when
// the field is absent, null or not a string.
func (e Entry) String(name string) (s string, ok bool) { return stringOf(e.Field(name)) }

// TargetID returns the "targetId" of a label or leaf entry ("" for null).
func (e Entry) TargetID() string {
	s, _ := e.String("targetId")
	return s
}

// Time parses the entry's timestamp.
func (e Entry) Time() (time.Time, error) { return ParseTime(e.Timestamp) }

// ParseTime parses a timestamp as JavaScript's Date does, since pi reads
// every entry's time with new Date(timestamp): the ISO-8601 forms of the
// ECMAScript date time string format, pi's own 2026-12-01T10:00:00.000Z
// among them, but also a date alone, a time without seconds, an offset,
// and a fraction of any length cut to the millisecond (a Date holds
// milliseconds: two times within one compare equal, as in pi's tree).
// What Date cannot read (new Date gives NaN) is an error.
func ParseTime(s string) (time.Time, error) {
	t, ok := parseJSTime(s)
	if !ok {
		return time.Time{}, fmt.Errorf("timestamp %q: not a date and time in ISO-8601 form", s)
	}
	return t, nil
}

// DecodeEntry reads one entry from its JSON object. It checks the JSON
// completely but decodes only the four common fields; the payload stays raw.
// The result's Raw is a copy of b with surrounding space trimmed.
// Errors match [ErrInvalidEntry].
func DecodeEntry(b []byte) (Entry, error) {
	e, err := DecodeEntryOwned(b)
	if err != nil {
		return Entry{}, err
	}
	e.Raw = bytes.Clone(e.Raw)
	return e, nil
}

// DecodeEntryOwned is [DecodeEntry] for bytes the caller hands over: the
// result's Raw is b itself with surrounding space trimmed, not a copy,
// and b must not be changed afterwards. A reader whose line is in a
// buffer of its own (a long line) saves a copy of it so, which for an
// entry of hundreds of megabytes is that much memory.
func DecodeEntryOwned(b []byte) (Entry, error) {
	e, err := scanEntry(b)
	if err != nil {
		return Entry{}, err
	}
	e.Raw = bytes.TrimSpace(b)
	return e, nil
}

// scanEntry decodes the common fields without copying b.
func scanEntry(b []byte) (Entry, error) {
	var e Entry
	err := jsonx.ObjectMembers(b, func(k, v []byte) error {
		var err error
		switch {
		case jsonx.KeyEquals(k, "type"):
			var s string
			s, err = stringField("type", v)
			e.Type = EntryType(s)
		case jsonx.KeyEquals(k, "id"):
			e.ID, err = stringField("id", v)
		case jsonx.KeyEquals(k, "parentId"):
			e.ParentID, err = nullableID("parentId", v)
		case jsonx.KeyEquals(k, "timestamp"):
			e.Timestamp, err = stringField("timestamp", v)
		}
		return err
	})
	if err != nil {
		return Entry{}, invalid(e.ID, err.Error())
	}
	if err := checkCommon(e); err != nil {
		return Entry{}, err
	}
	return e, nil
}

// checkCommon refuses an entry without a type, an id or a timestamp (a
// member missing or ""), which every line of a session file needs.
func checkCommon(e Entry) error {
	switch {
	case e.Type == "":
		return invalid(e.ID, missingType)
	case e.ID == "":
		return invalid("", fmt.Sprintf("%s entry without \"id\"", e.Type))
	case e.Timestamp == "":
		return invalid(e.ID, `missing "timestamp"`)
	}
	return nil
}

const missingType = `missing "type"`

func invalid(id, reason string) error { return &InvalidEntryError{EntryID: id, Reason: reason} }

func stringField(name string, v []byte) (string, error) {
	s, err := jsonx.Unquote(v)
	if err != nil {
		return "", fmt.Errorf("%q must be a string, got %s", name, abbreviate(v))
	}
	return s, nil
}

// nullableID reads an id-valued field that may be null; an empty string is
// refused because "" means null in this package.
func nullableID(name string, v []byte) (string, error) {
	if jsonx.IsNull(v) {
		return "", nil
	}
	s, err := stringField(name, v)
	if err == nil && s == "" {
		err = fmt.Errorf("%q must be null or a non-empty id", name)
	}
	return s, err
}

func abbreviate(v []byte) string {
	if len(v) > 40 {
		return string(v[:37]) + "..."
	}
	return string(v)
}

// Validate checks the fields an entry's type requires (DESIGN.md section 2):
// a label and a leaf need a targetId (a leaf's may be null), a model change
// its provider and modelId, and so on. An entry of a type this package
// does not know needs nothing beyond the four common fields, and neither
// do usage and context_edit entries (pi writes them without checking, and
// a hand-written edit that names nothing is inert). Payloads are not
// inspected beyond that. Every entry needs a type that is not a session
// header's ([CheckDraft]), an id and a timestamp, as a session file's
// reader requires of each line. Errors match [ErrInvalidEntry].
func (e Entry) Validate() error {
	if err := checkCommon(e); err != nil {
		return err
	}
	if err := checkEntryType(e.Type, e.ID); err != nil {
		return err
	}
	rules := requiredFields[e.Type]
	if len(rules) == 0 {
		return nil
	}
	m := readMembers(e.Raw)
	return checkRequired(e, rules, &m)
}

// checkRequired checks the fields rules require of e, whose top-level
// members are m.
func checkRequired(e Entry, rules []fieldRule, m *members) error {
	for _, req := range rules {
		name := memberNames[req.member]
		raw, ok := m.get(req.member)
		if !ok {
			return invalid(e.ID, fmt.Sprintf("%s entry without %q", e.Type, name))
		}
		if err := req.check(name, raw); err != nil {
			return invalid(e.ID, err.Error())
		}
	}
	return nil
}

type fieldRule struct {
	member memberName
	check  func(name string, raw []byte) error
}

func isString(name string, raw []byte) error {
	_, err := stringField(name, raw)
	return err
}

func isNullableID(name string, raw []byte) error {
	_, err := nullableID(name, raw)
	return err
}

func isObject(name string, raw []byte) error {
	if len(raw) == 0 || raw[0] != '{' {
		return fmt.Errorf("%q must be an object", name)
	}
	return nil
}

func isArray(name string, raw []byte) error {
	if len(raw) == 0 || raw[0] != '[' {
		return fmt.Errorf("%q must be an array", name)
	}
	return nil
}

func isNonEmptyID(name string, raw []byte) error {
	s, err := nullableID(name, raw)
	if err == nil && s == "" {
		err = fmt.Errorf("%q must be an entry id", name)
	}
	return err
}

var requiredFields = map[EntryType][]fieldRule{
	TypeMessage:             {{mMessage, isObject}},
	TypeThinkingLevelChange: {{mThinkingLevel, isString}},
	TypeModelChange:         {{mProvider, isString}, {mModelID, isString}},
	TypeActiveToolsChange:   {{mActiveToolNames, isArray}},
	TypeCompaction:          {{mSummary, isString}},
	TypeBranchSummary:       {{mFromID, isString}, {mSummary, isString}},
	TypeCustom:              {{mCustomType, isString}},
	TypeCustomMessage:       {{mCustomType, isString}},
	TypeLabel:               {{mTargetID, isNonEmptyID}},
	TypeSessionInfo:         nil,
	TypeLeaf:                {{mTargetID, isNullableID}},
}

// Draft is an entry to append: its type and its type-specific fields. The
// backend fills in id (when empty), parentId (the current leaf) and
// timestamp (when empty).
type Draft struct {
	// Type is the entry type; it must not be [TypeLeaf] (use SetLeaf).
	Type EntryType
	// ID is the id to use; empty means the backend makes a fresh one.
	ID string
	// Timestamp is the ISO-8601 time; empty means now.
	Timestamp string
	// Fields is a JSON object of the fields beyond type, id, parentId and
	// timestamp, e.g. {"message":{...}}. Nil means none.
	Fields json.RawMessage
}

// CheckDraft refuses a draft that Append and AppendAll do not take, on
// every backend: a leaf entry, which only SetLeaf appends (it moves the
// leaf rather than appending under it), and a type no entry may have
// ([checkEntryType]). It returns a [*InvalidEntryError], nil for any
// other draft.
func CheckDraft(d Draft) error {
	if d.Type == TypeLeaf {
		return &InvalidEntryError{EntryID: d.ID, Reason: "use SetLeaf to append a leaf entry"}
	}
	return checkEntryType(d.Type, d.ID)
}

// CheckDraftFields is [CheckDraft] and the check of the fields the
// draft's type requires ([Entry.Validate]'s rules), made on the draft
// alone: what Append refuses of a draft, found before a backend makes up
// an id for it, so that a caller reading drafts (an input line, a
// request's entries) can name the one at fault. It returns a
// [*InvalidEntryError] naming d.ID ("" when the draft has none), nil for
// a draft Append's checks take. Fields must be a JSON object, as a
// draft's are.
func CheckDraftFields(d Draft) error {
	if err := CheckDraft(d); err != nil {
		return err
	}
	rules := requiredFields[d.Type]
	if len(rules) == 0 {
		return nil
	}
	m := readMembers(d.Fields)
	return checkRequired(Entry{Type: d.Type, ID: d.ID}, rules, &m)
}

// checkEntryType refuses the types no entry of a session may have, with a
// [*InvalidEntryError] naming entry id: none (a session file's reader
// refuses a line without one), and a session header (type "session"),
// which a session file holds once, first: pi skips another, and a file
// holding one is refused on import.
func checkEntryType(t EntryType, id string) error {
	switch t {
	case "":
		return invalid(id, missingType)
	case "session":
		return invalid(id, "a session header is not an entry: a session has one, made with it")
	}
	return nil
}

// LeafDraft is the draft of the leaf entry that SetLeaf(target) appends:
// its targetId is target, or null when target is "" (before the first
// entry). Its timestamp is left to the backend.
func LeafDraft(target string) (Draft, error) {
	var t any = json.RawMessage("null")
	if target != "" {
		t = target
	}
	f, err := Fields("targetId", t)
	return Draft{Type: TypeLeaf, Fields: f}, err
}

// BuildEntry makes the entry a draft becomes under parent. Backends call it
// inside their write path after choosing id, parent and time. The JSON is
// written type, id, parentId, timestamp, then Fields in their given order.
func BuildEntry(d Draft, id, parent, timestamp string) (Entry, error) {
	var m members
	return buildEntry(d, id, parent, timestamp, &m)
}

// buildEntry is BuildEntry, reading into m the entry's members, which its
// validation checks, as it writes them.
func buildEntry(d Draft, id, parent, timestamp string, m *members) (Entry, error) {
	raw, err := composeRaw(d.Type, id, parent, timestamp, d.Fields, m)
	if err != nil {
		return Entry{}, err
	}
	e := Entry{Type: d.Type, ID: id, ParentID: parent, Timestamp: timestamp, Raw: raw}
	if rules := requiredFields[e.Type]; len(rules) > 0 {
		return e, checkRequired(e, rules, m)
	}
	return e, nil
}

var reservedFields = []string{"type", "id", "parentId", "timestamp"}

// composeRaw writes an entry's JSON; m gets its members (readMembers),
// found as they are written.
func composeRaw(t EntryType, id, parent, ts string, fields json.RawMessage, m *members) (json.RawMessage, error) {
	var members [][]byte
	if len(bytes.TrimSpace(fields)) > 0 {
		err := jsonx.ObjectMembers(fields, func(k, v []byte) error {
			for _, r := range reservedFields {
				if jsonx.KeyEquals(k, r) {
					return fmt.Errorf("fields must not set %q", r)
				}
			}
			members = append(members, k, v)
			return nil
		})
		if err != nil {
			return nil, invalid(id, err.Error())
		}
	}
	buf := make([]byte, 0, 96+len(fields))
	buf = append(buf, `{"type":`...)
	buf = jsonx.AppendString(buf, string(t))
	buf = append(buf, `,"id":`...)
	buf = jsonx.AppendString(buf, id)
	buf = append(buf, `,"parentId":`...)
	if parent == "" {
		buf = append(buf, "null"...)
	} else {
		buf = jsonx.AppendString(buf, parent)
	}
	buf = append(buf, `,"timestamp":`...)
	buf = jsonx.AppendString(buf, ts)
	var spans [nMembers][2]int // where each member's value is written
	for i := 0; i < len(members); i += 2 {
		buf = append(buf, ',')
		buf = append(buf, members[i]...)
		buf = append(buf, ':')
		start := len(buf)
		buf = append(buf, members[i+1]...)
		if j := memberOf(members[i]); j >= 0 {
			spans[j] = [2]int{start, len(buf)}
		}
	}
	buf = append(buf, '}')
	for j, sp := range spans {
		if sp[1] > sp[0] {
			m[j] = buf[sp[0]:sp[1]]
		}
	}
	return buf, nil
}

// appendValue appends v as JSON: strings with [jsonx.AppendString], raw JSON
// checked and kept byte for byte, anything else through encoding/json.
func appendValue(buf []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		return jsonx.AppendString(buf, x), nil
	case json.RawMessage:
		if err := jsonx.Valid(x); err != nil {
			return nil, err
		}
		return append(buf, bytes.TrimSpace(x)...), nil
	case bool:
		return strconv.AppendBool(buf, x), nil
	case int64:
		return strconv.AppendInt(buf, x, 10), nil
	case []string:
		buf = append(buf, '[')
		for i, s := range x {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = jsonx.AppendString(buf, s)
		}
		return append(buf, ']'), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(buf, b...), nil
}

// Fields builds the Fields of a [Draft] from name/value pairs, marshalling
// each value with encoding/json (json.RawMessage values are kept as they
// are). Pairs whose value is nil are left out. A value that is not JSON
// (a json.RawMessage that does not parse, one encoding/json refuses) makes
// a malformed entry: a [*InvalidEntryError] naming the field.
func Fields(pairs ...any) (json.RawMessage, error) {
	if len(pairs)%2 != 0 {
		return nil, fmt.Errorf("fields: odd number of arguments")
	}
	buf := []byte{'{'}
	for i := 0; i < len(pairs); i += 2 {
		name, ok := pairs[i].(string)
		if !ok {
			return nil, fmt.Errorf("fields: name %v is not a string", pairs[i])
		}
		if isNil(pairs[i+1]) {
			continue
		}
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf = jsonx.AppendString(buf, name)
		buf = append(buf, ':')
		var err error
		if buf, err = appendValue(buf, pairs[i+1]); err != nil {
			return nil, &InvalidEntryError{Reason: fmt.Sprintf("%q: %v", name, err)}
		}
	}
	return append(buf, '}'), nil
}

func isNil(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case json.RawMessage:
		return x == nil
	case *string:
		return x == nil
	case []string:
		return x == nil
	}
	return false
}
