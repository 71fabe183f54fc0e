package jsonx

import (
	"strings"
	"testing"
)

// TestMaxDepthIsSQLites: the limit is SQLite's JSON_MAX_DEPTH, 1000
// nested arrays or objects counting the outermost, so that nothing
// Valid accepts is "malformed JSON" to the engine's SQL (issue 8).
func TestMaxDepthIsSQLites(t *testing.T) {
	nest := func(n int) []byte {
		return []byte(`{"a":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`)
	}
	if err := Valid(nest(1000)); err != nil {
		t.Errorf("Valid(1000 levels) = %v; want nil", err)
	}
	if err := Valid(nest(1001)); err == nil || !strings.Contains(err.Error(), "nesting deeper than 1000") {
		t.Errorf("Valid(1001 levels) = %v; want a depth error", err)
	}
}
