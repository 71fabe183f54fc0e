package sessiontree_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/jsonx"
	"github.com/sessiontree/sessiontree/storetest"
)

// The one-pass facts (facts.go) replace readers that each walked an
// entry's JSON on their own. Those readers, as they were, are kept below
// as the oracle: the facts of every fixture entry, read by FactsOf and
// while the entry is built again from its draft (BuildEntryFacts), must
// be what they gave, field by field.

// TestFactsAgreeWithReaders compares the facts of every entry of the pi
// fixtures with the per-reader results.
func TestFactsAgreeWithReaders(t *testing.T) {
	t.Parallel()
	all := fixtureEntries(t)
	if len(all) < 500 {
		t.Fatalf("only %d fixture entries", len(all))
	}
	for _, e := range all {
		checkFacts(t, e, sessiontree.FactsOf(e))
		d := fieldsDraft(t, e)
		built, f, err := sessiontree.BuildEntryFacts(d, e.ID, e.ParentID, e.Timestamp)
		if err != nil {
			t.Fatalf("BuildEntryFacts(%s) = %v", e.ID, err)
		}
		again, err := sessiontree.BuildEntry(d, e.ID, e.ParentID, e.Timestamp)
		if err != nil || !bytes.Equal(again.Raw, built.Raw) {
			t.Fatalf("BuildEntry(%s) = %s, %v; want %s", e.ID, again.Raw, err, built.Raw)
		}
		checkFacts(t, built, f)
	}
}

// TestFactsOfEveryRule covers what the fixtures hold too rarely: each
// rule of the readers on entries written for it, escaped keys, repeated
// members and malformed values among them.
func TestFactsOfEveryRule(t *testing.T) {
	for _, line := range ruleEntries {
		e, err := sessiontree.DecodeEntry([]byte(line))
		if err != nil {
			t.Fatalf("DecodeEntry(%s) = %v", line, err)
		}
		checkFacts(t, e, sessiontree.FactsOf(e))
		built, f, err := sessiontree.BuildEntryFacts(fieldsDraft(t, e), e.ID, e.ParentID, e.Timestamp)
		if verr := oldValidate(e); (err == nil) != (verr == nil) {
			t.Fatalf("BuildEntryFacts(%s) = %v; want %v", line, err, verr)
		}
		if err == nil {
			checkFacts(t, built, f)
		}
	}
}

