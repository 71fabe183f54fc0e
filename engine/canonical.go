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
// gives exactly the values the row's columns hold (migrations 6 and 16),
// so that a reader takes them from the JSON it fetches anyway. Whatever
// the rest of the JSON holds (even the same names again) does not matter:
// the columns are what the mark is checked against, when the row is
// written and by Check. A row that is not canonical is read by decoding
// its JSON, which holds what its columns do.
//
// What it buys, one row per entry, against the four fields as four
// columns, in one run (BenchmarkReadPathAB, CPU per operation, median of
// 8; issue 14): the active path of 10,000 entries 20.6ms against 32.6ms,
// the context at 10,000 26.1ms against 41.2ms, at 100,000 412ms against
// 599ms; and it is what lets the packed read (pathpack.go) carry only the
// JSON texts.

// entryHead is the four common fields of an entry.
type entryHead struct {
	typ            sessiontree.EntryType
	id, parent, ts string
}

// isCanonical reports whether e's JSON starts with e's own common fields.
// It allocates nothing unless a field is written with escapes.
func isCanonical(e sessiontree.Entry) bool {
	sp, ok := canonicalSpans(e.Raw)
	if !ok {
		return false
	}
	raw := e.Raw
	same := func(a, b int, esc bool, want string) bool {
		if !esc && utf8.Valid(raw[a:b]) {
			return string(raw[a:b]) == want
		}
		s, ok := unquote(raw, a, b, esc)
		return ok && s == want
	}
	parentOK := e.ParentID == ""
	if sp.p0 >= 0 {
		parentOK = same(sp.p0, sp.p1, sp.pEsc, e.ParentID)
	}
	return same(sp.t0, sp.t1, sp.tEsc, string(e.Type)) && same(sp.id0, sp.id1, sp.idEsc, e.ID) &&
		parentOK && same(sp.ts0, sp.ts1, sp.tsEsc, e.Timestamp)
}

// checkFields refuses an entry whose common fields are not those its JSON
// holds: the entries row keeps both, and a row whose columns disagree
// with its JSON is corrupt. canonical says whether the JSON starts with
// them (then they agree); other JSON is decoded.
func checkFields(e sessiontree.Entry, canonical bool) error {
	if canonical {
		return nil
	}
	d, err := sessiontree.DecodeEntryOwned(e.Raw) // read only: no copy needed
	if err != nil {
		return err
	}
	if d.Type != e.Type || d.ID != e.ID || d.ParentID != e.ParentID || d.Timestamp != e.Timestamp {
		return &sessiontree.InvalidEntryError{EntryID: e.ID, Reason: "its fields disagree with its JSON"}
	}
	return nil
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

// spans are where the common fields' contents lie in a canonical JSON:
// raw[x0:x1], with escapes when xEsc; p0 < 0 for a null parentId.
type spans struct {
	t0, t1, id0, id1, p0, p1, ts0, ts1 int
	tEsc, idEsc, pEsc, tsEsc           bool
}

// canonicalSpans finds the common fields at the start of raw; ok is false
// when raw does not start in the canonical shape.
func canonicalSpans(raw []byte) (sp spans, ok bool) {
	i, ok := expect(raw, 0, `{"type":`)
	if !ok {
		return sp, false
	}
	if sp.t0, sp.t1, i, sp.tEsc, ok = quoted(raw, i); !ok {
		return sp, false
	}
	if i, ok = expect(raw, i, `,"id":`); !ok {
		return sp, false
	}
	if sp.id0, sp.id1, i, sp.idEsc, ok = quoted(raw, i); !ok {
		return sp, false
	}
	if i, ok = expect(raw, i, `,"parentId":`); !ok {
		return sp, false
	}
	sp.p0, sp.p1 = -1, -1
	if j, null := expect(raw, i, `null`); null {
		i = j
	} else if sp.p0, sp.p1, i, sp.pEsc, ok = quoted(raw, i); !ok {
		return sp, false
	}
	if i, ok = expect(raw, i, `,"timestamp":`); !ok {
		return sp, false
	}
	if sp.ts0, sp.ts1, i, sp.tsEsc, ok = quoted(raw, i); !ok {
		return sp, false
	}
	return sp, i < len(raw) && (raw[i] == ',' || raw[i] == '}')
}

// canonicalHead reads the common fields from the start of raw; ok is false
// when raw does not start in the canonical shape. A parentId of null reads
// as "".
func canonicalHead(raw []byte) (h entryHead, ok bool) {
	sp, ok := canonicalSpans(raw)
	if !ok {
		return h, false
	}
	if t, known := knownTypes[string(raw[sp.t0:sp.t1])]; known && !sp.tEsc {
		h.typ = t
	} else {
		s, ok := unquote(raw, sp.t0, sp.t1, sp.tEsc)
		if !ok {
			return h, false
		}
		h.typ = sessiontree.EntryType(s)
	}
	if !sp.idEsc && !sp.pEsc && !sp.tsEsc && utf8.Valid(raw[sp.id0:sp.ts1]) {
		// One string for the three, cut into parts.
		all := string(raw[sp.id0:sp.ts1])
		h.id, h.ts = all[:sp.id1-sp.id0], all[sp.ts0-sp.id0:]
		if sp.p0 >= 0 {
			h.parent = all[sp.p0-sp.id0 : sp.p1-sp.id0]
		}
		return h, true
	}
	if h.id, ok = unquote(raw, sp.id0, sp.id1, sp.idEsc); !ok {
		return h, false
	}
	if sp.p0 >= 0 {
		if h.parent, ok = unquote(raw, sp.p0, sp.p1, sp.pEsc); !ok {
			return h, false
		}
	}
	if h.ts, ok = unquote(raw, sp.ts0, sp.ts1, sp.tsEsc); !ok {
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
