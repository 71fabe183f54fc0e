package sessiontree

import (
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/google/uuid"
)

// idAttempts is how many 8-character ids NewEntryID tries before it falls
// back to a full UUID, as pi does.
const idAttempts = 100

// NewEntryID returns a fresh entry id: 8 lowercase hex characters for which
// taken reports false. After 100 collisions it returns a 32-character id.
func NewEntryID(taken func(id string) bool) string {
	var b [4]byte
	for range idAttempts {
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
		id := hex.EncodeToString(b[:])
		if taken == nil || !taken(id) {
			return id
		}
	}
	for {
		id := strings.ReplaceAll(uuid.NewString(), "-", "")
		if taken == nil || !taken(id) {
			return id
		}
	}
}

// NewSessionID returns a fresh session id, a UUID version 7.
func NewSessionID() (string, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return "", err
	}
	return id.String(), nil
}

// LabelOf returns the label a label entry sets, as written (pi does not
// trim labels) but for a NUL ([DerivedText]); "" means the entry clears
// the label.
func LabelOf(e Entry) string { return labelText(e.Field("label")) }

// NameOf returns the name a session_info entry sets, trimmed as pi trims
// it (JavaScript's String.prototype.trim: U+FEFF is trimmed, U+0085 is
// not), a NUL made a space after the trim ([DerivedText]); "" clears it.
func NameOf(e Entry) string { return nameText(e.Field("name")) }

// nameText is the name a name member sets.
func nameText(raw []byte, found bool) string {
	s, _ := stringOf(raw, found)
	return DerivedText(jsTrim(s))
}

// jsTrim returns s without the white space JavaScript's
// String.prototype.trim removes around it, as pi trims a session name:
// ECMAScript's WhiteSpace (tab, vertical tab, form feed, space, U+00A0,
// U+FEFF and the other space separators, Zs) and LineTerminator (LF, CR,
// U+2028, U+2029). Go's strings.TrimSpace differs on two: it keeps
// U+FEFF, which JavaScript trims, and trims U+0085, which JavaScript keeps.
func jsTrim(s string) string { return strings.TrimFunc(s, isJSSpace) }

// isJSSpace reports whether JavaScript's trim removes r.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// DerivedText returns s, a text taken out of an entry's JSON, with each
// NUL character (U+0000) replaced by a space: the one rule by which every
// backend keeps such a text, the same on each. An entry's JSON keeps a
// NUL escaped (\u0000) and is stored whole, byte for byte; the texts
// derived from it (the first user message, a session name, a label, an
// entry's search text on PostgreSQL) are kept in text columns, and
// PostgreSQL's text holds no NUL byte. A space keeps the text's length
// and its words apart, and since the replacement comes after any trim, a
// text is empty, so clears a name or label, exactly when pi's is.
func DerivedText(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", " ")
}

// CleanName prepares a session name for writing as pi 1.6.0 does: each run
// of CR and LF characters becomes one space, then surrounding space is
// trimmed as [NameOf] trims ("two\r\nlines\r\n" becomes "two lines").
func CleanName(name string) string {
	var b strings.Builder
	inBreak := false
	for _, r := range name {
		if r == '\r' || r == '\n' {
			if !inBreak {
				b.WriteByte(' ')
			}
			inBreak = true
			continue
		}
		inBreak = false
		b.WriteRune(r)
	}
	return jsTrim(b.String())
}