var ruleEntries = []string{
	`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"assistant","provider":"p","model":"m","responseModel":"r","content":[{"type":"toolCall","id":"1"},{"type":"text"},{"type":"toolCall"}],"usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"cost":{"total":0.5}}}}`,
	`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[{"type":"toolCall"}],"content":"late","usage":{"input":1,"output":"2"}}}`,
	`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"\u0072ole":"assistant","provider":"p","usage":{"\u0069nput":1e3,"output":-2.5,"input":7,"cost":{"total":1,"total":2}}}}`,
	`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"toolResult","usage":{"input":1,"output":2}},"message":{"role":"user","content":"x"}}`,
	`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"toolResult","usage":{"input":1,"output":2,"cacheRead":null}}}`,
	`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":7}}`,
	`{"type":"usage","id":"a","parentId":null,"timestamp":"t","provider":"p","model":"m","usage":{"input":1,"output":2,"cost":{"total":3}}}`,
	`{"type":"usage","id":"a","parentId":null,"timestamp":"t","usage":[1]}`,
	`{"type":"compaction","id":"a","parentId":null,"timestamp":"t","summary":"s","firstKeptEntryId":"k","retainedTail":null,"usage":{"input":1,"output":2}}`,
	`{"type":"compaction","id":"a","parentId":null,"timestamp":"t","summary":"s","firstKeptEntryId":"a","retainedTail":[]}`,
	`{"type":"branch_summary","id":"a","parentId":null,"timestamp":"t","fromId":"f","summary":"s","usage":{"input":1,"output":2}}`,
	`{"type":"thinking_level_change","id":"a","parentId":null,"timestamp":"t","thinkingLevel":"high"}`,
	`{"type":"thinking_level_change","id":"a","parentId":null,"timestamp":"t","thinkingLevel":null}`,
	`{"type":"model_change","id":"a","parentId":null,"timestamp":"t","provider":"p","modelId":"m"}`,
	`{"type":"active_tools_change","id":"a","parentId":null,"timestamp":"t","activeToolNames":["read","bash"]}`,
	`{"type":"active_tools_change","id":"a","parentId":null,"timestamp":"t","activeToolNames":[1]}`,
	`{"type":"label","id":"a","parentId":null,"timestamp":"t","targetId":"b","label":"x\u0000y"}`,
	`{"type":"label","id":"a","parentId":null,"timestamp":"t","targetId":"b"}`,
	`{"type":"leaf","id":"a","parentId":null,"timestamp":"t","targetId":null}`,
	`{"type":"session_info","id":"a","parentId":null,"timestamp":"t","name":"  n  "}`,
	`{"type":"context_edit","id":"a","parentId":null,"timestamp":"t","targetId":"b","replacement":null}`,
	`{"type":"custom","id":"a","parentId":null,"timestamp":"t","customType":"c","targetId":"z"}`,
	`{"type":"custom_message","id":"a","parentId":null,"timestamp":"t","customType":3}`,
	`{"type":"custom","id":"a","parentId":null,"timestamp":"t"}`,
	`{"type":"something_new","id":"a","parentId":null,"timestamp":"t","usage":{"input":1,"output":2},"targetId":"q"}`,
}

// FuzzFactsOf reads the facts of arbitrary JSON, valid or not, as an
// entry of each type. Of valid JSON they must be what the per-reader
// oracle gives. Of invalid JSON there is no answer to compare with: the
// oracle reads members with jsonx.Field, whose result on invalid input
// is unspecified (it jumps from quote to quote: of a value cut short,
// {"provider":", it gives the bytes left, where FactsOf's reader, which
// checks each value it reads, finds none), and no entry holds such JSON
// (DecodeEntry and BuildEntry refuse it). So there FactsOf must return,
// and the exported readers and State.Apply, built on it, agree with it
// (testdata/fuzz/FuzzFactsOf/3d18e4aa74b4a89b).
func FuzzFactsOf(f *testing.F) {
	for _, line := range ruleEntries {
		f.Add([]byte(line))
		f.Add([]byte(line[:len(line)-9])) // cut short: not JSON
		f.Add([]byte(strings.Replace(line, `,"`, `,,"`, 2)))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		valid := jsonx.Valid(raw) == nil
		for _, typ := range sessiontree.EntryTypes {
			e := sessiontree.Entry{Type: typ, ID: "a", Timestamp: "t", Raw: raw}
			facts := sessiontree.FactsOf(e)
			if valid {
				checkFacts(t, e, facts)
				continue
			}
			checkReaders(t, e, facts)
			checkSetters(t, e, facts)
			if facts.Checksum != sessiontree.EntryChecksum(raw) {
				t.Fatalf("facts of %q: checksum %d; want %d", raw, facts.Checksum, sessiontree.EntryChecksum(raw))
			}
		}
	})
}

// checkReaders fails t unless the exported readers, thin wrappers of
// FactsOf, say what f says of e.
func checkReaders(t testing.TB, e sessiontree.Entry, f sessiontree.Facts) {
	t.Helper()
	if got := sessiontree.StatsOf(e); !cmp.Equal(got, f.Stats) {
		t.Fatalf("StatsOf(%s) = %+v; FactsOf says %+v", e.Raw, got, f.Stats)
	}
	if got := sessiontree.MessageInfoOf(e); !cmp.Equal(got, f.Message) {
		t.Fatalf("MessageInfoOf(%s) = %+v; FactsOf says %+v", e.Raw, got, f.Message)
	}
	if got := sessiontree.EffectsOf(e, f.Message.Role); got != f.Effects {
		t.Fatalf("EffectsOf(%s) = %+v; FactsOf says %+v", e.Raw, got, f.Effects)
	}
}

