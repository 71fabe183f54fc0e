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

// LabelOf returns the label a label entry sets, exactly as written (pi
// does not trim labels); "" means the entry clears the label.
func LabelOf(e Entry) string {
	s, _ := e.String("label")
	return s
}

// NameOf returns the name a session_info entry sets, trimmed; "" clears it.
func NameOf(e Entry) string {
	s, _ := e.String("name")
	return strings.TrimSpace(s)
}

// CleanName prepares a session name for writing as pi 1.6.0 does: each run
// of CR and LF characters becomes one space, then surrounding space is
// trimmed ("two\r\nlines\r\n" becomes "two lines").
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
	return strings.TrimSpace(b.String())
}
