package jsonl_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/storetest"
)

// walkedState is the state by definition: apply the full path.
func walkedState(t testing.TB, st sessiontree.Storage, from string) sessiontree.State {
	t.Helper()
	path, err := st.FullPath(context.Background(), from)
	if err != nil {
		t.Fatal(err)
	}
	s := sessiontree.DefaultState()
	for _, e := range path {
		s.Apply(e)
	}
	return s
}

// checkStates checks State at every entry against the state by
// definition, computed in one pass: an entry's state is its parent's with
// the entry applied.
func checkStates(t testing.TB, st *jsonl.Storage) {
	t.Helper()
	ctx := context.Background()
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]sessiontree.State{"": sessiontree.DefaultState()}
	for _, e := range log {
		s := want[e.ParentID]
		s.Apply(e)
		want[e.ID] = s
	}
	for id, w := range want {
		got, err := st.State(ctx, id)
		if err != nil {
			t.Fatalf("State(%q): %v", id, err)
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Fatalf("State(%q) (-want +got):\n%s", id, diff)
		}
	}
	if leaf := leaf(t, st); leaf != "" {
		if diff := cmp.Diff(walkedState(t, st, leaf), want[leaf]); diff != "" {
			t.Fatalf("state by walking from the leaf differs (-walk +pass):\n%s", diff)
		}
	}
}

func TestStateMatchesWalk(t *testing.T) {
	for _, fx := range storetest.PiFixtures(t, filepath.Join("..", "testdata", "pi")) {
		checkStates(t, open(t, fx.Path, jsonl.Options{ReadOnly: true}))
	}

	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	st, err := jsonl.Create(ctx, path, sessiontree.SessionMeta{}, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	must := func(e sessiontree.Entry, err error) sessiontree.Entry {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	assistant := func(model string) json.RawMessage {
		return json.RawMessage(`{"role":"assistant","content":[],"provider":"p","model":"` + model + `"}`)
	}
	root := appendUser(t, st, "root")
	must(s.AppendThinkingLevel(ctx, "high"))
	must(s.AppendActiveTools(ctx, []string{"read"}))
	// A tool list that does not decode as strings sets nothing.
	must(s.Append(ctx, sessiontree.TypeActiveToolsChange, json.RawMessage(`{"activeToolNames":[1,2]}`), sessiontree.AppendOptions{}))
	mid := must(s.AppendMessage(ctx, assistant("m1")))
	for range 50 {
		appendUser(t, st, "no model here")
	}
	must(s.AppendModelChange(ctx, "q", "m2"))
	must(s.AppendMessage(ctx, json.RawMessage(`{"role":"toolResult","content":[]}`)))
	// Branches from before the settings.
	if _, err := s.MoveTo(ctx, root.ID, nil); err != nil {
		t.Fatal(err)
	}
	must(s.AppendThinkingLevel(ctx, "low"))
	appendUser(t, st, "branch")
	if _, err := s.MoveTo(ctx, mid.ID, &sessiontree.BranchSummary{Summary: "back"}); err != nil {
		t.Fatal(err)
	}
	must(s.AppendMessage(ctx, assistant("m3")))
	batch := must(jsonl.ParseLine([]byte(`{"type":"active_tools_change","id":"b0000001","parentId":"` + root.ID + `",` + ts + `,"activeToolNames":["x"]}`)))
	if err := st.AppendBatch(ctx, []sessiontree.Entry{batch}); err != nil {
		t.Fatal(err)
	}
	checkStates(t, st)
	st.Close()
	checkStates(t, open(t, path, jsonl.Options{ReadOnly: true}))
}
