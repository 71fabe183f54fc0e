package jsonl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/jsonx"
)

// CurrentVersion is the session file version this package writes. Files
// of versions 1 and 2 are read and migrated; newer ones are refused.
const CurrentVersion = 3

// Header is the first line of a session file.
type Header struct {
	// SessionMeta holds the header's fields. Version is the version found
	// in the file: 1 when the header has none (pi's first format).
	sessiontree.SessionMeta
	// Raw is the header's JSON object as read, unknown fields included.
	Raw json.RawMessage
}

// ParseHeader parses the first line of a session file:
// {"type":"session","version":3,"id":...,"timestamp":...,"cwd":...}.
// The id and timestamp are required; a missing version means 1. A version
// newer than [CurrentVersion] gives an error wrapping
// [ErrUnsupportedVersion]; other problems give a
// [sessiontree.CorruptError].
func ParseHeader(line []byte) (Header, error) {
	line = bytes.Trim(line, jsonSpace)
	h := Header{SessionMeta: sessiontree.SessionMeta{Version: 1}}
	var typ string
	var hasType, hasID, hasTS bool
	err := jsonx.ObjectMembers(line, func(k, v []byte) error {
		var err error
		switch {
		case jsonx.KeyEquals(k, "type"):
			typ, err = headerString("type", v)
			hasType = true
		case jsonx.KeyEquals(k, "id"):
			h.ID, err = headerString("id", v)
			hasID = true
		case jsonx.KeyEquals(k, "timestamp"):
			h.CreatedAt, err = headerString("timestamp", v)
			hasTS = true
		case jsonx.KeyEquals(k, "cwd"):
			h.Cwd, err = headerString("cwd", v)
		case jsonx.KeyEquals(k, "parentSession"):
			if !jsonx.IsNull(v) {
				h.ParentSession, err = headerString("parentSession", v)
			}
		case jsonx.KeyEquals(k, "version"):
			h.Version, err = headerVersion(v)
		}
		return err
	})
	switch {
	case err != nil && bytes.HasPrefix(line, utf8BOM):
		// An editor saved the file with a byte order mark; pi refuses
		// such a file too ("not a valid pi session").
		return Header{}, corrupt("", "malformed header: the file starts with a UTF-8 byte order mark (EF BB BF), which JSON does not allow")
	case err != nil:
		if _, ok := err.(*jsonx.SyntaxError); ok {
			return Header{}, corrupt("", "malformed header: %v", err)
		}
		return Header{}, err
	case !hasType || typ != "session":
		return Header{}, corrupt("", `missing header: the first line must be {"type":"session",...}`)
	case !hasID || h.ID == "":
		return Header{}, corrupt("", `malformed header: missing "id"`)
	case !hasTS || h.CreatedAt == "":
		return Header{}, corrupt("", `malformed header: missing "timestamp"`)
	}
	h.Raw = bytes.Clone(line)
	return h, nil
}

var utf8BOM = []byte("\xef\xbb\xbf")

func headerString(name string, v []byte) (string, error) {
	s, err := jsonx.Unquote(v)
	if err != nil {
		return "", corrupt("", "malformed header: %q must be a string, got %s", name, abbreviate(v))
	}
	return s, nil
}

func headerVersion(v []byte) (int, error) {
	if jsonx.IsNull(v) {
		return 1, nil // pi reads a null version as 1, as it reads a missing one
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return 0, corrupt("", "malformed header: \"version\" must be a number, got %s", abbreviate(v))
	}
	if f != math.Trunc(f) || f < 1 {
		return 0, fmt.Errorf("%w: version %s", ErrUnsupportedVersion, v)
	}
	if f > CurrentVersion {
		return 0, fmt.Errorf("%w: version %s is newer than %d, the newest this build reads", ErrUnsupportedVersion, v, CurrentVersion)
	}
	return int(f), nil
}

func abbreviate(v []byte) string {
	if len(v) > 40 {
		return string(v[:37]) + "..."
	}
	return string(v)
}

