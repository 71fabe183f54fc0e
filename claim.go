package sessiontree

import (
	"context"
	"database/sql"
	"errors"
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
	// [*StaleClaimError]. Releasing a stale claim fails so too; releasing
	// it again before anyone claims the session succeeds (a Release tried
	// again after [ErrCommitUnknown]).
	Release(ctx context.Context) error
}

// Heartbeat renews c every interval until ctx is done, when it returns
// nil, or until a renewal fails, when it returns that error (a
// [*StaleClaimError] says the claim was lost). Run it in a goroutine
// beside a writer that may be idle longer than the claim's ttl; interval
// should be well under the ttl, such as a third of it. An interval that
// is not positive is [ErrBadClaim], at once.
func Heartbeat(ctx context.Context, c Claim, interval time.Duration) error {
	if interval <= 0 {
		return fmt.Errorf("heartbeat every %s: the interval must be positive: %w", interval, ErrBadClaim)
	}
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

// ClaimRow is one session's row of an engine's claims table, read and
// written in the transaction of a write or a claim, under the engine's
// lock on the session: what the claim rules ([TakeClaim], [CheckClaim],
// [ClaimToken.Renew], [ClaimToken.Release]) need of an engine, each
// method one statement of its own SQL. The rules are then written once,
// here, and every engine's claims behave alike.
type ClaimRow interface {
	// Live returns the holder of the session's claim and when it lapses,
	// when the claim is live at now; ok is false when none is.
	Live(now time.Time) (holder string, expires time.Time, ok bool, err error)
	// Take claims the session for holder until expires, with a fence one
	// above the last claim's (1 for the first), and returns that fence.
	Take(holder string, expires time.Time) (fence int64, err error)
	// Renew moves the lease of claim (holder, fence) to expires, only
	// while that is the session's current claim: the update's result
	// affects its row or none.
	Renew(holder string, fence int64, expires time.Time) (sql.Result, error)
	// Release ends claim (holder, fence), keeping its fence, only while
	// that is the session's current claim: the update's result affects
	// its row or none.
	Release(holder string, fence int64) (sql.Result, error)
	// Current returns the holder and fence of the session's claim row
	// ("" and 0 when it has none; "" when the claim was released).
	Current() (holder string, fence int64, err error)
}

// ClaimToken is a claim an engine's storage writes under: its holder,
// its fence and the lease each write renews it by.
type ClaimToken struct {
	Holder string
	Fence  int64
	TTL    time.Duration
}

// TakeClaim claims session for holder for ttl (as [ClaimTerms] gives it)
// at now on row: another holder's live claim is a [*ClaimedError].
func TakeClaim(row ClaimRow, session, holder string, ttl time.Duration, now time.Time) (*ClaimToken, error) {
	if err := liveClaim(row, session, holder, now); err != nil {
		return nil, err
	}
	fence, err := row.Take(holder, now.Add(ttl))
	if err != nil {
		return nil, err
	}
	return &ClaimToken{Holder: holder, Fence: fence, TTL: ttl}, nil
}

// CheckClaim is the claim rule of a write to session at now, run in its
// transaction: a write through a claim (tok) must hold the session's
// current fence, or fails with a [*StaleClaimError], and renews the
// lease; a write without one (tok nil) fails with a [*ClaimedError]
// while someone holds a live claim.
func CheckClaim(row ClaimRow, session string, tok *ClaimToken, now time.Time) error {
	if tok == nil {
		return liveClaim(row, session, "", now)
	}
	return tok.Renew(row, session, now)
}

// DeleteOptions modify a delete of sessions.
type DeleteOptions struct {
	// Force deletes a session even while another holder's claim on it
	// is live: the user's override, on purpose, of a writer that still
	// holds the session (its next write then finds no session).
	Force bool
}

// CheckDelete is the claim rule of a delete of session at now, run in
// its transaction under the engine's lock on the session: a delete is
// the most destructive write made without a claim, so it fails with a
// [*ClaimedError] while someone holds a live claim, unless opts.Force.
func CheckDelete(row ClaimRow, session string, opts DeleteOptions, now time.Time) error {
	if opts.Force {
		return nil
	}
	return liveClaim(row, session, "", now)
}

// Renew moves the claim's lease to now plus its TTL, or fails with a
// [*StaleClaimError] when it is no longer session's current claim.
func (t *ClaimToken) Renew(row ClaimRow, session string, now time.Time) error {
	res, err := row.Renew(t.Holder, t.Fence, now.Add(t.TTL))
	return t.updated(row, session, res, err)
}

// Release ends the claim, or fails with a [*StaleClaimError] when it is
// no longer session's current claim. A claim already released (the row
// still holds its fence, without a holder: no claim was taken since) is
// released again without error, so that a Release tried again after its
// commit's outcome was unknown (ErrCommitUnknown: it had committed)
// succeeds as the first would have.
func (t *ClaimToken) Release(row ClaimRow, session string) error {
	res, err := row.Release(t.Holder, t.Fence)
	err = t.updated(row, session, res, err)
	var stale *StaleClaimError
	if errors.As(err, &stale) && stale.Current == "" && stale.CurrentFence == t.Fence {
		return nil
	}
	return err
}

// updated says what an update of the claim's row (res, err) means: err;
// nil when it found the row; else the [*StaleClaimError] naming the
// session's current claim.
func (t *ClaimToken) updated(row ClaimRow, session string, res sql.Result, err error) error {
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	stale := &StaleClaimError{Session: session, Holder: t.Holder, Fence: t.Fence}
	if stale.Current, stale.CurrentFence, err = row.Current(); err != nil {
		return err
	}
	return stale
}

// liveClaim returns a [*ClaimedError] when someone other than holder
// ("" for a write without a claim) holds a live claim on session at now.
func liveClaim(row ClaimRow, session, holder string, now time.Time) error {
	cur, expires, ok, err := row.Live(now)
	if err != nil || !ok || cur == holder {
		return err
	}
	return &ClaimedError{Session: session, Holder: cur, Expires: expires.UTC()}
}
