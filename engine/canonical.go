package engine

import (
	"unicode/utf8"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/jsonx"
)

// A canonical entry's JSON starts with its four common fields, in the
// order sessiontree.BuildEntry and pi write them:
//
//	{"type":"message","id":"…","parentId":"…" or null,"timestamp":"…",…
//
// The entries column canonical marks the rows whose JSON reads so and
// gives exactly the values the row's columns hold (migration 6), so that
// a reader takes them from the JSON it fetches anyway. Whatever the rest
// of the JSON holds (even the same names again) does not matter: the
// columns are what the mark is checked against, when the row is written
// and by Check.

// entryHead is the four common fields of an entry.
type entryHead struct {
	typ            sessiontree.EntryType
	id, parent, ts string
}

// isCanonical reports whether e's JSON starts with e's own common fields.
func isCanonical(e sessiontree.Entry) bool {
	h, ok := canonicalHead(e.Raw)
	return ok && h.typ == e.Type && h.id == e.ID && h.parent == e.ParentID && h.ts == e.Timestamp
}

// knownTypes maps a type's text to its constant, so that reading a type
// allocates nothing.
var knownTypes = func() map[string]sessiontree.EntryType {
	m := make(map[string]sessiontree.EntryType, len(sessiontree.EntryTypes))
	for _, t := range sessiontree.EntryTypes {
		m[string(t)] = t
	}
	return m
}()

// canonicalHead reads the common fields from the start of raw; ok is false
// when raw does not start in the canonical shape. A parentId of null reads
// as "".
func canonicalHead(raw []byte) (h entryHead, ok bool) {
	i, ok := expect(raw, 0, `{"type":`)
	if !ok {
		return h, false
	}
	t0, t1, i, tEsc, ok := quoted(raw, i)
	if !ok {
		return h, false
	}
	if i, ok = expect(raw, i, `,"id":`); !ok {
		return h, false
	}
	id0, id1, i, idEsc, ok := quoted(raw, i)
	if !ok {
		return h, false
	}
	if i, ok = expect(raw, i, `,"parentId":`); !ok {
		return h, false
	}
	p0, p1, pEsc := -1, -1, false
	if j, null := expect(raw, i, `null`); null {
		i = j
	} else if p0, p1, i, pEsc, ok = quoted(raw, i); !ok {
		return h, false
	}
	if i, ok = expect(raw, i, `,"timestamp":`); !ok {
		return h, false
	}
	ts0, ts1, i, tsEsc, ok := quoted(raw, i)
	if !ok || i >= len(raw) || raw[i] != ',' && raw[i] != '}' {
		return h, false
	}

	if t, known := knownTypes[string(raw[t0:t1])]; known && !tEsc {
		h.typ = t
	} else {
		s, ok := unquote(raw, t0, t1, tEsc)
		if !ok {
			return h, false
		}
		h.typ = sessiontree.EntryType(s)
	}
	if !idEsc && !pEsc && !tsEsc && utf8.Valid(raw[id0:ts1]) {
		// One string for the three, cut into parts.
		all := string(raw[id0:ts1])
		h.id, h.ts = all[:id1-id0], all[ts0-id0:]
		if p0 >= 0 {
			h.parent = all[p0-id0 : p1-id0]
		}
		return h, true
	}
	if h.id, ok = unquote(raw, id0, id1, idEsc); !ok {
		return h, false
	}
	if p0 >= 0 {
		if h.parent, ok = unquote(raw, p0, p1, pEsc); !ok {
			return h, false
		}
	}
	if h.ts, ok = unquote(raw, ts0, ts1, tsEsc); !ok {
		return h, false
	}
	return h, true
}

// expect reports whether b continues at i with s, and where it ends.
func expect(b []byte, i int, s string) (int, bool) {
	if len(b)-i < len(s) || string(b[i:i+len(s)]) != s {
		return i, false
	}
	return i + len(s), true
}

// quoted finds the JSON string at b[i]: its content is b[start:end], next
// is the index after its closing quote, and escaped tells whether the
// content has escapes.
func quoted(b []byte, i int) (start, end, next int, escaped, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, 0, 0, false, false
	}
	start = i + 1
	for j := start; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return start, j, j + 1, escaped, true
		case c == '\\':
			escaped = true
			j++ // the escaped character cannot end the string
		case c < 0x20:
			return 0, 0, 0, false, false
		}
	}
	return 0, 0, 0, false, false
}

// unquote returns the string b[start:end] is the content of, decoding
// escapes and invalid UTF-8 as encoding/json does.
func unquote(b []byte, start, end int, escaped bool) (string, bool) {
	if !escaped && utf8.Valid(b[start:end]) {
		return string(b[start:end]), true
	}
	s, err := jsonx.Unquote(b[start-1 : end+1])
	return s, err == nil
}
