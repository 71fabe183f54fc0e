package sessiontree_test

import (
	"errors"
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
)

// line decodes one entry line, failing the test if it is malformed.
func line(tb testing.TB, s string) sessiontree.Entry {
	tb.Helper()
	e, err := sessiontree.DecodeEntry([]byte(s))
	if err != nil {
		tb.Fatalf("DecodeEntry(%s): %v", s, err)
	}
	return e
}

// effects reads e's effects as a caller that counts stats does.
func effects(e sessiontree.Entry) sessiontree.Effects {
	return sessiontree.EffectsOf(e, sessiontree.MessageInfoOf(e).Role)
}

// seen is an Earlier over a set of ids.
type seen map[string]bool

func (s seen) Taken(id string) bool                  { return s[id] }
func (s seen) Exists(id string) (bool, error)        { return s[id], nil }
func (s seen) failing(err error) sessiontree.Earlier { return failing{s, err} }

// failing is an Earlier whose lookups fail, as a database's may.
type failing struct {
	seen
	err error
}

func (f failing) Exists(string) (bool, error) { return false, f.err }

// TestReplayerNext replays a log with every kind of leaf, label and name
// effect and checks what the Replayer holds after each entry.
func TestReplayerNext(t *testing.T) {
	type want struct {
		leaf, name string
		labels     map[string]string
	}
	steps := []struct {
		line string
		want want
	}{
		{`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user"}}`, want{leaf: "a"}},
		{`{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"assistant"}}`, want{leaf: "b"}},
		{`{"type":"label","id":"c","parentId":"b","timestamp":"t","targetId":"a","label":"start"}`,
			want{leaf: "c", labels: map[string]string{"a": "start"}}},
		{`{"type":"session_info","id":"d","parentId":"c","timestamp":"t","name":"  two  "}`,
			want{leaf: "d", name: "two", labels: map[string]string{"a": "start"}}},
		{`{"type":"leaf","id":"e","parentId":"d","timestamp":"t","targetId":"a"}`,
			want{leaf: "a", name: "two", labels: map[string]string{"a": "start"}}},
		{`{"type":"label","id":"f","parentId":"a","timestamp":"t","targetId":"a","label":""}`,
			want{leaf: "f", name: "two", labels: map[string]string{}}},
		{`{"type":"leaf","id":"g","parentId":"f","timestamp":"t","targetId":null}`,
			want{name: "two", labels: map[string]string{}}},
		{`{"type":"future_type","id":"h","parentId":null,"timestamp":"t"}`,
			want{leaf: "h", name: "two", labels: map[string]string{}}},
		{`{"type":"session_info","id":"i","parentId":"h","timestamp":"t"}`,
			want{leaf: "i", labels: map[string]string{}}},
	}
	var r sessiontree.Replayer
	ids := seen{}
	for _, s := range steps {
		e := line(t, s.line)
		f := effects(e)
		if err := r.Next(e, &f, ids); err != nil {
			t.Fatalf("Next(%s) = %v; want nil", e.ID, err)
		}
		ids[e.ID] = true
		if r.Leaf != s.want.leaf || r.Name != s.want.name || !maps.Equal(r.Labels, s.want.labels) {
			t.Errorf("after Next(%s): leaf %q, name %q, labels %v; want %q, %q, %v",
				e.ID, r.Leaf, r.Name, r.Labels, s.want.leaf, s.want.name, s.want.labels)
		}
	}
}

