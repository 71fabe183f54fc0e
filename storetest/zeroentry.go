package storetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// A refused write returns the zero Entry with its error, whichever path
// refuses it (the draft's check, the guard, the target or parent check,
// the id's uniqueness, the backend's own refusal of a value): a caller
// that logs or keeps the entry of a failed append must not see one that
// was never stored.
var _ = register("RefusedWriteReturnsZeroEntry", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	u := f.user("one")
	custom := func(id string) sessiontree.Draft {
		return sessiontree.Draft{Type: sessiontree.TypeCustom, ID: id, Fields: json.RawMessage(`{"customType":"x"}`)}
	}
	msg := sessiontree.Draft{Type: sessiontree.TypeMessage, ID: u, Fields: json.RawMessage(`{"message":{"role":"user","content":"again"}}`)}
	label := sessiontree.Draft{Type: sessiontree.TypeLabel, Fields: json.RawMessage(`{"targetId":"0badc0de","label":"x"}`)}
	stale := sessiontree.IfLeaf("0badc0de")
	none := sessiontree.AppendOptions{}
	for _, c := range []struct {
		name   string
		append func() (sessiontree.Entry, error)
	}{
		{"Append(leaf draft)", func() (sessiontree.Entry, error) {
			return f.st.Append(f.ctx, sessiontree.Draft{Type: sessiontree.TypeLeaf}, none)
		}},
		{"Append(message with a used id)", func() (sessiontree.Entry, error) { return f.st.Append(f.ctx, msg, none) }},
		{"Append(custom with a used id)", func() (sessiontree.Entry, error) { return f.st.Append(f.ctx, custom(u), none) }},
		{"Append(label of a missing entry)", func() (sessiontree.Entry, error) { return f.st.Append(f.ctx, label, none) }},
		{"Append(IfLeaf stale)", func() (sessiontree.Entry, error) { return f.st.Append(f.ctx, custom(""), stale) }},
		{"Append(message, IfLeaf stale)", func() (sessiontree.Entry, error) {
			return f.st.Append(f.ctx, sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: msg.Fields}, stale)
		}},
		{"SetLeaf(missing)", func() (sessiontree.Entry, error) { return f.st.SetLeaf(f.ctx, "0badc0de", none) }},
		{"SetLeaf(IfLeaf stale)", func() (sessiontree.Entry, error) { return f.st.SetLeaf(f.ctx, u, stale) }},
		{"AppendUnder(missing parent)", func() (sessiontree.Entry, error) {
			return f.st.AppendUnder(f.ctx, "0badc0de", custom(""), none)
		}},
		{"AppendUnder(used id)", func() (sessiontree.Entry, error) { return f.st.AppendUnder(f.ctx, u, custom(u), none) }},
		{"AppendUnder(IfLeaf stale)", func() (sessiontree.Entry, error) { return f.st.AppendUnder(f.ctx, u, custom(""), stale) }},
	} {
		e, err := c.append()
		if err == nil {
			t.Errorf("%s = %s, nil; want an error", c.name, e.ID)
		} else if e.ID != "" || e.Seq != 0 || e.Raw != nil || e.Type != "" || e.ParentID != "" || e.Timestamp != "" {
			t.Errorf("%s = entry %q (%s, seq %d), %v; want the zero Entry with the error", c.name, e.ID, e.Type, e.Seq, err)
		}
	}
	if aa, ok := f.st.(interface {
		AppendAll(context.Context, []sessiontree.Draft, sessiontree.AppendOptions) ([]sessiontree.Entry, error)
	}); ok {
		got, err := aa.AppendAll(f.ctx, []sessiontree.Draft{custom(""), custom(u)}, none)
		if err == nil || got != nil {
			t.Errorf("AppendAll(new, used id) = %d entries, %v; want none with an error", len(got), err)
		}
	}
	if n := f.count(); n != 1 {
		t.Errorf("after refused writes the log has %d entries; want 1", n)
	}
})
