package sessiontree

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/sessiontree/sessiontree/internal/jsonx"
)

// This file is the one owner of reading an entry's JSON for what a store
// keeps of it: the members of its top level and of its message that the
// rules of stats.go, replay.go and storage.go look at are found in one
// walk each, and every reader ([StatsOf], [MessageInfoOf], [EffectsOf],
// [Entry.Validate], [State.Apply], [FactsOf]) takes them from that walk.
// An append reads them once, while the entry's JSON is written
// ([BuildEntryFacts]), where it used to walk the JSON once per reader
// (issues 15 and 17). BenchmarkAppendJSON, an assistant message with a
// tool call and usage, building it and reading what the store keeps, 8
// runs interleaved with the readers as they were (load 2.2-2.5): the
// SQLite engine's reads 6.00 -> 2.64 µs, PostgreSQL's, whose append read
// the message four times, 9.11 -> 2.60 µs and 14 -> 6 allocations.

// Facts are what an entry's JSON says that a store keeps of it, read in
// one pass by [FactsOf] or, for an entry being built, [BuildEntryFacts]:
// the tree rules' effects, the message's role, model and usage, what the
// entry adds to the session's stats, the columns a backend indexes, and
// the checksum. Each field is what the function it names returns; none
// is another rule.
type Facts struct {
	// Effects are [EffectsOf] with the message's role: the state settings
	// the entry sets, its compaction cut, target, label and name.
	Effects
	// Message is [MessageInfoOf].
	Message MessageInfo
	// Stats is [StatsOf].
	Stats EntryStats
	// TargetID is [Entry.TargetID], whatever the entry's type.
	TargetID string
	// CustomType is the "customType" of a custom or custom_message entry
	// ("" for other types, or when it is not a string).
	CustomType string
	// Checksum is [EntryChecksum] of the entry's JSON.
	Checksum int64
}

// FactsOf reads the [Facts] of e: one walk of its top level and, for a
// message, one of the message.
func FactsOf(e Entry) Facts {
	m := readMembers(e.Raw)
	return factsFrom(e, &m, false)
}

// BuildEntryFacts is [BuildEntry] returning the entry's [Facts] too, read
// while its JSON is written: a backend's append needs both.
func BuildEntryFacts(d Draft, id, parent, timestamp string) (Entry, Facts, error) {
	var m members
	e, err := buildEntry(d, id, parent, timestamp, &m)
	if err != nil {
		return e, Facts{}, err
	}
	return e, factsFrom(e, &m, true), nil
}

// factsFrom reads the facts of e, whose top-level members are m. checked
// says that e's JSON is known valid (it was checked as it was built), so
// that nothing of it needs checking again.
func factsFrom(e Entry, m *members, checked bool) Facts {
	msg := readMessage(e.Type, m, checked)
	f := Facts{Message: msg.info, Checksum: EntryChecksum(e.Raw)}
	f.Stats = statsFrom(e.Type, m, &msg, checked)
	f.Effects.read(e.Type, m, msg.info.Role)
	f.TargetID, _ = stringOf(m.get(mTargetID))
	if e.Type == TypeCustom || e.Type == TypeCustomMessage {
		f.CustomType, _ = stringOf(m.get(mCustomType))
	}
	return f
}

// memberName names a member the facts read: at the top level, in the
// message, or in a usage object. One lookup (memberOf) serves the three.
type memberName int

const (
	mMessage memberName = iota
	mUsage
	mProvider
	mModel
	mModelID
	mThinkingLevel
	mActiveToolNames
	mCustomType
	mTargetID
	mLabel
	mName
	mFirstKept
	mRetainedTail
	mSummary
	mFromID
	mRole
	mResponseModel
	mContent
	mInput
	mOutput
	mCacheRead
	mCacheWrite
	mCost
	nMembers
)

// memberNames are the keys of the members, by memberName.
var memberNames = []string{
	mMessage: "message", mUsage: "usage", mProvider: "provider", mModel: "model",
	mModelID: "modelId", mThinkingLevel: "thinkingLevel", mActiveToolNames: "activeToolNames",
	mCustomType: "customType", mTargetID: "targetId", mLabel: "label", mName: "name",
	mFirstKept: "firstKeptEntryId", mRetainedTail: "retainedTail", mSummary: "summary",
	mFromID: "fromId", mRole: "role", mResponseModel: "responseModel", mContent: "content",
	mInput: "input", mOutput: "output", mCacheRead: "cacheRead", mCacheWrite: "cacheWrite", mCost: "cost",
}