// ParseLine parses one entry line of a version-3 session file: a JSON
// object with "type", "id", "timestamp", a "parentId" that is null or an
// id, and the fields its type requires ([sessiontree.Entry.Validate]).
// Surrounding space is trimmed and the entry's Raw is a copy of the line.
// Tree checks (unique ids, existing parents) need the whole file and are
// not done here. Errors match [sessiontree.ErrInvalidEntry].
func ParseLine(line []byte) (sessiontree.Entry, error) {
	return parseLine(line, false)
}

// parseLine is ParseLine; own says the line is the caller's to hand over
// (see [sessiontree.DecodeEntryOwned]), and then the entry's Raw is the
// line itself.
func parseLine(line []byte, own bool) (sessiontree.Entry, error) {
	e, err := decodeEntry(line, own)
	if err != nil {
		return sessiontree.Entry{}, err
	}
	if e.Type == "session" {
		return sessiontree.Entry{}, secondHeader(e.ID)
	}
	if err := e.Validate(); err != nil {
		return sessiontree.Entry{}, err
	}
	return e, nil
}

// decodeEntry decodes an entry line, copying it unless own says the line
// is handed over.
func decodeEntry(line []byte, own bool) (sessiontree.Entry, error) {
	if own {
		return sessiontree.DecodeEntryOwned(line)
	}
	return sessiontree.DecodeEntry(line)
}

func secondHeader(id string) error {
	return &sessiontree.InvalidEntryError{EntryID: id, Reason: "a second session header"}
}

// migrateV2 applies pi's version 2 → 3 migration to an entry: a message
// whose role is "hookMessage" gets the role "custom". Other entries are
// returned unchanged.
func migrateV2(e sessiontree.Entry) sessiontree.Entry {
	if e.Type != sessiontree.TypeMessage {
		return e
	}
	msg, ok := e.Field("message")
	if !ok {
		return e
	}
	role, ok := jsonx.Field(msg, "role")
	if !ok || string(role) != `"hookMessage"` {
		return e
	}
	newMsg := replaceMembers(msg, func(k, v []byte) ([]byte, bool) {
		if jsonx.KeyEquals(k, "role") {
			return []byte(`"custom"`), true
		}
		return v, true
	})
	e.Raw = replaceMembers(e.Raw, func(k, v []byte) ([]byte, bool) {
		if jsonx.KeyEquals(k, "message") {
			return newMsg, true
		}
		return v, true
	})
	return e
}

// replaceMembers rebuilds a valid JSON object member by member: fn returns
// each member's new value and whether to keep it. Keys and values are
// copied as raw text; only the space between members is dropped.
func replaceMembers(obj []byte, fn func(k, v []byte) ([]byte, bool)) []byte {
	out := make([]byte, 0, len(obj)+16)
	out = append(out, '{')
	_ = jsonx.ObjectMembers(obj, func(k, v []byte) error {
		nv, keep := fn(k, v)
		if !keep {
			return nil
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, k...)
		out = append(out, ':')
		out = append(out, nv...)
		return nil
	})
	return append(out, '}')
}

// v1IDs invents the ids of a version-1 file's entries, which have none.
// pi draws random ids when it migrates; these are derived from the session
// id and the entry's index instead, so that reading the same file twice
// (or resuming a read) gives the same ids. The index goes through a
// bijective mix of 32 bits, so two indexes never share an id.
type v1IDs struct{ salt uint32 }

func newV1IDs(sessionID string) v1IDs {
	h := fnv.New32a()
	h.Write([]byte(sessionID))
	return v1IDs{salt: h.Sum32()}
}

func (g v1IDs) id(index int) string {
	x := uint32(index) ^ g.salt
	// murmur3's finalizer: xor-shifts and odd multiplications are
	// invertible, so distinct inputs give distinct outputs.
	x ^= x >> 16
	x *= 0x85ebca6b
	x ^= x >> 13
	x *= 0xc2b2ae35
	x ^= x >> 16
	var b [8]byte
	const hexDigits = "0123456789abcdef"
	for i := 7; i >= 0; i-- {
		b[i] = hexDigits[x&0xf]
		x >>= 4
	}
	return string(b[:])
}