// TestReplayerNextErrors checks each refusal: its typed error, the id it
// names, and that the Replayer is unchanged after it.
func TestReplayerNextErrors(t *testing.T) {
	boom := errors.New("disk on fire")
	ids := seen{"a": true, "b": true}
	tests := []struct {
		name    string
		line    string
		earlier sessiontree.Earlier
		is      error
		check   func(error) bool
	}{
		{"duplicate id", `{"type":"message","id":"a","parentId":"b","timestamp":"t"}`, ids, sessiontree.ErrCorrupt,
			func(err error) bool {
				var c *sessiontree.CorruptError
				return errors.As(err, &c) && c.EntryID == "a" && c.Reason == "duplicate id"
			}},
		{"missing parent", `{"type":"message","id":"c","parentId":"zz","timestamp":"t"}`, ids, sessiontree.ErrCorrupt,
			func(err error) bool {
				var c *sessiontree.CorruptError
				return errors.As(err, &c) && c.EntryID == "c" && c.Reason == "parent zz does not exist"
			}},
		{"own parent", `{"type":"message","id":"c","parentId":"c","timestamp":"t"}`, ids, sessiontree.ErrCorrupt,
			func(err error) bool { var c *sessiontree.CorruptError; return errors.As(err, &c) && c.EntryID == "c" }},
		{"missing leaf target", `{"type":"leaf","id":"c","parentId":"b","timestamp":"t","targetId":"zz"}`, ids, sessiontree.ErrNotFound,
			func(err error) bool {
				var nf *sessiontree.EntryNotFoundError
				return errors.As(err, &nf) && nf.ID == "zz"
			}},
		{"lookup fails", `{"type":"message","id":"c","parentId":"b","timestamp":"t"}`, ids.failing(boom), boom,
			func(err error) bool { return err == boom }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sessiontree.Replayer{Leaf: "b", Name: "n"}
			e := line(t, tt.line)
			f := effects(e)
			err := r.Next(e, &f, tt.earlier)
			if !errors.Is(err, tt.is) || !tt.check(err) {
				t.Errorf("Next(%s) = %v; want %v naming the entry", e.ID, err, tt.is)
			}
			if r.Leaf != "b" || r.Name != "n" || r.Labels != nil {
				t.Errorf("after a refused Next: %+v; want the Replayer unchanged", r)
			}
		})
	}
	// A context edit's target is not checked: a missing one does nothing.
	e := line(t, `{"type":"context_edit","id":"c","parentId":"b","timestamp":"t","targetId":"zz","replacement":null}`)
	f := effects(e)
	var r sessiontree.Replayer
	if err := r.Next(e, &f, ids); err != nil || f.EditTarget != "zz" || r.Leaf != "c" {
		t.Errorf("Next(context_edit of a missing target) = %v, EditTarget %q, leaf %q; want nil, zz, c", err, f.EditTarget, r.Leaf)
	}
	// A label of a missing target is kept, as pi keeps it, and labels
	// nothing: it neither sets a label nor clears one.
	r = sessiontree.Replayer{Labels: map[string]string{"a": "kept"}}
	for _, l := range []string{
		`{"type":"label","id":"c","parentId":"b","timestamp":"t","targetId":"zz","label":"x"}`,
		`{"type":"label","id":"d","parentId":"b","timestamp":"t","targetId":"zz","label":""}`,
	} {
		e := line(t, l)
		f := effects(e)
		if err := r.Next(e, &f, ids); err != nil || f.Label || r.Leaf != e.ID || !maps.Equal(r.Labels, map[string]string{"a": "kept"}) {
			t.Errorf("Next(label of a missing target) = %v, Label %v, %+v; want nil, false, leaf %s, a's label alone", err, f.Label, r, e.ID)
		}
	}
}

// TestEffectsAgreeWithStateApply checks that EffectsOf says an entry sets
// a setting exactly when State.Apply changes it from a state where every
// setting differs from what the entry could set.
func TestEffectsAgreeWithStateApply(t *testing.T) {
	lines := []string{
		`{"type":"thinking_level_change","id":"a","parentId":null,"timestamp":"t","thinkingLevel":"high"}`,
		`{"type":"thinking_level_change","id":"a","parentId":null,"timestamp":"t"}`,
		`{"type":"thinking_level_change","id":"a","parentId":null,"timestamp":"t","thinkingLevel":7}`,
		`{"type":"model_change","id":"a","parentId":null,"timestamp":"t","provider":"p","modelId":"m"}`,
		`{"type":"model_change","id":"a","parentId":null,"timestamp":"t"}`,
		`{"type":"active_tools_change","id":"a","parentId":null,"timestamp":"t","activeToolNames":["read"]}`,
		`{"type":"active_tools_change","id":"a","parentId":null,"timestamp":"t","activeToolNames":null}`,
		`{"type":"active_tools_change","id":"a","parentId":null,"timestamp":"t","activeToolNames":"read"}`,
		`{"type":"active_tools_change","id":"a","parentId":null,"timestamp":"t"}`,
		`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"assistant","provider":"p","model":"m"}}`,
		`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user"}}`,
		`{"type":"custom","id":"a","parentId":null,"timestamp":"t","customType":"model_change"}`,
	}
	start := func() sessiontree.State {
		return sessiontree.State{ThinkingLevel: "sentinel", Model: &sessiontree.ModelRef{Provider: "x", ModelID: "y"}, ActiveToolNames: []string{"sentinel"}}
	}
	for _, l := range lines {
		e := line(t, l)
		f := effects(e)
		st := start()
		st.Apply(e)
		was := start()
		got := [3]bool{f.SetsThinking, f.SetsModel, f.SetsTools}
		want := [3]bool{st.ThinkingLevel != was.ThinkingLevel, !cmp.Equal(st.Model, was.Model), !cmp.Equal(st.ActiveToolNames, was.ActiveToolNames)}
		if got != want {
			t.Errorf("EffectsOf(%s) sets %v; State.Apply changes %v", l, got, want)
		}
	}
}

