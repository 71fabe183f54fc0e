package demo_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/demo"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/memory"
)

func TestBuild(t *testing.T) {
	ctx := context.Background()
	st, err := memory.New(sessiontree.SessionMeta{Cwd: "/demo"}, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	labels, err := demo.Build(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Context(ctx, sessiontree.ContextOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range c.Messages {
		var v struct{ Role string }
		_ = json.Unmarshal(m, &v)
		roles = append(roles, v.Role)
	}
	want := []string{"user", "branchSummary", "assistant"}
	if len(roles) != len(want) || roles[0] != want[0] || roles[1] != want[1] || roles[2] != want[2] {
		t.Errorf("demo context roles = %v; want %v", roles, want)
	}
	if c.ThinkingLevel != "medium" || c.Model == nil {
		t.Errorf("demo state = %+v; want thinking medium and a model", c.State)
	}
	old, err := s.Context(ctx, sessiontree.ContextOptions{From: labels["cursor paging"]})
	if err != nil || len(old.Messages) != 5 {
		t.Errorf("context on the old branch = %d messages, %v; want the summary and 4 messages", len(old.Messages), err)
	}
	if got, _ := st.Labels(ctx); len(got) != 2 {
		t.Errorf("labels = %v; want 2", got)
	}
}

// TestBuildIDs: Build's entries have the ids of the same entries of the
// sample file the docs' examples come from (view/testdata/demo.jsonl):
// the same type and parent under each id, so that an example naming one
// names the same entry in the demo a user made.
func TestBuildIDs(t *testing.T) {
	ctx := context.Background()
	st, err := memory.New(sessiontree.SessionMeta{ID: demo.SessionID, Cwd: "/demo"}, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := demo.Build(ctx, st); err != nil {
		t.Fatal(err)
	}
	built, err := st.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	f, err := jsonl.Open(ctx, "../view/testdata/demo.jsonl", jsonl.Options{Mode: jsonl.Strict, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if meta, _ := f.Meta(ctx); meta.ID != demo.SessionID {
		t.Errorf("the sample file's session is %s; want demo.SessionID, %s", meta.ID, demo.SessionID)
	}
	for _, e := range built {
		want, err := f.Entry(ctx, e.ID)
		if err != nil || want.Type != e.Type || want.ParentID != e.ParentID {
			t.Errorf("built %s %s under %q; the sample file has %s %s under %q (%v)", e.Type, e.ID, e.ParentID, want.Type, want.ID, want.ParentID, err)
		}
	}
	if len(built) != 14 {
		t.Errorf("Build appended %d entries; want 14", len(built))
	}
}
