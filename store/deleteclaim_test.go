package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// TestDeleteClaimed deletes a session another holder has a live claim
// on, on both engines: the delete is refused with a *ClaimedError naming
// the holder, and the sessions deleted with it are kept (one
// transaction); Force deletes it on purpose, and once the claim is
// released a plain delete goes through.
func TestDeleteClaimed(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, openStore opener) {
		ctx := context.Background()
		s := openStore(t)
		a := mustCreate(t, s, store.CreateOptions{ID: "a"})
		newBuilder(t, a).user("u", "held")
		mustCreate(t, s, store.CreateOptions{ID: "b"})
		c, err := a.(sessiontree.Claimer).Claim(ctx, "agent-7", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		n, err := s.Delete(ctx, "b", "a")
		var ce *sessiontree.ClaimedError
		if !errors.As(err, &ce) || ce.Holder != "agent-7" || ce.Session != "a" || n != 0 {
			t.Fatalf("Delete(b, a) of a claimed a = %d, %v; want 0 and a *ClaimedError naming agent-7", n, err)
		}
		for _, id := range []string{"a", "b"} {
			if _, err := s.Info(ctx, id); err != nil {
				t.Errorf("Info(%s) after a refused delete: %v", id, err)
			}
		}
		if _, err := c.Append(ctx, sessiontree.Draft{Type: sessiontree.TypeSessionInfo, Fields: []byte(`{"name":"still mine"}`)}, sessiontree.AppendOptions{}); err != nil {
			t.Errorf("the holder's write after a refused delete: %v", err)
		}
		if err := c.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if n, err := s.Delete(ctx, "b"); n != 1 || err != nil {
			t.Errorf("Delete(b) = %d, %v; want 1, nil", n, err)
		}
		c, err = a.(sessiontree.Claimer).Claim(ctx, "agent-8", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := s.DeleteWith(ctx, sessiontree.DeleteOptions{Force: true}, "a"); n != 1 || err != nil {
			t.Fatalf("forced Delete(a) = %d, %v; want 1, nil", n, err)
		}
		if _, err := s.OpenSession(ctx, "a"); !errors.Is(err, sessiontree.ErrNotFound) {
			t.Errorf("OpenSession(a) after a forced delete = %v; want ErrNotFound", err)
		}
		if err := c.Renew(ctx); err == nil {
			t.Errorf("Renew of a claim on a deleted session succeeded")
		}
	})
}