// checkFacts fails t unless f is what the readers give for e.
func checkFacts(t testing.TB, e sessiontree.Entry, f sessiontree.Facts) {
	t.Helper()
	info := oldMessageInfoOf(e)
	want := sessiontree.Facts{
		Effects:  oldEffectsOf(e, info.Role),
		Message:  info,
		Stats:    oldStatsOf(e),
		TargetID: oldTarget(e),
		Checksum: sessiontree.EntryChecksum(e.Raw),
	}
	if e.Type == sessiontree.TypeCustom || e.Type == sessiontree.TypeCustomMessage {
		want.CustomType, _ = oldString(e, "customType")
	}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Fatalf("facts of %s (-readers +facts):\n%s", e.Raw, diff)
	}
	// The exported readers, now thin wrappers, still say the same.
	if got := sessiontree.StatsOf(e); !cmp.Equal(got, want.Stats) {
		t.Fatalf("StatsOf(%s) = %+v; want %+v", e.Raw, got, want.Stats)
	}
	if got := sessiontree.MessageInfoOf(e); !cmp.Equal(got, info) {
		t.Fatalf("MessageInfoOf(%s) = %+v; want %+v", e.Raw, got, info)
	}
	if got := sessiontree.EffectsOf(e, info.Role); got != want.Effects {
		t.Fatalf("EffectsOf(%s) = %+v; want %+v", e.Raw, got, want.Effects)
	}
	if got, old := e.Validate(), oldValidate(e); (got == nil) != (old == nil) || got != nil && got.Error() != old.Error() {
		t.Fatalf("Validate(%s) = %v; want %v", e.Raw, got, old)
	}
	checkSetters(t, e, f)
	got, old := sessiontree.State{ThinkingLevel: "x"}, sessiontree.State{ThinkingLevel: "x"}
	got.Apply(e)
	oldApply(&old, e)
	if diff := cmp.Diff(old, got); diff != "" {
		t.Fatalf("State.Apply(%s) (-was +is):\n%s", e.Raw, diff)
	}
}

// oldApply is State.Apply as it was.
func oldApply(st *sessiontree.State, e sessiontree.Entry) {
	switch e.Type {
	case sessiontree.TypeThinkingLevelChange:
		if s, ok := oldString(e, "thinkingLevel"); ok {
			st.ThinkingLevel = s
		}
	case sessiontree.TypeModelChange:
		p, _ := oldString(e, "provider")
		m, _ := oldString(e, "modelId")
		_, hasP := jsonx.Field(e.Raw, "provider")
		_, hasM := jsonx.Field(e.Raw, "modelId")
		st.Model = &sessiontree.ModelRef{Provider: p, ModelID: m, NoProvider: !hasP, NoModelID: !hasM}
	case sessiontree.TypeActiveToolsChange:
		raw, ok := jsonx.Field(e.Raw, "activeToolNames")
		var names []string
		if ok && json.Unmarshal(raw, &names) == nil {
			if names == nil {
				names = []string{}
			}
			st.ActiveToolNames = names
		}
	case sessiontree.TypeMessage:
		if m := oldMessageInfoOf(e); m.Role == "assistant" {
			hasP, hasM := oldMessageHas(e, "provider"), oldMessageHas(e, "model")
			st.Model = &sessiontree.ModelRef{Provider: m.Provider, ModelID: m.Model, NoProvider: !hasP, NoModelID: !hasM}
		}
	}
}

