package sessiontree_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

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

	// Messages in pi's shapes (sessiontree.UserMessage, AssistantMessage,
	// ToolResultMessage), or any agent message as raw JSON.
	q, _ := s.AppendMessage(ctx, sessiontree.UserMessage("What is 2+2?", time.Now()))
	model := sessiontree.AssistantReply{API: "anthropic-messages", Provider: "anthropic", Model: "claude-sonnet-4"}
	model.Text = "5"
	five, _ := sessiontree.AssistantMessage(model)
	_, _ = s.AppendMessage(ctx, five)

	// Go back to the question and try again: a new branch; the old one stays.
	if _, err := s.MoveTo(ctx, q.ID, &sessiontree.BranchSummary{Summary: "The first answer was wrong."}); err != nil {
		log.Fatal(err)
	}
	model.Text = "4"
	four, _ := sessiontree.AssistantMessage(model)
	_, _ = s.AppendMessage(ctx, four)

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
