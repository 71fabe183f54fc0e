package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/internal/childenv"
)

// fakeClock is an engine clock a test moves by hand.
type fakeClock struct {
	mu sync.Mutex // guards t
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// claimSession makes a database on a fake clock and a session in it.
func claimSession(t *testing.T) (*engine.Storage, *fakeClock) {
	t.Helper()
	clk := &fakeClock{t: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)}
	path := filepath.Join(t.TempDir(), "s.db")
	emptyDB.CopyTo(t, path)
	db := openDB(t, path, engine.Options{Now: clk.now})
	return newSession(t, db), clk
}

func claim(t *testing.T, st *engine.Storage, holder string, ttl time.Duration) sessiontree.Claim {
	t.Helper()
	c, err := st.Claim(context.Background(), holder, ttl)
	if err != nil {
		t.Fatalf("Claim(%q) = %v", holder, err)
	}
	return c
}

func appendText(s sessiontree.Storage, text string) error {
	fields, err := sessiontree.Fields("message", userMsg(text))
	if err != nil {
		return err
	}
	_, err = s.Append(context.Background(), sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: fields},
		sessiontree.AppendOptions{})
	return err
}

// wantClaimed checks that err is a ClaimedError naming holder.
func wantClaimed(t *testing.T, what string, err error, holder string) {
	t.Helper()
	var ce *sessiontree.ClaimedError
	if !errors.As(err, &ce) || !errors.Is(err, sessiontree.ErrLocked) || ce.Holder != holder {
		t.Fatalf("%s = %v; want a ClaimedError naming %q", what, err, holder)
	}
}

// wantStale checks that err is a StaleClaimError whose current claim is
// current (fence fence).
func wantStale(t *testing.T, what string, err error, current string, fence int64) {
	t.Helper()
	var se *sessiontree.StaleClaimError
	if !errors.As(err, &se) || !errors.Is(err, sessiontree.ErrStaleClaim) || se.Current != current || se.CurrentFence != fence {
		t.Fatalf("%s = %v; want a StaleClaimError, now %q fence %d", what, err, current, fence)
	}
}

