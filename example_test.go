package sessiontree_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/memory"
)

// This is the README's example: create a session, branch, build context.
func Example() {
	ctx := context.Background()
	store, err := memory.New(sessiontree.SessionMeta{Cwd: "/home/me/project"}, memory.Options{})
	if err != nil {
		log.Fatal(err)
	}
	s := sessiontree.NewSession(store, sessiontree.SessionOptions{})
	defer s.Close()

	q, _ := s.AppendMessage(ctx, json.RawMessage(`{"role":"user","content":"What is 2+2?"}`))
	_, _ = s.AppendMessage(ctx, json.RawMessage(`{"role":"assistant","content":[{"type":"text","text":"5"}],"provider":"anthropic","model":"claude-sonnet-4"}`))

	// Go back to the question and try again: a new branch; the old one stays.
	if _, err := s.MoveTo(ctx, q.ID, &sessiontree.BranchSummary{Summary: "The first answer was wrong."}); err != nil {
		log.Fatal(err)
	}
	_, _ = s.AppendMessage(ctx, json.RawMessage(`{"role":"assistant","content":[{"type":"text","text":"4"}],"provider":"anthropic","model":"claude-sonnet-4"}`))

	c, err := s.Context(ctx, sessiontree.ContextOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range c.Messages {
		var v struct{ Role string }
		_ = json.Unmarshal(m, &v)
		fmt.Println(v.Role)
	}
	fmt.Println("model:", c.Model.ModelID)
	// Output:
	// user
	// branchSummary
	// assistant
	// model: claude-sonnet-4
}
