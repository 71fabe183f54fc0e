package engine

import (
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestUsageOfAgrees checks the fast usage reader against the root
// package's on the shapes it reads and the ones it hands over.
func TestUsageOfAgrees(t *testing.T) {
	for _, raw := range []string{
		`{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"input":0.1,"total":0.25}}`,
		`{"input":1.9,"output":2e3}`,
		`{"input":-1,"output":0,"cost":{"total":-0.5}}`,
		`{"output":2}`,
		`{"input":null,"output":2}`,
		`{"input":"1","output":2}`,
		`{"Input":5,"output":2}`,
		`{"input":1,"input":7,"output":2}`,
		`{"input":1,"output":2,"cost":null}`,
		`{"input":1,"output":2,"cost":{"total":null}}`,
		`{"input":1,"output":2,"cost":{"Total":3}}`,
		`{"input":1,"output":2,"cost":{}}`,
		`{"input":1,"output":2,"cost":5}`,
		`{"input":{},"output":2}`,
		`[]`,
		`"malformed"`,
		`{"input":1,"output":2,"cacheRead":12345678901234567890123}`,
	} {
		want, wantOK := sessiontree.UsageFromJSON([]byte(raw))
		got, ok := usageOf([]byte(raw))
		if got != want || ok != wantOK {
			t.Errorf("usageOf(%s) = %+v, %v; want %+v, %v", raw, got, ok, want, wantOK)
		}
	}
}
