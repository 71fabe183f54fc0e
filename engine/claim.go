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

// claimToken is what a Storage taken through [Storage.Claim] writes
// under.
type claimToken struct {
	holder string
	fence  int64
	ttl    time.Duration
}

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
	var fence int64
	err = s.db.update(ctx, true, func(w q) error {
		if _, err := s.head(w); err != nil {
			return err
		}
		now := s.db.opts.Now()
		if err := s.liveClaim(w, now, holder); err != nil {
			return err
		}
		return w.row(qTakeClaim, args(s.pk, holder, now.Add(ttl).UnixMilli()), &fence)
	})
	if err != nil {
		var ce *sessiontree.ClaimedError
		if errors.As(err, &ce) {
			return nil, err // it names the session
		}
		return nil, fmt.Errorf("claim session %s: %w", s.meta.ID, translate(err))
	}
	tok := &claimToken{holder: holder, fence: fence, ttl: ttl}
	return &Claim{Storage: &Storage{db: s.db, pk: s.pk, meta: s.meta, claim: tok}}, nil
}

// liveClaim returns a *sessiontree.ClaimedError when someone other than
// holder ("" for a write without a claim) holds a live claim on the
// session at now.
func (s *Storage) liveClaim(w q, now time.Time, holder string) error {
	var cur string
	var exp int64
	err := w.row(qLiveClaim, args(s.pk, now.UnixMilli()), &cur, &exp)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	case cur == holder:
		return nil
	}
	return &sessiontree.ClaimedError{Session: s.meta.ID, Holder: cur, Expires: time.UnixMilli(exp).UTC()}
}

// checkClaim is the claim rule of a write, run in its transaction w: a
// write through a claim must hold the session's current fence and renews
// the lease; any other write is refused while someone holds a live claim.
func (s *Storage) checkClaim(w q) error {
	now := s.db.opts.Now()
	if s.claim == nil {
		return s.liveClaim(w, now, "")
	}
	return s.claimed(w, qRenewClaim, now.Add(s.claim.ttl).UnixMilli())
}

// claimed runs update (qRenewClaim or qReleaseClaim) on the claim's row,
// and returns a *sessiontree.StaleClaimError when the claim is no longer
// the session's current one.
func (s *Storage) claimed(w q, update string, extra ...any) error {
	tok := s.claim
	res, err := w.exec(update, append([]any{s.pk, tok.holder, tok.fence}, extra...)...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	stale := &sessiontree.StaleClaimError{Session: s.meta.ID, Holder: tok.holder, Fence: tok.fence}
	if err := w.row(qClaimRow, args(s.pk), &stale.Current, &stale.CurrentFence); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	return stale
}

// Holder returns the name the claim was taken under.
func (c *Claim) Holder() string { return c.claim.holder }

// Fence returns the claim's fence.
func (c *Claim) Fence() int64 { return c.claim.fence }

// Renew extends the lease by the claim's ttl from now.
func (c *Claim) Renew(ctx context.Context) error {
	return c.claimUpdate(ctx, "renew", qRenewClaim, c.db.opts.Now().Add(c.claim.ttl).UnixMilli())
}

// Release ends the claim; the session's fence stays, so the next claim's
// is higher.
func (c *Claim) Release(ctx context.Context) error {
	return c.claimUpdate(ctx, "release", qReleaseClaim)
}

func (c *Claim) claimUpdate(ctx context.Context, step, update string, extra ...any) error {
	if err := c.check(ctx); err != nil {
		return err
	}
	err := c.db.update(ctx, true, func(w q) error { return c.claimed(w, update, extra...) })
	var stale *sessiontree.StaleClaimError
	if err != nil && !errors.As(err, &stale) {
		return fmt.Errorf("%s claim on session %s: %w", step, c.meta.ID, translate(err))
	}
	return err
}
