package sessiontree_test

import (
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestMaySet: which entries a stored state pointer may name, per setting.
func TestMaySet(t *testing.T) {
	entry := func(typ sessiontree.EntryType, raw string) sessiontree.Entry {
		return sessiontree.Entry{Type: typ, Raw: []byte(raw)}
	}
	thinking := entry(sessiontree.TypeThinkingLevelChange, `{"type":"thinking_level_change","thinkingLevel":"high"}`)
	model := entry(sessiontree.TypeModelChange, `{"type":"model_change","provider":"p","modelId":"m"}`)
	tools := entry(sessiontree.TypeActiveToolsChange, `{"type":"active_tools_change","activeToolNames":["read"]}`)
	message := entry(sessiontree.TypeMessage, `{"type":"message","message":{"role":"user","content":"hi"}}`)
	label := entry(sessiontree.TypeLabel, `{"type":"label","targetId":"a","label":"x"}`)
	for _, tc := range []struct {
		name string
		e    sessiontree.Entry
		want [3]bool // thinking, model, tools
	}{
		{"thinking level change", thinking, [3]bool{true, false, false}},
		{"model change", model, [3]bool{false, true, false}},
		{"active tools change", tools, [3]bool{false, false, true}},
		{"message, whatever its role", message, [3]bool{false, true, false}},
		{"label", label, [3]bool{false, false, false}},
	} {
		for s, want := range tc.want {
			if got := sessiontree.MaySet(sessiontree.StateSetting(s), tc.e); got != want {
				t.Errorf("%s: MaySet(%d) = %v; want %v", tc.name, s, got, want)
			}
		}
	}
}
