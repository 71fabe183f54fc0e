package sessiontree

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"unicode"

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

// NameOf returns the name a session_info entry sets, trimmed, a NUL made
// a space after the trim ([DerivedText]); "" clears it.
func NameOf(e Entry) string { return nameText(e.Field("name")) }

// nameText is the name a name member sets.
func nameText(raw []byte, found bool) string {
	s, _ := stringOf(raw, found)
	return DerivedText(jsTrim(s))
}

// jsTrim removes the space around s that JavaScript's String.prototype.trim
// removes, pi's trim of a session name: what strings.TrimSpace removes
// (Unicode's White_Space) but NEL (U+0085), and the byte order mark
// U+FEFF as well (testdata/piedge/names-js-trim).
func jsTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return r == '\uFEFF' || r != '\u0085' && unicode.IsSpace(r)
	})
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
// trimmed as JavaScript trims ("two\r\nlines\r\n" becomes "two lines").
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
