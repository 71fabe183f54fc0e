package sessiontree_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// FuzzDecodeEntry feeds arbitrary lines to the entry decoder: it must never
// panic, and it must either return an entry whose Raw is the input and
// whose fields agree with encoding/json, or an ErrInvalidEntry.
func FuzzDecodeEntry(f *testing.F) {
	paths, _ := filepath.Glob("testdata/pi/*.jsonl")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for i := 0; sc.Scan() && i < 12; i++ {
			f.Add(bytes.Clone(sc.Bytes()))
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := sessiontree.DecodeEntry(line)
		if err != nil {
			if !errors.Is(err, sessiontree.ErrInvalidEntry) {
				t.Fatalf("DecodeEntry(%q) error %v does not match ErrInvalidEntry", line, err)
			}
			return
		}
		if !bytes.Equal(e.Raw, bytes.TrimSpace(line)) {
			t.Fatalf("Raw = %q; want the input", e.Raw)
		}
		// Keys are case-sensitive, as in JavaScript: decode into a map
		// (encoding/json matches struct fields case-insensitively).
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("DecodeEntry accepted %q, encoding/json refuses: %v", line, err)
		}
		str := func(k string) string {
			var s string
			_ = json.Unmarshal(m[k], &s)
			return s
		}
		if string(e.Type) != str("type") || e.ID != str("id") || e.ParentID != str("parentId") || e.Timestamp != str("timestamp") {
			t.Fatalf("DecodeEntry(%q) = %+v; encoding/json reads %q", line, e, m)
		}
		_ = e.Validate()
		_ = sessiontree.MessageInfoOf(e)
		_ = sessiontree.StatsOf(e)
	})
}
