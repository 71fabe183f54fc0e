package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
)

// ClaimHarness tells [RunClaims] how to drive a backend that implements
// [sessiontree.Claimer] (the SQLite and PostgreSQL engines).
type ClaimHarness struct {
	// New returns an empty session of a new database whose claims run on
	// the clock now, and the same session opened again through another
	// handle on the database (another connection pool, on the same
	// clock), as another process would. Both must implement
	// sessiontree.Claimer and sessiontree.BatchAppender.
	New func(t testing.TB, now func() time.Time) (st, other sessiontree.Storage)
	// Delete deletes st's session with opts, without a claim.
	Delete func(ctx context.Context, st sessiontree.Storage, opts sessiontree.DeleteOptions) error
	// TxBatch, when set, appends entries to st inside a transaction of
	// the caller's, as the store's import and fork do: a write that must
	// obey claims too.
	TxBatch func(ctx context.Context, st sessiontree.Storage, entries []sessiontree.Entry) error
}

// RunClaims runs the writer-claim suite (sessiontree.Claimer's contract)
// on the backend h drives.
func RunClaims(t *testing.T, h ClaimHarness) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, h ClaimHarness)
	}{
		{"TwoHolders", claimTwoHolders},
		{"Expiry", claimExpiry},
		{"Renew", claimRenew},
		{"Release", claimRelease},
		{"Heartbeat", claimHeartbeat},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, h) })
	}
}

// fakeClock is a clock a test moves by hand.
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

// claimSession makes a session on a fake clock, and the session through
// another handle.
func claimSession(t *testing.T, h ClaimHarness) (st, other sessiontree.Storage, clk *fakeClock) {
	t.Helper()
	clk = &fakeClock{t: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)}
	st, other = h.New(t, clk.now)
	return st, other, clk
}

func claim(t testing.TB, st sessiontree.Storage, holder string, ttl time.Duration) sessiontree.Claim {
	t.Helper()
	c, err := st.(sessiontree.Claimer).Claim(context.Background(), holder, ttl)
	if err != nil {
		t.Fatalf("Claim(%q) = %v", holder, err)
	}
	return c
}

func tryClaim(st sessiontree.Storage, holder string) error {
	_, err := st.(sessiontree.Claimer).Claim(context.Background(), holder, 0)
	return err
}

func appendText(s sessiontree.Storage, text string) error {
	fields, err := sessiontree.Fields("message", userMessage(text))
	if err != nil {
		return err
	}
	e, err := s.Append(context.Background(), sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: fields},
		sessiontree.AppendOptions{})
	if err != nil && e.ID != "" {
		// Not wrapped: the refusal's checks fail on it.
		return fmt.Errorf("append = entry %s, %v; want the zero Entry with the error", e.ID, err)
	}
	return err
}

// batchChain is n user messages with ids prefix0000..., the first under
// parent.
func batchChain(t testing.TB, prefix, parent string, n int) []sessiontree.Entry {
	t.Helper()
	out := make([]sessiontree.Entry, 0, n)
	for i := range n {
		id := fmt.Sprintf("%s%04d", prefix, i)
		d := sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":` + string(userMessage(id)) + `}`)}
		e, err := sessiontree.BuildEntry(d, id, parent, "2026-03-01T10:00:00.000Z")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
		parent = id
	}
	return out
}

// WantClaimed fails t unless err is a [sessiontree.ClaimedError] naming
// holder (and so matches [sessiontree.ErrLocked]); what names the call.
func WantClaimed(t testing.TB, what string, err error, holder string) {
	t.Helper()
	var ce *sessiontree.ClaimedError
	if !errors.As(err, &ce) || !errors.Is(err, sessiontree.ErrLocked) || ce.Holder != holder {
		t.Fatalf("%s = %v; want a ClaimedError naming %q", what, err, holder)
	}
}