// parseV1 turns a version-1 line, an entry without id or parentId, into a
// version-2 entry as pi's migration does: it gets id ids.id(index) and
// parent prev; a compaction's firstKeptEntryIndex (an index into the
// file's JSON lines, the header being 0) becomes firstKeptEntryId when it
// names an entry at or before this one. The common fields are written
// first, then the others in their order.
func parseV1(line []byte, ids v1IDs, index int, prev string) (sessiontree.Entry, error) {
	line = bytes.Trim(line, jsonSpace)
	var typ, ts string
	var hasType, hasTS bool
	var keptIndex []byte
	err := jsonx.ObjectMembers(line, func(k, v []byte) error {
		var err error
		switch {
		case jsonx.KeyEquals(k, "type"):
			typ, err = jsonx.Unquote(v)
			hasType = true
		case jsonx.KeyEquals(k, "timestamp"):
			ts, err = jsonx.Unquote(v)
			hasTS = true
		case jsonx.KeyEquals(k, "firstKeptEntryIndex"):
			keptIndex = v
		}
		if err != nil {
			return fmt.Errorf("%q must be a string, got %s", string(k[1:len(k)-1]), abbreviate(v))
		}
		return nil
	})
	id := ids.id(index)
	switch {
	case err != nil:
		return sessiontree.Entry{}, &sessiontree.InvalidEntryError{Reason: err.Error()}
	case !hasType || typ == "":
		return sessiontree.Entry{}, &sessiontree.InvalidEntryError{Reason: `missing "type"`}
	case typ == "session":
		return sessiontree.Entry{}, &sessiontree.InvalidEntryError{Reason: "a second session header"}
	case !hasTS || ts == "":
		return sessiontree.Entry{}, &sessiontree.InvalidEntryError{Reason: `missing "timestamp"`}
	}
	keptID := ""
	if typ == string(sessiontree.TypeCompaction) && keptIndex != nil {
		if n, err := strconv.Atoi(string(keptIndex)); err == nil && n >= 1 && n <= index {
			keptID = ids.id(n)
		}
	}
	fields := replaceMembers(line, func(k, v []byte) ([]byte, bool) {
		for _, name := range [...]string{"type", "id", "parentId", "timestamp"} {
			if jsonx.KeyEquals(k, name) {
				return nil, false
			}
		}
		if jsonx.KeyEquals(k, "firstKeptEntryIndex") && typ == string(sessiontree.TypeCompaction) {
			return nil, false
		}
		return v, true
	})
	if keptID != "" {
		fields = appendMember(fields, "firstKeptEntryId", strconv.Quote(keptID))
	}
	return sessiontree.BuildEntry(sessiontree.Draft{Type: sessiontree.EntryType(typ), Fields: fields}, id, prev, ts)
}

// appendMember adds a member at the end of a compact JSON object.
func appendMember(obj []byte, key, rawValue string) []byte {
	out := obj[:len(obj)-1]
	if len(out) > 1 {
		out = append(out, ',')
	}
	out = strconv.AppendQuote(out, key)
	out = append(out, ':')
	out = append(out, rawValue...)
	return append(out, '}')
}

// upgradedHeader returns the header's JSON with "version" set to the
// current version (added after "type" when absent); other fields are kept.
func upgradedHeader(raw []byte) []byte {
	version := []byte(strconv.Itoa(CurrentVersion))
	seen := false
	out := replaceMembers(raw, func(k, v []byte) ([]byte, bool) {
		if jsonx.KeyEquals(k, "version") {
			if seen {
				return nil, false
			}
			seen = true
			return version, true
		}
		return v, true
	})
	if seen {
		return out
	}
	// Insert after the first member, "type" in every header pi writes.
	return replaceMembers(out, func(k, v []byte) ([]byte, bool) {
		if !seen && jsonx.KeyEquals(k, "type") {
			seen = true
			return append(append(bytes.Clone(v), `,"version":`...), version...), true
		}
		return v, true
	})
}
