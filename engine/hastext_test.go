package engine_test

import (
	"encoding/json"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestHasSearchTextAgrees: what a session's check notes of each entry
// (sessiontree.HasSearchText, which stops at the text's first byte) is
// whether SearchText gives it a text, for every line of the pi fixtures
// and for entries whose first parts are empty.
func TestHasSearchTextAgrees(t *testing.T) {
	lines := append(fixtureLines(t),
		`{"type":"message","id":"a","message":{"role":"user","content":""}}`,
		`{"type":"message","id":"b","message":{"role":"user","content":["",{"type":"text","text":""},{"type":"text","text":"x"}]}}`,
		`{"type":"message","id":"c","message":{"role":"assistant","content":[{"type":"toolCall","arguments":{"a":""}}]}}`,
		`{"type":"message","id":"d","message":{"role":"bashExecution","content":[],"command":"","output":"out"}}`,
		`{"type":"custom_message","id":"e","content":[{"type":"image","data":"xx"}]}`,
		`{"type":"compaction","id":"f","summary":null}`,
		`{"type":"session_info","id":"g","name":"n"}`,
		`{"type":"label","id":"h","label":"l"}`)
	for _, line := range lines {
		var head struct{ Type string }
		if err := json.Unmarshal([]byte(line), &head); err != nil {
			t.Fatal(err)
		}
		_, want, err := sessiontree.SearchText(head.Type, []byte(line))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := sessiontree.HasSearchText(head.Type, []byte(line)); got != want || err != nil {
			t.Errorf("HasSearchText(%.100s) = %v, %v; SearchText has text: %v", line, got, err, want)
		}
	}
}