// CheckClaimed checks that holder's live claim on st's session refuses
// both another claim and a write made without one, naming holder: what a
// second agent, in another process, must meet.
func CheckClaimed(t testing.TB, st sessiontree.Storage, holder string) {
	t.Helper()
	WantClaimed(t, "Claim by another holder", tryClaim(st, "intruder"), holder)
	WantClaimed(t, "Append without a claim", appendText(st, "intruder"), holder)
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

func logLen(t *testing.T, st sessiontree.Storage) int {
	t.Helper()
	log, err := st.Log(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(log)
}

func claimTwoHolders(t *testing.T, h ClaimHarness) {
	ctx := context.Background()
	st, other, _ := claimSession(t, h)
	a := claim(t, st, "agent-a", 0)
	if a.Holder() != "agent-a" || a.Fence() != 1 {
		t.Errorf("claim = %q fence %d; want agent-a fence 1", a.Holder(), a.Fence())
	}
	WantClaimed(t, "Claim(agent-b)", tryClaim(other, "agent-b"), "agent-a")
	CheckClaimed(t, other, "agent-a")
	CheckClaimed(t, st, "agent-a")
	if err := appendText(a, "mine"); err != nil {
		t.Fatalf("Append through the claim = %v", err)
	}
	// Reads need no claim.
	if n := logLen(t, other); n != 1 {
		t.Errorf("log has %d entries; want 1", n)
	}
	// The holder claiming again fences off its older claim.
	a2 := claim(t, other, "agent-a", 0)
	if a2.Fence() != 2 {
		t.Errorf("second claim of agent-a has fence %d; want 2", a2.Fence())
	}
	wantStale(t, "Append through the older claim", appendText(a, "zombie"), "agent-a", 2)
	// Batches are writes too, in a transaction of their own or of a
	// caller's (the store's import and fork).
	WantClaimed(t, "AppendBatch without a claim",
		st.(sessiontree.BatchAppender).AppendBatch(ctx, batchChain(t, "b", "", 1)), "agent-a")
	if h.TxBatch != nil {
		WantClaimed(t, "AppendBatch in a caller's transaction without a claim",
			h.TxBatch(ctx, st, batchChain(t, "c", "", 1)), "agent-a")
	}
	if n := logLen(t, st); n != 1 {
		t.Errorf("log has %d entries after refused writes; want 1", n)
	}
	if _, err := st.(sessiontree.Claimer).Claim(ctx, "", 0); !errors.Is(err, sessiontree.ErrBadClaim) {
		t.Errorf("Claim(\"\") = %v; want ErrBadClaim", err)
	}
}

func claimExpiry(t *testing.T, h ClaimHarness) {
	st, other, clk := claimSession(t, h)
	a := claim(t, st, "agent-a", 30*time.Second)
	clk.advance(31 * time.Second)
	// Expired, not yet taken over: the fence is still the session's, so
	// the holder may write, which renews the lease.
	if err := appendText(a, "late"); err != nil {
		t.Fatalf("Append through an expired claim nobody took = %v", err)
	}
	WantClaimed(t, "Claim(agent-b) after the renewing write", tryClaim(st, "agent-b"), "agent-a")

	clk.advance(31 * time.Second)
	b := claim(t, other, "agent-b", 30*time.Second)
	if b.Fence() != 2 {
		t.Errorf("takeover fence = %d; want 2", b.Fence())
	}
	before := logLen(t, st)
	wantStale(t, "Append under the stale fence", appendText(a, "stale"), "agent-b", 2)
	_, err := a.SetLeaf(context.Background(), "", sessiontree.AppendOptions{})
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

func claimRenew(t *testing.T, h ClaimHarness) {
	ctx := context.Background()
	st, _, clk := claimSession(t, h)
	a := claim(t, st, "agent-a", 30*time.Second)
	clk.advance(20 * time.Second)
	if err := appendText(a, "write renews"); err != nil {
		t.Fatal(err)
	}
	clk.advance(20 * time.Second) // 40 s: alive until 50 s
	WantClaimed(t, "Claim at 40 s after a write at 20 s", tryClaim(st, "agent-b"), "agent-a")
	clk.advance(5 * time.Second)
	if err := a.Renew(ctx); err != nil { // 45 s: alive until 75 s
		t.Fatalf("Renew() = %v", err)
	}
	clk.advance(25 * time.Second)
	WantClaimed(t, "Claim at 70 s after a renewal at 45 s", tryClaim(st, "agent-b"), "agent-a")
	clk.advance(6 * time.Second)
	claim(t, st, "agent-b", 0)
}

func claimRelease(t *testing.T, h ClaimHarness) {
	ctx := context.Background()
	st, _, _ := claimSession(t, h)
	a := claim(t, st, "agent-a", 0)
	if err := a.Release(ctx); err != nil {
		t.Fatalf("Release() = %v", err)
	}
	// Released again (a Release tried again after ErrCommitUnknown, when
	// the first had committed): the claim is released, no error.
	if err := a.Release(ctx); err != nil {
		t.Errorf("Release() again = %v; want nil", err)
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
	// A delete is a write without a claim: refused while b's is live,
	// the session and b's claim kept; forced, it drops the claim with it.
	WantClaimed(t, "Delete of a claimed session", h.Delete(ctx, st, sessiontree.DeleteOptions{}), "agent-b")
	if err := appendText(b, "kept"); err != nil {
		t.Errorf("Append through the claim after a refused delete = %v", err)
	}
	if err := h.Delete(ctx, st, sessiontree.DeleteOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if err := tryClaim(st, "agent-c"); !errors.Is(err, sessiontree.ErrNotFound) {
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

func claimHeartbeat(t *testing.T, h ClaimHarness) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, _, clk := claimSession(t, h)
	a := renewCounter{claim(t, st, "agent-a", 30*time.Second), make(chan error)}
	done := make(chan error, 1)
	go func() { done <- sessiontree.Heartbeat(ctx, a, time.Millisecond) }()
	<-a.renewed
	clk.advance(25 * time.Second)
	// The heartbeat renews one claim at a time, so of two renewals seen
	// after the advance the second began after it: a renewal at 25 s or
	// later, alive until 55 s at least. (The first may have read the
	// clock before the advance.)
	<-a.renewed
	<-a.renewed
	clk.advance(15 * time.Second)
	WantClaimed(t, "Claim at 40 s under a heartbeat", tryClaim(st, "agent-b"), "agent-a")
	// A claim taken over stops the heartbeat with the stale error.
	b := claim(t, st, "agent-a", 0)
	for err := range a.renewed {
		if err != nil {
			break
		}
	}
	wantStale(t, "Heartbeat", <-done, "agent-a", b.Fence())
}