func logLen(t *testing.T, st *engine.Storage) int {
	t.Helper()
	log, err := st.Log(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(log)
}

func TestClaimTwoHolders(t *testing.T) {
	ctx := context.Background()
	st, _ := claimSession(t)
	a := claim(t, st, "agent-a", 0)
	if a.Holder() != "agent-a" || a.Fence() != 1 {
		t.Errorf("claim = %q fence %d; want agent-a fence 1", a.Holder(), a.Fence())
	}
	_, err := st.Claim(ctx, "agent-b", 0)
	wantClaimed(t, "Claim(agent-b)", err, "agent-a")
	wantClaimed(t, "Append without a claim", appendText(st, "intruder"), "agent-a")
	if err := appendText(a, "mine"); err != nil {
		t.Fatalf("Append through the claim = %v", err)
	}
	// Reads need no claim.
	if n := logLen(t, st); n != 1 {
		t.Errorf("log has %d entries; want 1", n)
	}
	// The holder claiming again fences off its older claim.
	a2 := claim(t, st, "agent-a", 0)
	if a2.Fence() != 2 {
		t.Errorf("second claim of agent-a has fence %d; want 2", a2.Fence())
	}
	wantStale(t, "Append through the older claim", appendText(a, "zombie"), "agent-a", 2)
	// Batches are writes too, in a transaction of their own or of a
	// caller's (the store's import and fork).
	wantClaimed(t, "AppendBatch without a claim", st.AppendBatch(ctx, batchChain(t, "b", "", 1)), "agent-a")
	err = st.DB().Update(ctx, func(tx *engine.Tx) error { return tx.AppendBatch(st, batchChain(t, "c", "", 1)) })
	wantClaimed(t, "Tx.AppendBatch without a claim", err, "agent-a")
	if _, err := st.Claim(ctx, "", 0); !errors.Is(err, sessiontree.ErrBadClaim) {
		t.Errorf("Claim(\"\") = %v; want ErrBadClaim", err)
	}
}

func TestClaimExpiry(t *testing.T) {
	st, clk := claimSession(t)
	a := claim(t, st, "agent-a", 30*time.Second)
	clk.advance(31 * time.Second)
	// Expired, not yet taken over: the fence is still the session's, so
	// the holder may write, which renews the lease.
	if err := appendText(a, "late"); err != nil {
		t.Fatalf("Append through an expired claim nobody took = %v", err)
	}
	_, err := st.Claim(context.Background(), "agent-b", 0)
	wantClaimed(t, "Claim(agent-b) after the renewing write", err, "agent-a")

	clk.advance(31 * time.Second)
	b := claim(t, st, "agent-b", 30*time.Second)
	if b.Fence() != 2 {
		t.Errorf("takeover fence = %d; want 2", b.Fence())
	}
	before := logLen(t, st)
	wantStale(t, "Append under the stale fence", appendText(a, "stale"), "agent-b", 2)
	_, err = a.SetLeaf(context.Background(), "", sessiontree.AppendOptions{})
	wantStale(t, "SetLeaf under the stale fence", err, "agent-b", 2)
	wantStale(t, "Renew of the stale claim", a.Renew(context.Background()), "agent-b", 2)
	if n := logLen(t, st); n != before {
		t.Errorf("log has %d entries after refused writes; want %d", n, before)
	}
	// Once b's claim lapses, a write without a claim goes through.
	clk.advance(31 * time.Second)
	if err := appendText(st, "free"); err != nil {
		t.Errorf("Append without a claim after expiry = %v", err)
	}
}

func TestClaimRenew(t *testing.T) {
	ctx := context.Background()
	st, clk := claimSession(t)
	a := claim(t, st, "agent-a", 30*time.Second)
	clk.advance(20 * time.Second)
	if err := appendText(a, "write renews"); err != nil {
		t.Fatal(err)
	}
	clk.advance(20 * time.Second) // 40 s: alive until 50 s
	_, err := st.Claim(ctx, "agent-b", 0)
	wantClaimed(t, "Claim at 40 s after a write at 20 s", err, "agent-a")
	clk.advance(5 * time.Second)
	if err := a.Renew(ctx); err != nil { // 45 s: alive until 75 s
		t.Fatalf("Renew() = %v", err)
	}
	clk.advance(25 * time.Second)
	_, err = st.Claim(ctx, "agent-b", 0)
	wantClaimed(t, "Claim at 70 s after a renewal at 45 s", err, "agent-a")
	clk.advance(6 * time.Second)
	claim(t, st, "agent-b", 0)
}

func TestClaimRelease(t *testing.T) {
	ctx := context.Background()
	st, _ := claimSession(t)
	a := claim(t, st, "agent-a", 0)
	if err := a.Release(ctx); err != nil {
		t.Fatalf("Release() = %v", err)
	}
	wantStale(t, "Append after Release", appendText(a, "after"), "", 1)
	if err := appendText(st, "unclaimed"); err != nil {
		t.Errorf("Append without a claim after Release = %v", err)
	}
	b := claim(t, st, "agent-b", 0)
	if b.Fence() != 2 {
		t.Errorf("claim after a release has fence %d; want 2", b.Fence())
	}
	wantStale(t, "second Release", a.Release(ctx), "agent-b", 2)
	// Deleting the session drops its claim with it.
	if err := st.DB().DeleteSession(ctx, st.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Claim(ctx, "agent-c", 0); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("Claim of a deleted session = %v; want ErrNotFound", err)
	}
}

// renewCounter tells each renewal of the claim it wraps.
type renewCounter struct {
	sessiontree.Claim
	renewed chan error
}

func (r renewCounter) Renew(ctx context.Context) error {
	err := r.Claim.Renew(ctx)
	r.renewed <- err
	return err
}

func TestClaimHeartbeat(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, clk := claimSession(t)
	a := renewCounter{claim(t, st, "agent-a", 30*time.Second), make(chan error)}
	done := make(chan error, 1)
	go func() { done <- sessiontree.Heartbeat(ctx, a, time.Millisecond) }()
	<-a.renewed
	clk.advance(25 * time.Second)
	<-a.renewed // a renewal at 25 s or later: alive until 55 s at least
	clk.advance(15 * time.Second)
	_, err := st.Claim(ctx, "agent-b", 0)
	wantClaimed(t, "Claim at 40 s under a heartbeat", err, "agent-a")
	// A claim taken over stops the heartbeat with the stale error.
	b := claim(t, st, "agent-a", 0)
	for err := range a.renewed {
		if err != nil {
			break
		}
	}
	wantStale(t, "Heartbeat", <-done, "agent-a", b.Fence())
}

const claimChildEnv = "ENGINE_TEST_CLAIM_CHILD"

// TestClaimProcesses claims a session here and checks that another
// process is refused, naming the holder, both a claim and a plain write.
func TestClaimProcesses(t *testing.T) {
	if os.Getenv(claimChildEnv) != "" {
		return // the child's work is in TestClaimChild
	}
	path := filepath.Join(t.TempDir(), "s.db")
	emptyDB.CopyTo(t, path)
	db := openDB(t, path, engine.Options{})
	st := newSession(t, db)
	a := claim(t, st, "parent-agent", time.Minute)
	cmd := exec.Command(os.Args[0], "-test.run=^TestClaimChild$", "-test.count=1", "-test.v")
	cmd.Env = childenv.Env(fmt.Sprintf("%s=%s|%s", claimChildEnv, path, st.ID()))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if err := a.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestClaimChild is the child of TestClaimProcesses.
func TestClaimChild(t *testing.T) {
	spec := os.Getenv(claimChildEnv)
	if spec == "" {
		t.Skip("run by TestClaimProcesses")
	}
	path, id, _ := strings.Cut(spec, "|")
	ctx := context.Background()
	db, err := engine.Open(ctx, path, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := db.OpenSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Claim(ctx, "child-agent", 0)
	wantClaimed(t, "Claim in another process", err, "parent-agent")
	wantClaimed(t, "Append in another process", appendText(st, "child"), "parent-agent")
}
