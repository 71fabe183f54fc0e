package sessiontree_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestSearchTextMalformed: JSON broken where the walk reads it is an
// error naming the byte, not a panic.
func TestSearchTextMalformed(t *testing.T) {
	for _, raw := range []string{
		`{"type":"message","message":{"content":"unterminated`,
		`{"type":"message","message":{"content":["a" "b"]}}`,
		`{"type":"message","message":{"content":"bad \q escape"}}`,
		`{"type":"message","message":{"content":"\u12"}}`,
		`{"type":"session_info","name"`,
	} {
		_, _, err := sessiontree.SearchText(sqlTypeOf(raw), []byte(raw))
		if !errors.Is(err, sessiontree.ErrSearchTextJSON) || !strings.Contains(err.Error(), "byte") {
			t.Errorf("SearchText(%s) = %v; want ErrSearchTextJSON naming the byte", raw, err)
		}
	}
}

// sqlTypeOf is the type an entry's JSON starts with.
func sqlTypeOf(raw string) string {
	if strings.Contains(raw, `"session_info"`) {
		return "session_info"
	}
	return "message"
}

// BenchmarkSearchText: the text of a 64 MB tool output, as the index's
// catch-up takes it.
func BenchmarkSearchText(b *testing.B) {
	raw := []byte(`{"type":"message","message":{"role":"toolResult","content":[{"type":"text","text":"` +
		strings.Repeat("log line of a build\\n", 64<<20/21) + `"}]}}`)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, _, err := sessiontree.SearchText("message", raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchTextSkip: the text of a message whose 64 MB image block
// comes before its text, which the walk skips over without copying.
func BenchmarkSearchTextSkip(b *testing.B) {
	raw := []byte(`{"type":"message","message":{"role":"user","content":[{"type":"image","data":"` +
		strings.Repeat("aGVsbG8gd29ybGQh", 64<<20/16) + `"},{"type":"text","text":"what is this?"}]}}`)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if text, ok, err := sessiontree.SearchText("message", raw); err != nil || !ok || text != "what is this?" {
			b.Fatalf("SearchText = %q, %v, %v", text, ok, err)
		}
	}
}

// TestAppendSearchText: the text is appended after what dst holds, and
// the cap counts from there.
func TestAppendSearchText(t *testing.T) {
	long := strings.Repeat("x", sessiontree.SearchTextLimit+10)
	raw := []byte(`{"type":"message","message":{"role":"user","content":"` + long + `"}}`)
	got, ok, err := sessiontree.AppendSearchText([]byte("prefix:"), "message", raw)
	if err != nil || !ok || string(got) != "prefix:"+long[:sessiontree.SearchTextLimit] {
		t.Errorf("AppendSearchText = %d bytes, %v, %v; want prefix: and the first %d bytes", len(got), ok, err, sessiontree.SearchTextLimit)
	}
	got, ok, err = sessiontree.AppendSearchText([]byte("prefix:"), "label", []byte(`{"type":"label"}`))
	if err != nil || ok || string(got) != "prefix:" {
		t.Errorf("AppendSearchText(label) = %q, %v, %v; want dst unchanged and false", got, ok, err)
	}
}