// memberOf is the memberName of the member whose quoted key is rawKey,
// -1 when it is none of them.
func memberOf(rawKey []byte) int {
	k, plain := plainKey(rawKey)
	if !plain {
		return escapedKeyIndex(rawKey, memberNames)
	}
	switch string(k) { // as memberNames
	case "message":
		return int(mMessage)
	case "usage":
		return int(mUsage)
	case "provider":
		return int(mProvider)
	case "model":
		return int(mModel)
	case "modelId":
		return int(mModelID)
	case "thinkingLevel":
		return int(mThinkingLevel)
	case "activeToolNames":
		return int(mActiveToolNames)
	case "customType":
		return int(mCustomType)
	case "targetId":
		return int(mTargetID)
	case "label":
		return int(mLabel)
	case "name":
		return int(mName)
	case "firstKeptEntryId":
		return int(mFirstKept)
	case "retainedTail":
		return int(mRetainedTail)
	case "summary":
		return int(mSummary)
	case "fromId":
		return int(mFromID)
	case "role":
		return int(mRole)
	case "responseModel":
		return int(mResponseModel)
	case "content":
		return int(mContent)
	case "input":
		return int(mInput)
	case "output":
		return int(mOutput)
	case "cacheRead":
		return int(mCacheRead)
	case "cacheWrite":
		return int(mCacheWrite)
	case "cost":
		return int(mCost)
	}
	return -1
}

// members are the raw values of the members of one object (an entry's
// top level, a usage object) that the facts read, by memberName: each the
// member's last occurrence, nil when it is absent, what [Entry.Field]
// finds.
type members [nMembers][]byte

// readMembers reads the members of an object in one walk.
func readMembers(raw []byte) members {
	var m members
	jsonx.Members(raw, func(k, v []byte) {
		if i := memberOf(k); i >= 0 {
			m[i] = v
		}
	})
	return m
}

// get is the member n, as [Entry.Field] returns it; a nil m has none.
func (m *members) get(n memberName) ([]byte, bool) {
	if m == nil {
		return nil, false
	}
	return m[n], m[n] != nil
}

// plainKey is the name in rawKey, a member's quoted key, when it has no
// escapes: then a name equals it exactly when [jsonx.KeyEquals] says so.
// The lookups switch over it, faster than comparing it with each name.
func plainKey(rawKey []byte) ([]byte, bool) {
	if len(rawKey) < 2 || bytes.IndexByte(rawKey, '\\') >= 0 {
		return nil, false
	}
	return rawKey[1 : len(rawKey)-1], true
}

// escapedKeyIndex is the index in names of the name rawKey, a key that is
// not plain, is ([jsonx.KeyEquals]), -1 when none.
func escapedKeyIndex(rawKey []byte, names []string) int {
	for i, n := range names {
		if jsonx.KeyEquals(rawKey, n) {
			return i
		}
	}
	return -1
}

// stringOf is a member's string value, ok false when it is absent, null
// or not a string, as [Entry.String] reads it.
func stringOf(raw []byte, found bool) (s string, ok bool) {
	if !found {
		return "", false
	}
	s, err := jsonx.Unquote(raw)
	return s, err == nil
}

// messageRead is what one walk of a message entry's "message" reads.
type messageRead struct {
	info MessageInfo
	// content is the message's "content", checked when it is known
	// valid JSON.
	content []byte
	checked bool
	// hasProvider, hasModel: the message has a provider, a model member
	// (of any type), which pi's context model copies.
	hasProvider, hasModel bool
	// provider, model, responseModel are those members' JSON values (nil
	// when absent), which pi's breakdown key writes whatever their type
	// (bucketKey).
	provider, model, responseModel []byte
}

