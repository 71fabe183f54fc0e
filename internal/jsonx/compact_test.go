package jsonx

import (
	"bytes"
	"encoding/json"
	"testing"
)

var compactSamples = []string{
	`{}`, `[]`, `"x"`, `12`, `null`,
	` { "a" : [ 1 , 2 , { "b" : "c d" } ] , "e" : "\" }\\" } `,
	"{\n\t\"text\": \"line\\nline \\\\\\\" quoted\",\r\n \"n\": -1.5e3, \"t\": true}",
	`{"data":"` + string(bytes.Repeat([]byte("QUJD"), 5000)) + `","mimeType":"image/png"}`,
	`["<b>&amp;</b>", "\u2028"]`,
}

// TestAppendCompactTrustedIsCompact checks that it makes of valid JSON
// what json.Compact does.
func TestAppendCompactTrustedIsCompact(t *testing.T) {
	for _, s := range compactSamples {
		checkCompact(t, []byte(s))
	}
}

func checkCompact(t *testing.T, b []byte) {
	t.Helper()
	var want bytes.Buffer
	if err := json.Compact(&want, b); err != nil {
		return // only valid JSON is trusted
	}
	prefix := []byte("prefix")
	got := AppendCompactTrusted(append([]byte(nil), prefix...), b)
	if !bytes.Equal(got, append(prefix, want.Bytes()...)) {
		t.Errorf("AppendCompactTrusted(%.80q) = %.80q; want %.80q", b, got[len(prefix):], want.Bytes())
	}
}

func FuzzAppendCompactTrusted(f *testing.F) {
	for _, s := range compactSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(checkCompact)
}