// checkSetters fails t unless the settings f says e sets are those
// State.Apply changes.
func checkSetters(t testing.TB, e sessiontree.Entry, f sessiontree.Facts) {
	t.Helper()
	a := sessiontree.State{ThinkingLevel: "\x00a"}
	b := sessiontree.State{ThinkingLevel: "\x00b"}
	a.Apply(e)
	b.Apply(e)
	thinking := a.ThinkingLevel != "\x00a" || b.ThinkingLevel != "\x00b"
	if thinking != f.SetsThinking || (a.Model != nil) != f.SetsModel || (a.ActiveToolNames != nil) != f.SetsTools {
		t.Fatalf("facts of %s set thinking %v, model %v, tools %v; State.Apply %v, %v, %v", e.Raw,
			f.SetsThinking, f.SetsModel, f.SetsTools, thinking, a.Model != nil, a.ActiveToolNames != nil)
	}
}

// fixtureEntries are the entries of every pi fixture file.
func fixtureEntries(t *testing.T) []sessiontree.Entry {
	t.Helper()
	var all []sessiontree.Entry
	for _, dir := range []string{"testdata/pi", "testdata/pi1"} {
		paths, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		if err != nil || len(paths) == 0 {
			t.Fatalf("no fixtures in %s: %v", dir, err)
		}
		for _, p := range paths {
			_, entries := storetest.ReadSessionFile(t, p)
			all = append(all, entries...)
		}
	}
	return all
}