// readMessage reads the message of an entry of type t with members m.
// Unless checked, the message is checked as it is walked (a member after
// invalid JSON is not read); an invalid one's content is then found
// without that check, as it was read on its own.
func readMessage(t EntryType, m *members, checked bool) messageRead {
	var r messageRead
	msg, ok := m.get(mMessage)
	if t != TypeMessage || !ok {
		return r
	}
	note := func(k, v []byte) {
		switch memberName(memberOf(k)) {
		case mRole:
			r.info.Role, _ = jsonx.Unquote(v)
		case mProvider:
			r.info.Provider, _ = jsonx.Unquote(v)
			r.hasProvider, r.provider = true, v
		case mModel:
			r.info.Model, _ = jsonx.Unquote(v)
			r.hasModel, r.model = true, v
		case mResponseModel:
			r.info.ResponseModel, _ = jsonx.Unquote(v)
			r.responseModel = v
		case mUsage:
			r.info.Usage = v
		case mContent:
			r.content = v
		}
	}
	switch {
	case checked:
		jsonx.Members(msg, note)
	case jsonx.ObjectMembers(msg, func(k, v []byte) error { note(k, v); return nil }) == nil:
		// Every value ObjectMembers hands over it has checked.
	default:
		r.content, _ = jsonx.Field(msg, "content")
		return r
	}
	r.checked = true
	return r
}

// countToolCalls counts the toolCall blocks of a message's content,
// checking the content unless checked.
func countToolCalls(content []byte, checked bool) int64 {
	if len(content) == 0 || content[0] != '[' {
		return 0
	}
	var n int64
	count := func(v []byte) {
		if t, ok := jsonx.Field(v, "type"); ok && string(t) == `"toolCall"` {
			n++
		}
	}
	if checked {
		jsonx.Elements(content, count)
	} else {
		_ = jsonx.ArrayElements(content, func(v []byte) error { count(v); return nil })
	}
	return n
}

// toolNames is the tool list an activeToolNames member sets, ok false
// when it sets none (a missing or malformed list).
func toolNames(raw []byte, found bool) ([]string, bool) {
	if !found {
		return nil, false
	}
	var names []string
	if json.Unmarshal(raw, &names) != nil {
		return nil, false
	}
	if names == nil {
		names = []string{}
	}
	return names, true
}

// retainedTail reports whether a retainedTail member is there and not
// null.
func retainedTail(raw []byte, found bool) bool { return found && !jsonx.IsNull(raw) }

// labelText is the label a label member sets ([DerivedText]). pi keeps
// any value it takes as true and its tree shows it as JavaScript's
// String() does: a string as it is, 5 as "5", true as "true", an object
// as "[object Object]" (jsText). A value it takes as false (absent, null,
// false, 0, "") clears the label, and so does one whose text is empty
// (an empty array: pi keeps it, but a label "" here means none).
func labelText(raw []byte, found bool) string {
	if !found || jsonx.Falsy(raw) {
		return ""
	}
	if s, ok := stringOf(raw, found); ok {
		return DerivedText(s)
	}
	return DerivedText(jsText(raw))
}

// jsText is JavaScript's String() of the JSON value raw: a string as it
// is, null as "", a number as Number.prototype.toString writes it, an
// array's elements joined by commas, an object "[object Object]".
func jsText(raw []byte) string {
	switch {
	case len(raw) == 0 || jsonx.IsNull(raw):
		return ""
	case raw[0] == '"':
		s, _ := jsonx.Unquote(raw)
		return s
	case raw[0] == '{':
		return "[object Object]"
	case raw[0] == '[':
		var parts []string
		jsonx.Elements(raw, func(v []byte) { parts = append(parts, jsText(v)) })
		return strings.Join(parts, ",")
	case raw[0] == '-' || '0' <= raw[0] && raw[0] <= '9':
		return jsNumber(raw)
	}
	return string(raw) // true, false
}

// jsNumber is Number.prototype.toString of the JSON number raw: the
// shortest digits that read back as the same float64, in plain notation
// from 1e-6 up to 1e21, else as 1.5e+300; Infinity past float64's range.
func jsNumber(raw []byte) string {
	f, err := strconv.ParseFloat(string(raw), 64)
	a := math.Abs(f)
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case err != nil:
		return string(raw)
	case f == 0:
		return "0"
	case a >= 1e-6 && a < 1e21:
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // 1.5e+300, 1e-07
	mant, exp, _ := strings.Cut(s, "e")
	sign, digits := exp[:1], strings.TrimLeft(exp[1:], "0")
	return mant + "e" + sign + digits
}
