package demo_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/demo"
	"github.com/sessiontree/sessiontree/memory"
)

func TestBuild(t *testing.T) {
	ctx := context.Background()
	st, err := memory.New(sessiontree.SessionMeta{Cwd: "/demo"}, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	labels, err := demo.Build(ctx, s)
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
