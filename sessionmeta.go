package sessiontree

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// InvalidSessionMetaError reports a session header a store refuses: a
// field that is not valid UTF-8 or holds a NUL byte. A session id, a time
// and a working directory are text that names a file or a folder, where
// neither can appear, and PostgreSQL's text cannot hold them either, so
// every engine refuses them alike ([CheckSessionMeta]). It matches
// [ErrInvalidEntry] with errors.Is: the header is the first line of pi's
// session file, an entry of type "session".
type InvalidSessionMetaError struct {
	// Field is the refused field, by its name in the header's JSON
	// ("id", "timestamp", "cwd", "parentSession").
	Field string
	// Reason says what is wrong with it.
	Reason string
}

func (e *InvalidSessionMetaError) Error() string {
	return fmt.Sprintf("invalid session header: %s %s", e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidEntry) true.
func (e *InvalidSessionMetaError) Is(target error) bool { return target == ErrInvalidEntry }

// CheckSessionMeta is the rule for what a new session's header may hold,
// which every engine applies before it stores one: its text fields are
// valid UTF-8 without a NUL byte. A refusal is an
// [InvalidSessionMetaError] naming the field.
func CheckSessionMeta(m SessionMeta) error {
	for _, f := range []struct{ name, value string }{
		{"id", m.ID}, {"timestamp", m.CreatedAt}, {"cwd", m.Cwd}, {"parentSession", m.ParentSession},
	} {
		if !utf8.ValidString(f.value) {
			return &InvalidSessionMetaError{Field: f.name, Reason: "is not valid UTF-8"}
		}
		if strings.IndexByte(f.value, 0) >= 0 {
			return &InvalidSessionMetaError{Field: f.name, Reason: "holds a NUL byte"}
		}
	}
	return nil
}

// StorableSessionID reports whether id could name a stored session under
// [CheckSessionMeta]'s rule: one that cannot is not found without asking
// the database.
func StorableSessionID(id string) bool {
	return CheckSessionMeta(SessionMeta{ID: id}) == nil
}

// CheckNewSessionID is the rule for an id a caller asks for when making a
// new session (package store's Create and Fork, a new JSONL file): pi 1.6.0's
// (assertValidSessionId: letters, digits, '.', '_' and '-', starting and
// ending with a letter or digit), and not ending in ".jsonl" in any case,
// which the command takes for a file path, so that pi can resume the
// session and the command and the HTTP API can name it. It returns an
// [InvalidSessionMetaError] naming the id, nil for "" (a fresh UUID v7).
// Only new ids are checked: an id a store or a file already holds is read
// and imported as it is.
func CheckNewSessionID(id string) error {
	if id == "" {
		return nil
	}
	if !piSessionID(id) || strings.HasSuffix(strings.ToLower(id), ".jsonl") {
		return &InvalidSessionMetaError{Field: "id", Reason: fmt.Sprintf(
			`%q: want letters, digits, ".", "_" and "-", starting and ending with a letter or digit, not ending in ".jsonl"`, id)}
	}
	return nil
}

// piSessionID reports whether id matches pi's
// ^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$.
func piSessionID(id string) bool {
	alnum := func(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }
	if id == "" || !alnum(id[0]) || !alnum(id[len(id)-1]) {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !alnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// LastChange is the time a session last changed, as its list row and
// `sessiontree info` give it (its updatedAt): the timestamp of its last
// entry, last, or its creation time, created, when that is later, as it
// is for a fork, which copies entries older than itself into a session
// made now (so a new fork lists above sessions changed before it). An
// empty session's is created. A time that does not parse leaves last.
func LastChange(created, last string) string {
	switch {
	case last == "":
		return created
	case created == "" || created == last:
		return last
	case canonicalTime(created) && canonicalTime(last):
		// The engines' own timestamps: ordered as strings, no parse on
		// an append's path.
		if created > last {
			return created
		}
		return last
	}
	c, err1 := ParseTime(created)
	l, err2 := ParseTime(last)
	if err1 == nil && err2 == nil && c.After(l) {
		return created
	}
	return last
}

// canonicalTime reports whether s has [TimeLayout]'s shape
// (2026-03-01T10:00:00.123Z), whose strings order as their times do.
func canonicalTime(s string) bool {
	if len(s) != len(TimeLayout) {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c, l := s[i], TimeLayout[i]; {
		case '0' <= l && l <= '9':
			if c < '0' || c > '9' {
				return false
			}
		case c != l:
			return false
		}
	}
	return true
}
