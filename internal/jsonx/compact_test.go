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

// TestWriteCompactTrustedIsCompact checks that it makes of valid JSON
// what json.Compact does.
func TestWriteCompactTrustedIsCompact(t *testing.T) {
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
	var got bytes.Buffer
	if err := WriteCompactTrusted(&got, b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("WriteCompactTrusted(%.80q) = %.80q; want %.80q", b, got.Bytes(), want.Bytes())
	}
}

func FuzzWriteCompactTrusted(f *testing.F) {
	for _, s := range compactSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(checkCompact)
}
