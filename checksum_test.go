package sessiontree_test

import (
	"database/sql"
	"errors"
	"testing"

	"github.com/sessiontree/sessiontree"
)

func TestEntryChecksum(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want int64
	}{
		// CRC-32C's check value (RFC 3720, B.4) and its empty value.
		{"123456789", 0xe3069283},
		{"", 0},
	} {
		if got := sessiontree.EntryChecksum([]byte(tc.raw)); got != tc.want {
			t.Errorf("EntryChecksum(%q) = %#x; want %#x", tc.raw, got, tc.want)
		}
	}
	raw := []byte(`{"type":"message"}`)
	sum := sql.NullInt64{Int64: sessiontree.EntryChecksum(raw), Valid: true}
	if err := sessiontree.VerifyChecksum("a", raw, sum); err != nil {
		t.Errorf("VerifyChecksum(matching) = %v; want nil", err)
	}
	for name, sum := range map[string]sql.NullInt64{
		"another":     {Int64: sum.Int64 ^ 1, Valid: true},
		"none (NULL)": {},
	} {
		err := sessiontree.VerifyChecksum("a", raw, sum)
		var ce *sessiontree.CorruptError
		if !errors.Is(err, sessiontree.ErrCorrupt) || !errors.As(err, &ce) || ce.EntryID != "a" {
			t.Errorf("VerifyChecksum(%s checksum) = %v; want a CorruptError naming entry a", name, err)
		}
	}
}