// fieldsDraft is the draft e is built from: its members beyond the four
// common fields.
func fieldsDraft(t testing.TB, e sessiontree.Entry) sessiontree.Draft {
	t.Helper()
	var kept [][]byte
	err := jsonx.ObjectMembers(e.Raw, func(k, v []byte) error {
		if !slices.ContainsFunc([]string{"type", "id", "parentId", "timestamp"}, func(c string) bool { return jsonx.KeyEquals(k, c) }) {
			kept = append(kept, slices.Concat(k, []byte(":"), v))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("members of %s: %v", e.Raw, err)
	}
	fields := slices.Concat([]byte("{"), bytes.Join(kept, []byte(",")), []byte("}"))
	return sessiontree.Draft{Type: e.Type, Fields: fields}
}

// The readers as they were before facts.go, each walking the JSON itself.

func oldMessageInfoOf(e sessiontree.Entry) sessiontree.MessageInfo {
	var info sessiontree.MessageInfo
	if e.Type != sessiontree.TypeMessage {
		return info
	}
	msg, ok := jsonx.Field(e.Raw, "message")
	if !ok {
		return info
	}
	_ = jsonx.ObjectMembers(msg, func(k, v []byte) error {
		switch {
		case jsonx.KeyEquals(k, "role"):
			info.Role, _ = jsonx.Unquote(v)
		case jsonx.KeyEquals(k, "provider"):
			info.Provider, _ = jsonx.Unquote(v)
		case jsonx.KeyEquals(k, "model"):
			info.Model, _ = jsonx.Unquote(v)
		case jsonx.KeyEquals(k, "responseModel"):
			info.ResponseModel, _ = jsonx.Unquote(v)
		case jsonx.KeyEquals(k, "usage"):
			info.Usage = v
		}
		return nil
	})
	return info
}

func oldStatsOf(e sessiontree.Entry) sessiontree.EntryStats {
	var es sessiontree.EntryStats
	var raw json.RawMessage
	switch e.Type {
	case sessiontree.TypeMessage:
		es.Message = true
		info := oldMessageInfoOf(e)
		es.Role = info.Role
		switch info.Role {
		case "assistant":
			raw = info.Usage
			es.ToolCalls = oldToolCalls(e)
			msg, _ := jsonx.Field(e.Raw, "message")
			model, ok := jsonx.Field(msg, "responseModel")
			if !ok || string(model) == "null" {
				model, ok = jsonx.Field(msg, "model")
			}
			p, okp := jsonx.Field(msg, "provider")
			es.Bucket = oldTemplate(p, okp) + "/" + oldTemplate(model, ok)
		case "toolResult":
			raw, es.Bucket = info.Usage, sessiontree.ToolsBucket
		}
	case sessiontree.TypeUsage:
		raw, _ = jsonx.Field(e.Raw, "usage")
		p, okp := jsonx.Field(e.Raw, "provider")
		m, okm := jsonx.Field(e.Raw, "model")
		es.Bucket = oldTemplate(p, okp) + "/" + oldTemplate(m, okm)
	case sessiontree.TypeCompaction, sessiontree.TypeBranchSummary:
		raw, _ = jsonx.Field(e.Raw, "usage")
		es.Bucket = sessiontree.ToolsBucket
	}
	es.Usage, es.HasUsage = oldUsageFromJSON(raw)
	return es
}

// oldTemplate is a JSON value as pi's template literal writes it: absent
// "undefined", null "null", a string as it is, another value as
// sessiontree.LabelOf's String() does.
func oldTemplate(raw []byte, found bool) string {
	switch {
	case !found:
		return "undefined"
	case string(raw) == "null":
		return "null"
	}
	if s, err := jsonx.Unquote(raw); err == nil {
		return s
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil && f == 0 {
		return "0"
	} else if string(raw) == "false" {
		return "false"
	}
	return sessiontree.LabelOf(sessiontree.Entry{Type: sessiontree.TypeLabel, Raw: append(append([]byte(`{"label":`), raw...), '}')})
}

func oldToolCalls(e sessiontree.Entry) int64 {
	msg, _ := jsonx.Field(e.Raw, "message")
	content, ok := jsonx.Field(msg, "content")
	if !ok || len(content) == 0 || content[0] != '[' {
		return 0
	}
	var n int64
	_ = jsonx.ArrayElements(content, func(v []byte) error {
		if t, ok := jsonx.Field(v, "type"); ok && string(t) == `"toolCall"` {
			n++
		}
		return nil
	})
	return n
}

func oldUsageFromJSON(raw json.RawMessage) (u sessiontree.Usage, ok bool) {
	if len(raw) == 0 || raw[0] != '{' || jsonx.Valid(raw) != nil {
		return sessiontree.Usage{}, false
	}
	input, okIn := oldUsageNumber(raw, "input")
	output, okOut := oldUsageNumber(raw, "output")
	if !okIn || !okOut {
		return sessiontree.Usage{}, false
	}
	u = sessiontree.Usage{Input: int64(input), Output: int64(output)}
	if v, ok := oldUsageNumber(raw, "cacheRead"); ok {
		u.CacheRead = int64(v)
	}
	if v, ok := oldUsageNumber(raw, "cacheWrite"); ok {
		u.CacheWrite = int64(v)
	}
	if cost, ok := jsonx.Field(raw, "cost"); ok {
		if v, ok := oldUsageNumber(cost, "total"); ok {
			u.Cost = v
		}
	}
	return u, true
}

func oldUsageNumber(obj json.RawMessage, name string) (float64, bool) {
	raw, ok := jsonx.Field(obj, name)
	if !ok || len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	return v, err == nil
}

func oldEffectsOf(e sessiontree.Entry, role string) sessiontree.Effects {
	var f sessiontree.Effects
	str := func(name string) (string, bool) { return oldString(e, name) }
	derived := func(s string) string { return strings.ReplaceAll(s, "\x00", " ") }
	switch e.Type {
	case sessiontree.TypeMessage:
		f.SetsModel = role == "assistant"
	case sessiontree.TypeThinkingLevelChange:
		_, f.SetsThinking = str("thinkingLevel")
	case sessiontree.TypeModelChange:
		f.SetsModel = true
	case sessiontree.TypeActiveToolsChange:
		raw, ok := jsonx.Field(e.Raw, "activeToolNames")
		var names []string
		f.SetsTools = ok && json.Unmarshal(raw, &names) == nil
	case sessiontree.TypeCompaction:
		f.Compaction = true
		raw, ok := jsonx.Field(e.Raw, "retainedTail")
		f.Tail = ok && string(raw) != "null"
		f.Keep, _ = str("firstKeptEntryId")
	case sessiontree.TypeLabel:
		f.Label = true
		f.Target, _ = str("targetId")
		l, _ := str("label")
		f.LabelText = derived(l)
	case sessiontree.TypeLeaf:
		f.Target, _ = str("targetId")
	case sessiontree.TypeSessionInfo:
		f.SetsName = true
		n, _ := str("name")
		f.Name = derived(strings.TrimSpace(n))
	case sessiontree.TypeContextEdit:
		f.EditTarget, _ = str("targetId")
	}
	return f
}

// oldString is Entry.String as it was.
// oldMessageHas reports whether a message entry's message has member
// name, among the members read before any error.
func oldMessageHas(e sessiontree.Entry, name string) bool {
	msg, _ := jsonx.Field(e.Raw, "message")
	has := false
	_ = jsonx.ObjectMembers(msg, func(k, _ []byte) error {
		has = has || jsonx.KeyEquals(k, name)
		return nil
	})
	return has
}

func oldString(e sessiontree.Entry, name string) (string, bool) {
	raw, ok := jsonx.Field(e.Raw, name)
	if !ok {
		return "", false
	}
	s, err := jsonx.Unquote(raw)
	return s, err == nil
}

func oldTarget(e sessiontree.Entry) string {
	s, _ := oldString(e, "targetId")
	return s
}

// oldValidate is Entry.Validate as it was: one Field walk per required
// field, and its rules.
func oldValidate(e sessiontree.Entry) error {
	str := func(name string, raw []byte) error {
		if _, err := jsonx.Unquote(raw); err != nil {
			return fmt.Errorf("%q must be a string, got %s", name, oldAbbreviate(raw))
		}
		return nil
	}
	id := func(nonNull bool) func(name string, raw []byte) error {
		return func(name string, raw []byte) error {
			if jsonx.IsNull(raw) {
				if nonNull {
					return fmt.Errorf("%q must be an entry id", name)
				}
				return nil
			}
			if err := str(name, raw); err != nil {
				return err
			}
			if s, _ := jsonx.Unquote(raw); s == "" {
				return fmt.Errorf("%q must be null or a non-empty id", name)
			}
			return nil
		}
	}
	starts := func(c byte, what string) func(name string, raw []byte) error {
		return func(name string, raw []byte) error {
			if len(raw) == 0 || raw[0] != c {
				return fmt.Errorf("%q must be %s", name, what)
			}
			return nil
		}
	}
	type rule struct {
		name  string
		check func(name string, raw []byte) error
	}
	obj, arr := starts('{', "an object"), starts('[', "an array")
	required := map[sessiontree.EntryType][]rule{
		sessiontree.TypeMessage:             {{"message", obj}},
		sessiontree.TypeThinkingLevelChange: {{"thinkingLevel", str}},
		sessiontree.TypeModelChange:         {{"provider", str}, {"modelId", str}},
		sessiontree.TypeActiveToolsChange:   {{"activeToolNames", arr}},
		sessiontree.TypeCompaction:          {{"summary", str}},
		sessiontree.TypeBranchSummary:       {{"fromId", str}, {"summary", str}},
		sessiontree.TypeCustom:              {{"customType", str}},
		sessiontree.TypeCustomMessage:       {{"customType", str}},
		sessiontree.TypeLabel:               {{"targetId", id(true)}},
		sessiontree.TypeLeaf:                {{"targetId", id(false)}},
	}
	for _, r := range required[e.Type] {
		raw, ok := jsonx.Field(e.Raw, r.name)
		if !ok {
			return &sessiontree.InvalidEntryError{EntryID: e.ID, Reason: fmt.Sprintf("%s entry without %q", e.Type, r.name)}
		}
		if err := r.check(r.name, raw); err != nil {
			return &sessiontree.InvalidEntryError{EntryID: e.ID, Reason: err.Error()}
		}
	}
	return nil
}

func oldAbbreviate(v []byte) string {
	if len(v) > 40 {
		return string(v[:37]) + "..."
	}
	return string(v)
}
