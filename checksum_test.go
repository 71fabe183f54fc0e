package sessiontree_test

import (
	"database/sql"
	"errors"
	"strings"
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

// TestHeaderChecksum pins the bytes HeaderChecksum sums (stored sums
// must stay right), and checks that a letter moved from one field to the
// next, or any field changed, gives another sum, which
// VerifyHeaderChecksum reports.
func TestHeaderChecksum(t *testing.T) {
	m := sessiontree.SessionMeta{ID: "s1", Version: 3, CreatedAt: "t", Cwd: "/w"}
	if got, want := sessiontree.HeaderChecksum(m), sessiontree.EntryChecksum([]byte("2:s11:31:t2:/w0:")); got != want {
		t.Errorf("HeaderChecksum(%+v) = %#x; want %#x", m, got, want)
	}
	sum := sql.NullInt64{Int64: sessiontree.HeaderChecksum(m), Valid: true}
	if err := sessiontree.VerifyHeaderChecksum(m, sum); err != nil {
		t.Errorf("VerifyHeaderChecksum(matching) = %v; want nil", err)
	}
	for name, other := range map[string]sessiontree.SessionMeta{
		"id":                    {ID: "s2", Version: 3, CreatedAt: "t", Cwd: "/w"},
		"version":               {ID: "s1", Version: 2, CreatedAt: "t", Cwd: "/w"},
		"timestamp":             {ID: "s1", Version: 3, CreatedAt: "u", Cwd: "/w"},
		"cwd":                   {ID: "s1", Version: 3, CreatedAt: "t", Cwd: "/v"},
		"parent session":        {ID: "s1", Version: 3, CreatedAt: "t", Cwd: "/w", ParentSession: "p"},
		"a letter moved on":     {ID: "s", Version: 3, CreatedAt: "t", Cwd: "1/w"},
		"cwd into parent":       {ID: "s1", Version: 3, CreatedAt: "t", Cwd: "/", ParentSession: "w"},
		"timestamp into cwd":    {ID: "s1", Version: 3, CreatedAt: "", Cwd: "t/w"},
		"version digits joined": {ID: "s1", Version: 31, CreatedAt: "", Cwd: "/w"},
	} {
		err := sessiontree.VerifyHeaderChecksum(other, sum)
		var ce *sessiontree.CorruptError
		if !errors.As(err, &ce) || !strings.Contains(ce.Reason, other.ID) {
			t.Errorf("VerifyHeaderChecksum(%s changed) = %v; want a CorruptError naming session %s", name, err, other.ID)
		}
	}
	if err := sessiontree.VerifyHeaderChecksum(m, sql.NullInt64{}); !errors.Is(err, sessiontree.ErrCorrupt) {
		t.Errorf("VerifyHeaderChecksum(no checksum) = %v; want ErrCorrupt", err)
	}
}
