package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sessiontree/sessiontree"
)

var (
	_ sessiontree.Claimer = (*Storage)(nil)
	_ sessiontree.Claim   = (*Claim)(nil)
)

// Writer claims live in the claims table (migration 14): one row per
// session, whose fence only grows.
const (
	// qLiveClaim finds a live claim of the session: ?2 is now.
	qLiveClaim = `SELECT holder, expires_ms FROM claims WHERE session = ?1 AND holder <> '' AND expires_ms > ?2`
	// qTakeClaim claims the session for ?2 until ?3, one fence above the
	// last claim's.
	qTakeClaim = `INSERT INTO claims (session, holder, fence, expires_ms) VALUES (?1, ?2, 1, ?3)
ON CONFLICT (session) DO UPDATE SET holder = excluded.holder, fence = claims.fence + 1, expires_ms = excluded.expires_ms
RETURNING fence`
	// qRenewClaim moves the lease of claim (?2, ?3) to ?4, only while it
	// is the session's current claim.
	qRenewClaim = `UPDATE claims SET expires_ms = ?4 WHERE session = ?1 AND holder = ?2 AND fence = ?3`
	// qReleaseClaim ends claim (?2, ?3), keeping its fence.
	qReleaseClaim = `UPDATE claims SET holder = '', expires_ms = 0 WHERE session = ?1 AND holder = ?2 AND fence = ?3`
	qClaimRow     = `SELECT holder, fence FROM claims WHERE session = ?1`
)

// Claim is a writer's claim on a session of a SQLite database (see
// sessiontree.Claimer): the session's Storage, whose writes (Append,
// AppendAll, SetLeaf, AppendBatch) check the claim's fence in their
// transaction and renew its lease. Like a Storage, it is safe for
// concurrent use.
type Claim struct {
	*Storage
}

// Claim claims the session for holder for ttl (sessiontree.DefaultClaimTTL
// when ttl <= 0), as sessiontree.Claimer says: another holder's live
// claim is a *sessiontree.ClaimedError, which matches
// sessiontree.ErrLocked.
func (s *Storage) Claim(ctx context.Context, holder string, ttl time.Duration) (sessiontree.Claim, error) {
	ttl, err := sessiontree.ClaimTerms(s.meta.ID, holder, ttl)
	if err != nil {
		return nil, err
	}
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	var tok *sessiontree.ClaimToken
	err = s.db.update(ctx, true, func(w q) error {
		if _, err := s.head(w); err != nil {
			return err
		}
		var terr error
		tok, terr = sessiontree.TakeClaim(claimRow{w, s.pk}, s.meta.ID, holder, ttl, s.db.opts.Now())
		return terr
	})
	if err != nil {
		var ce *sessiontree.ClaimedError
		if errors.As(err, &ce) {
			return nil, err // it names the session
		}
		return nil, fmt.Errorf("claim session %s: %w", s.meta.ID, translate(err))
	}
	return &Claim{Storage: &Storage{db: s.db, pk: s.pk, meta: s.meta, claim: tok}}, nil
}

// claimRow is the session's claims row in a write transaction w: the
// sessiontree.ClaimRow the root package's claim rules run on.
type claimRow struct {
	w  q
	pk int64
}

// Live implements sessiontree.ClaimRow.
func (r claimRow) Live(now time.Time) (string, time.Time, bool, error) {
	var holder string
	var exp int64
	err := r.w.row(qLiveClaim, args(r.pk, now.UnixMilli()), &holder, &exp)
	if errors.Is(err, sql.ErrNoRows) {
		return "", time.Time{}, false, nil
	}
	return holder, time.UnixMilli(exp), err == nil, err
}

// Take implements sessiontree.ClaimRow.
func (r claimRow) Take(holder string, expires time.Time) (fence int64, err error) {
	err = r.w.row(qTakeClaim, args(r.pk, holder, expires.UnixMilli()), &fence)
	return fence, err
}

// Renew implements sessiontree.ClaimRow.
func (r claimRow) Renew(holder string, fence int64, expires time.Time) (sql.Result, error) {
	return r.w.exec(qRenewClaim, r.pk, holder, fence, expires.UnixMilli())
}

// Release implements sessiontree.ClaimRow.
func (r claimRow) Release(holder string, fence int64) (sql.Result, error) {
	return r.w.exec(qReleaseClaim, r.pk, holder, fence)
}

// Current implements sessiontree.ClaimRow.
func (r claimRow) Current() (holder string, fence int64, err error) {
	err = r.w.row(qClaimRow, args(r.pk), &holder, &fence)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, nil
	}
	return holder, fence, err
}

// checkClaim is the claim rule of a write (sessiontree.CheckClaim), run
// in its transaction w.
func (s *Storage) checkClaim(w q) error {
	return sessiontree.CheckClaim(claimRow{w, s.pk}, s.meta.ID, s.claim, s.db.opts.Now())
}

// Holder returns the name the claim was taken under.
func (c *Claim) Holder() string { return c.claim.Holder }

// Fence returns the claim's fence.
func (c *Claim) Fence() int64 { return c.claim.Fence }

// Renew extends the lease by the claim's ttl from now.
func (c *Claim) Renew(ctx context.Context) error {
	return c.claimUpdate(ctx, "renew", func(r claimRow) error { return c.claim.Renew(r, c.meta.ID, c.db.opts.Now()) })
}

// Release ends the claim; the session's fence stays, so the next claim's
// is higher.
func (c *Claim) Release(ctx context.Context) error {
	return c.claimUpdate(ctx, "release", func(r claimRow) error { return c.claim.Release(r, c.meta.ID) })
}

func (c *Claim) claimUpdate(ctx context.Context, step string, fn func(r claimRow) error) error {
	if err := c.check(ctx); err != nil {
		return err
	}
	err := c.db.update(ctx, true, func(w q) error { return fn(claimRow{w, c.pk}) })
	var stale *sessiontree.StaleClaimError
	if err != nil && !errors.As(err, &stale) {
		return fmt.Errorf("%s claim on session %s: %w", step, c.meta.ID, translate(err))
	}
	return err
}
