package sessiontree_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// An agent claims a session before writing to it; a second agent is
// refused until the claim is released, and the first one's claim is then
// stale.
func ExampleClaimer() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "claims")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := engine.Open(ctx, filepath.Join(dir, "sessions.db"), engine.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	st, err := db.CreateSession(ctx, sessiontree.SessionMeta{ID: "demo"})
	if err != nil {
		log.Fatal(err)
	}

	claim, err := st.Claim(ctx, "agent-7", 0) // 0: sessiontree.DefaultClaimTTL
	if err != nil {
		log.Fatal(err)
	}
	s := sessiontree.NewSession(claim, sessiontree.SessionOptions{}) // writes go through the claim
	if _, err := s.AppendMessage(ctx, json.RawMessage(`{"role":"user","content":"hi"}`)); err != nil {
		log.Fatal(err)
	}

	_, err = st.Claim(ctx, "agent-8", 0)
	var held *sessiontree.ClaimedError
	fmt.Println(errors.Is(err, sessiontree.ErrLocked), errors.As(err, &held) && held.Holder == "agent-7")

	if err := claim.Release(ctx); err != nil {
		log.Fatal(err)
	}
	next, err := st.Claim(ctx, "agent-8", 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("fence", claim.Fence(), "then", next.Fence())
	_, err = s.AppendMessage(ctx, json.RawMessage(`{"role":"user","content":"still there?"}`))
	fmt.Println(errors.Is(err, sessiontree.ErrStaleClaim))
	// Output:
	// true true
	// fence 1 then 2
	// true
}
