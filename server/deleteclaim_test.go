package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
)

// TestDeleteClaimed deletes a session another writer holds a live claim
// on: 423 naming the holder, the session kept; ?force=1 deletes it.
func TestDeleteClaimed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	f.call("POST", "/api/sessions", `{"id":"g"}`, 201)
	ctx := context.Background()
	st, err := f.store.OpenSession(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.(sessiontree.Claimer).Claim(ctx, "agent-7", time.Minute); err != nil {
		t.Fatal(err)
	}
	r := f.call("DELETE", "/api/sessions/g", "", 423)
	if code := errorCode(t, r); code != CodeLocked || !strings.Contains(r.body, `\"agent-7\"`) {
		t.Errorf("DELETE of a claimed session: code %q, body %s; want %q naming agent-7", code, r.body, CodeLocked)
	}
	f.call("GET", "/api/sessions/g", "", 200)
	f.call("DELETE", "/api/sessions/g?force=yes", "", 400)
	if r := f.call("DELETE", "/api/sessions/g?force=1", "", 200); r.body != `{"deleted":1}`+"\n" {
		t.Errorf("forced DELETE = %q", r.body)
	}
	f.call("GET", "/api/sessions/g", "", 404)
}
