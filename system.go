package sessiontree

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/sessiontree/sessiontree/internal/jsonx"
)

// CurrentSystemMessage replays every message of role system in msgs (a
// context, in order) into the one system message that holds the current
// prompt and tools, as pi 1.6.0 does when it snapshots them into a
// compaction: non-empty text contents joined by a blank line, sections
// merged by name (null deletes one), tools removed and added by name (a
// later definition replaces an earlier one in its place). The result is
// {role, content, sections?, toolsAdded?, timestamp} with timestamp
// stamped as given. ok is false when no tool is declared and no system
// message has a timestamp (pi takes its time from the first that has one,
// and has nothing to give without); a timestamp null counts when no
// system message after it lacks one, as pi's timestamp ??=
// message.timestamp keeps it (testdata/piedge/system-null-timestamp).
func CurrentSystemMessage(msgs []json.RawMessage, timestamp int64) (json.RawMessage, bool) {
	var texts []string
	var sections, tools orderedMembers
	// pi takes the time with timestamp ??= message.timestamp: the first
	// time that is not null sticks; before it, each system message's
	// timestamp replaces the one before, null or absent (undefined).
	timed, stuck := false, false
	for _, m := range msgs {
		if messageRole(m) != "system" {
			continue
		}
		if !stuck {
			ts, ok := jsonx.Field(m, "timestamp")
			timed, stuck = ok, ok && !jsonx.IsNull(ts)
		}
		if c, ok := jsonx.Field(m, "content"); ok {
			if text := contentText(c); text != "" {
				texts = append(texts, text)
			}
		}
		if raw, ok := jsonx.Field(m, "sections"); ok && len(raw) > 0 && raw[0] == '{' {
			_ = jsonx.ObjectMembers(raw, func(k, v []byte) error {
				if jsonx.IsNull(v) {
					sections.remove(k, nil)
				} else {
					sections.set(k, v)
				}
				return nil
			})
		}
		eachTool(m, "toolsRemoved", tools.remove)
		eachTool(m, "toolsAdded", tools.set)
	}
	if !timed && len(tools.keys) == 0 {
		return nil, false
	}
	var w objectWriter
	w.raw("role", []byte(`"system"`))
	w.raw("content", jsonx.AppendString(nil, strings.Join(texts, "\n\n")))
	if len(sections.keys) > 0 {
		w.raw("sections", sections.object())
	}
	if len(tools.keys) > 0 {
		w.raw("toolsAdded", tools.array())
	}
	w.raw("timestamp", strconv.AppendInt(nil, timestamp, 10))
	return w.done(), true
}

// contentText is a content's text as pi-ai's contentText reads it: a
// string as it is, else its text blocks' texts joined by newlines, each
// as JavaScript's join writes it (String() of a text that is not a
// string, "" for null or none; testdata/piedge/system-text-not-string).
func contentText(content []byte) string {
	if s, err := jsonx.Unquote(content); err == nil {
		return s
	}
	var texts []string
	if len(content) > 0 && content[0] == '[' {
		_ = jsonx.ArrayElements(content, func(v []byte) error {
			if t, ok := jsonx.Field(v, "type"); ok {
				if typ, err := jsonx.Unquote(t); err == nil && typ == "text" {
					raw, _ := jsonx.Field(v, "text")
					texts = append(texts, jsText(raw))
				}
			}
			return nil
		})
	}
	return strings.Join(texts, "\n")
}

// eachTool calls fn with the quoted name and the JSON of every tool in a
// system message's list field. A tool without name (pi's Map keys it
// undefined) has the name "", which no quoted name is.
func eachTool(m json.RawMessage, field string, fn func(name, tool []byte)) {
	list, ok := jsonx.Field(m, field)
	if !ok || len(list) == 0 || list[0] != '[' {
		return
	}
	_ = jsonx.ArrayElements(list, func(v []byte) error {
		name, _ := jsonx.Field(v, "name")
		fn(name, v)
		return nil
	})
}

// orderedMembers is a JavaScript Map of raw JSON keys to raw values: a
// set keeps an existing key's place, a removed key set again goes last.
type orderedMembers struct {
	keys   []string
	values map[string][]byte
}

func (o *orderedMembers) set(key, value []byte) {
	k := string(key)
	if o.values == nil {
		o.values = map[string][]byte{}
	}
	if _, ok := o.values[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.values[k] = value
}

func (o *orderedMembers) remove(key, _ []byte) {
	k := string(key)
	if _, ok := o.values[k]; !ok {
		return
	}
	delete(o.values, k)
	for i, have := range o.keys {
		if have == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

// object writes the members as a JSON object.
func (o *orderedMembers) object() []byte {
	var w objectWriter
	for _, k := range o.keys {
		w.rawKey([]byte(k), o.values[k])
	}
	return w.done()
}

// array writes the values as a JSON array.
func (o *orderedMembers) array() []byte {
	buf := []byte{'['}
	for i, k := range o.keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, o.values[k]...)
	}
	return append(buf, ']')
}
