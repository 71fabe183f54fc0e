package sessiontree

import (
	"fmt"
	"strings"
)

// TypeCount is how many entries of one type something holds.
type TypeCount struct {
	Type  EntryType `json:"type"`
	Count int       `json:"count"`
}

// UnknownTypes counts entries whose type this package does not know
// ([EntryType.Known]), per type in the order the types were first met:
// what a reader finds in a file written by a newer pi. Such entries are
// data, not damage: every backend keeps them byte for byte (DESIGN.md
// section 7), so they are reported once per file as a warning, never as
// an error. The zero value (nil) is empty and ready to use; it is not
// safe for concurrent use.
type UnknownTypes []TypeCount

// Note counts an entry of type t when t is not a known type; known types
// are left out.
func (u *UnknownTypes) Note(t EntryType) {
	if t.Known() {
		return
	}
	u.add(t, 1)
}

// Merge adds the counts of v, keeping u's order and appending types u
// has not met.
func (u *UnknownTypes) Merge(v UnknownTypes) {
	for _, c := range v {
		u.add(c.Type, c.Count)
	}
}

func (u *UnknownTypes) add(t EntryType, n int) {
	for i := range *u {
		if (*u)[i].Type == t {
			(*u)[i].Count += n
			return
		}
	}
	*u = append(*u, TypeCount{Type: t, Count: n})
}

// Entries returns how many entries were counted, of every type.
func (u UnknownTypes) Entries() int {
	n := 0
	for _, c := range u {
		n += c.Count
	}
	return n
}

// Names returns the types met, in the order they were first met.
func (u UnknownTypes) Names() []string {
	out := make([]string, len(u))
	for i, c := range u {
		out[i] = string(c.Type)
	}
	return out
}

// String is the warning to show once for a file (or session) holding
// such entries, e.g. `3 entries of types this version does not know
// ("future_thing"), kept as they are`; "" when u is empty. Type names
// are quoted with Go's %q, so a name cannot carry control characters to
// a terminal.
func (u UnknownTypes) String() string {
	n := u.Entries()
	if n == 0 {
		return ""
	}
	quoted := make([]string, len(u))
	for i, c := range u {
		quoted[i] = fmt.Sprintf("%q", string(c.Type))
	}
	if n == 1 {
		return fmt.Sprintf("1 entry of a type this version does not know (%s), kept as it is", quoted[0])
	}
	return fmt.Sprintf("%d entries of types this version does not know (%s), kept as they are", n, strings.Join(quoted, ", "))
}
