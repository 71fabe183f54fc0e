package sessiontree

import (
	"context"
	"fmt"
	"time"
)

// DefaultClaimTTL is the lease of a writer claim when none is asked: as
// in pi's own SQLite storage, 30 seconds, renewed by every write made
// through the claim and by [Claim.Renew].
const DefaultClaimTTL = 30 * time.Second

// Claimer is implemented by storage that can give one writer a fenced,
// expiring claim on its session, so that two agents never write one
// session at once by mistake. Claims are optional: readers never need
// one, and a writer that takes none is refused only while another
// holder's claim is live.
//
// Contract for implementers:
//   - A claim succeeds when the session is unclaimed, its claim has
//     expired or was released, or holder already holds it; otherwise it
//     fails with a [*ClaimedError] (matching [ErrLocked]) naming the
//     holder. Each success has a fence higher than every claim before it
//     on the session, so the claim it replaces is stale.
//   - Every write through a [Claim] checks, in its own transaction, that
//     the claim's fence is still the session's, and renews the lease by
//     ttl; a stale claim's write fails with a [*StaleClaimError]
//     (matching [ErrStaleClaim]) and writes nothing.
//   - A write made without a claim while another holder's claim is live
//     fails with a [*ClaimedError].
//   - ttl <= 0 means [DefaultClaimTTL]; an empty holder is [ErrBadClaim].
type Claimer interface {
	Claim(ctx context.Context, holder string, ttl time.Duration) (Claim, error)
}

// Claim is a writer's claim on a session: a [Storage] of that session
// whose writes are fenced by the claim and renew it. Reads through it are
// those of the storage it came from.
type Claim interface {
	Storage
	// Holder is the name the claim was taken under.
	Holder() string
	// Fence is the claim's fence: higher than that of every earlier claim
	// on the session.
	Fence() int64
	// Renew extends the lease by the claim's ttl from now (a heartbeat),
	// or fails with a [*StaleClaimError].
	Renew(ctx context.Context) error
	// Release ends the claim, so that another writer may claim the
	// session at once; writes through it then fail with a
	// [*StaleClaimError]. Releasing a stale claim fails so too.
	Release(ctx context.Context) error
}

// Heartbeat renews c every interval until ctx is done, when it returns
// nil, or until a renewal fails, when it returns that error (a
// [*StaleClaimError] says the claim was lost). Run it in a goroutine
// beside a writer that may be idle longer than the claim's ttl; interval
// should be well under the ttl, such as a third of it.
func Heartbeat(ctx context.Context, c Claim, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := c.Renew(ctx); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
	}
}

// ClaimTerms applies the rules of a claim asked for session by holder for
// ttl that hold on every engine: an empty holder is [ErrBadClaim], and
// ttl <= 0 means [DefaultClaimTTL]. It returns the lease to take.
func ClaimTerms(session, holder string, ttl time.Duration) (time.Duration, error) {
	if holder == "" {
		return 0, fmt.Errorf("claim session %s: empty holder: %w", session, ErrBadClaim)
	}
	if ttl <= 0 {
		ttl = DefaultClaimTTL
	}
	return ttl, nil
}