// TestPlace checks depths, state keys and the compaction boundary, and
// that the boundary Place computes is where WalkPath cuts the path.
func TestPlace(t *testing.T) {
	log := []string{
		`{"type":"message","id":"r","parentId":null,"timestamp":"t","message":{"role":"user"}}`,                        // 1
		`{"type":"model_change","id":"m","parentId":"r","timestamp":"t","provider":"p","modelId":"x"}`,                 // 2
		`{"type":"message","id":"k","parentId":"m","timestamp":"t","message":{"role":"user"}}`,                         // 3
		`{"type":"compaction","id":"c1","parentId":"k","timestamp":"t","summary":"s","firstKeptEntryId":"k"}`,          // 4: starts at k
		`{"type":"thinking_level_change","id":"th","parentId":"c1","timestamp":"t","thinkingLevel":"low"}`,             // 5
		`{"type":"compaction","id":"c2","parentId":"th","timestamp":"t","summary":"s","retainedTail":[]}`,              // 6: at itself
		`{"type":"compaction","id":"c3","parentId":"c2","timestamp":"t","summary":"s","firstKeptEntryId":"c3"}`,        // 7: at itself
		`{"type":"compaction","id":"c4","parentId":"c3","timestamp":"t","summary":"s","firstKeptEntryId":"elsewhere"}`, // 8: not an ancestor
		`{"type":"compaction","id":"c5","parentId":"c4","timestamp":"t","summary":"s"}`,                                // 9: keeps from the root
		`{"type":"active_tools_change","id":"tl","parentId":"c5","timestamp":"t","activeToolNames":[]}`,                // 10
		`{"type":"message","id":"o","parentId":null,"timestamp":"t","message":{"role":"user"}}`,                        // a second root
		`{"type":"message","id":"elsewhere","parentId":"o","timestamp":"t","message":{"role":"user"}}`,
	}
	want := map[string]sessiontree.Placement{
		"r":  {Key: 1, Depth: 1, Start: 1},
		"m":  {Key: 2, Depth: 2, Start: 1, Model: 2},
		"k":  {Key: 3, Depth: 3, Start: 1, Model: 2},
		"c1": {Key: 4, Depth: 4, Start: 3, Model: 2},
		"th": {Key: 5, Depth: 5, Start: 3, Model: 2, Thinking: 5},
		"c2": {Key: 6, Depth: 6, Start: 6, Model: 2, Thinking: 5},
		"c3": {Key: 7, Depth: 7, Start: 7, Model: 2, Thinking: 5},
		"c4": {Key: 8, Depth: 8, Start: 1, Model: 2, Thinking: 5},
		"c5": {Key: 9, Depth: 9, Start: 1, Model: 2, Thinking: 5},
		"tl": {Key: 10, Depth: 10, Start: 1, Model: 2, Thinking: 5, Tools: 10},
	}
	byID := map[string]sessiontree.Entry{}
	placed := map[string]sessiontree.Placement{}
	for i, l := range log {
		e := line(t, l)
		f := effects(e)
		var parent *sessiontree.Placement
		if p, ok := placed[e.ParentID]; ok {
			parent = &p
		}
		ancestorDepth := func(id string) (int64, error) {
			for cur := e.ParentID; cur != ""; cur = byID[cur].ParentID {
				if cur == id {
					return placed[cur].Depth, nil
				}
			}
			return 0, nil
		}
		p, err := sessiontree.Place(e, &f, int64(i+1), parent, ancestorDepth)
		if err != nil {
			t.Fatalf("Place(%s) = %v", e.ID, err)
		}
		byID[e.ID], placed[e.ID] = e, p
	}
	for id, w := range want {
		if placed[id] != w {
			t.Errorf("Place(%s) = %+v; want %+v", id, placed[id], w)
		}
		get := func(id string) (sessiontree.Entry, bool) { e, ok := byID[id]; return e, ok }
		path, err := sessiontree.WalkPath(t.Context(), id, false, len(byID), get)
		if err != nil {
			t.Fatalf("WalkPath(%s) = %v", id, err)
		}
		if start := placed[path[0].ID].Depth; start != w.Start {
			t.Errorf("WalkPath(%s) starts at depth %d; Place says %d", id, start, w.Start)
		}
	}
	// An ancestor lookup's error is Place's error.
	boom := errors.New("lookup failed")
	e := line(t, log[3])
	f := effects(e)
	if _, err := sessiontree.Place(e, &f, 4, &sessiontree.Placement{Key: 3, Depth: 3, Start: 1}, func(string) (int64, error) { return 0, boom }); err != boom {
		t.Errorf("Place with a failing ancestor lookup = %v; want %v", err, boom)
	}
}
