package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// An agent that keeps its sessions in a database: create a session and
// write to it, then, after a restart, resume it by its id, build the
// context the model sees, search every session and export the session as
// a pi file. store.OpenURL takes a postgres:// URL as well.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "agent")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db := filepath.Join(dir, "sessions.db")

	st, err := store.Open(ctx, db, store.Options{})
	if err != nil {
		log.Fatal(err)
	}
	ds, err := st.Create(ctx, store.CreateOptions{Cwd: "/home/me/project"})
	if err != nil {
		log.Fatal(err)
	}
	s := sessiontree.NewSession(ds, sessiontree.SessionOptions{}) // the typed API
	id := s.ID()
	q, err := s.AppendMessage(ctx, json.RawMessage(`{"role":"user","content":"What is 2+2?"}`))
	if err != nil {
		log.Fatal(err)
	}
	_, _ = s.AppendMessage(ctx, json.RawMessage(`{"role":"assistant","content":[{"type":"text","text":"5"}],"provider":"anthropic","model":"claude-sonnet-4"}`))
	_, _ = s.MoveTo(ctx, q.ID, &sessiontree.BranchSummary{Summary: "The first answer was wrong."})
	_, _ = s.AppendMessage(ctx, json.RawMessage(`{"role":"assistant","content":[{"type":"text","text":"The answer is 4."}],"provider":"anthropic","model":"claude-sonnet-4"}`))
	_ = s.Close() // closes ds
	_ = st.Close()

	// After a restart.
	st, err = store.Open(ctx, db, store.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	s, err = st.Resume(ctx, id, sessiontree.SessionOptions{}) // or a unique prefix of the id
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	c, err := s.Context(ctx, sessiontree.ContextOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range c.Messages {
		var v struct{ Role string }
		_ = json.Unmarshal(m, &v)
		fmt.Println(v.Role)
	}

	res, err := st.Search(ctx, "answer", store.SearchOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range res.Hits {
		fmt.Println(h.Type, h.Role, h.OnActiveBranch, h.Snippet)
	}

	// pi resumes the file where the session is (ExportOptions.ForPi).
	if err := st.ExportFile(ctx, id, filepath.Join(dir, "session.jsonl"), store.ExportOptions{ForPi: true}); err != nil {
		log.Fatal(err)
	}

	_, err = st.OpenSession(ctx, "no-such-session")
	fmt.Println(errors.Is(err, sessiontree.ErrNotFound))
	// Output:
	// user
	// branchSummary
	// assistant
	// message assistant true The [answer] is 4.
	// branch_summary  true The first [answer] was wrong.
	// true
}
