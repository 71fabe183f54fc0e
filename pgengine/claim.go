package pgengine

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
)

var (
	_ sessiontree.Claimer = (*Storage)(nil)
	_ sessiontree.Claim   = (*Claim)(nil)
)

// Writer claims live in the claims table (migrate/postgres/0003): one row
// per session, whose fence only grows. The rules are the SQLite engine's
// (engine/claim.go); every claim statement runs under the session row's
// lock, which every write takes too, so a claim and a write never pass
// each other.
const (
	// qLiveClaim finds a live claim of the session: $2 is now.
	qLiveClaim = `SELECT holder, expires_ms FROM claims WHERE session = $1 AND holder <> '' AND expires_ms > $2`
	// qTakeClaim claims the session for $2 until $3, one fence above the
	// last claim's.
	qTakeClaim = `INSERT INTO claims (session, holder, fence, expires_ms) VALUES ($1, $2, 1, $3)
ON CONFLICT (session) DO UPDATE SET holder = EXCLUDED.holder, fence = claims.fence + 1, expires_ms = EXCLUDED.expires_ms
RETURNING fence`
	// qRenewClaim moves the lease of claim ($2, $3) to $4, only while it
	// is the session's current claim.
	qRenewClaim = `UPDATE claims SET expires_ms = $4 WHERE session = $1 AND holder = $2 AND fence = $3`
	// qReleaseClaim ends claim ($2, $3), keeping its fence.
	qReleaseClaim = `UPDATE claims SET holder = '', expires_ms = 0 WHERE session = $1 AND holder = $2 AND fence = $3`
	qClaimRow     = `SELECT holder, fence FROM claims WHERE session = $1`
	// qLockSession locks the session's row, as a write does.
	qLockSession = `SELECT pk FROM sessions WHERE pk = $1 AND NOT deleting FOR UPDATE`
)

// claimToken is what a Storage taken through [Storage.Claim] writes
// under.
type claimToken struct {
	holder string
	fence  int64
	ttl    time.Duration
}

// Claim is a writer's claim on a session of a PostgreSQL database (see
// sessiontree.Claimer): the session's Storage, whose writes (Append,
// AppendAll, SetLeaf, AppendBatch) check the claim's fence in their
// transaction, under the session row's lock, and renew its lease. The
// claim holds across processes and machines: it is a row of the
// database, not a lock of a connection. Like a Storage, it is safe for
// concurrent use.
type Claim struct {
	*Storage
}

// Claim claims the session for holder for ttl (sessiontree.DefaultClaimTTL
// when ttl <= 0), as sessiontree.Claimer says: another holder's live
// claim is a *sessiontree.ClaimedError, which matches
// sessiontree.ErrLocked. Leases run on [Options.Now].
func (s *Storage) Claim(ctx context.Context, holder string, ttl time.Duration) (sessiontree.Claim, error) {
	ttl, err := sessiontree.ClaimTerms(s.meta.ID, holder, ttl)
	if err != nil {
		return nil, err
	}
	var fence int64
	err = s.claimTx(ctx, "claim session "+s.meta.ID, func(tx *sqlx.Tx) error {
		now := s.db.opts.now()
		if err := s.liveClaim(ctx, tx, now, holder); err != nil {
			return err
		}
		return tx.GetContext(ctx, &fence, qTakeClaim, s.pk, holder, now.Add(ttl).UnixMilli())
	})
	if err != nil {
		return nil, err
	}
	tok := &claimToken{holder: holder, fence: fence, ttl: ttl}
	return &Claim{Storage: &Storage{db: s.db, pk: s.pk, meta: s.meta, claim: tok}}, nil
}

// claimError returns err's *sessiontree.ClaimedError or
// *sessiontree.StaleClaimError, nil when it has none. A write returns
// these as they are, not wrapped in the name of the write: they name the
// session and the holder already, and the SQLite engine returns them so.
func claimError(err error) error {
	var ce *sessiontree.ClaimedError
	if errors.As(err, &ce) {
		return ce
	}
	var se *sessiontree.StaleClaimError
	if errors.As(err, &se) {
		return se
	}
	return nil
}

// claimTx runs fn in a write transaction holding the session row's lock.
func (s *Storage) claimTx(ctx context.Context, op string, fn func(tx *sqlx.Tx) error) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	return s.db.update(ctx, op, func(tx *sqlx.Tx) error {
		var pk int64
		err := tx.GetContext(ctx, &pk, qLockSession, s.pk)
		if errors.Is(err, sql.ErrNoRows) {
			return &SessionNotFoundError{ID: s.meta.ID}
		}
		if err != nil {
			return err
		}
		return fn(tx)
	})
}

// liveClaim returns a *sessiontree.ClaimedError when someone other than
// holder ("" for a write without a claim) holds a live claim on the
// session at now.
func (s *Storage) liveClaim(ctx context.Context, tx *sqlx.Tx, now time.Time, holder string) error {
	var cur struct {
		Holder  string `db:"holder"`
		Expires int64  `db:"expires_ms"`
	}
	err := tx.GetContext(ctx, &cur, qLiveClaim, s.pk, now.UnixMilli())
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	case cur.Holder == holder:
		return nil
	}
	return claimedError(s.meta.ID, cur.Holder, cur.Expires)
}

// claimedError is the refusal of a write to session id, which holder
// claimed until expires (Unix ms).
func claimedError(id, holder string, expires int64) error {
	return &sessiontree.ClaimedError{Session: id, Holder: holder, Expires: time.UnixMilli(expires).UTC()}
}

// checkClaim is the claim rule of a write, run in its transaction tx
// once the session row is locked: a write through a claim must hold the
// session's current fence and renews the lease; any other write is
// refused while someone holds a live claim.
func (s *Storage) checkClaim(ctx context.Context, tx *sqlx.Tx) error {
	now := s.db.opts.now()
	if s.claim == nil {
		return s.liveClaim(ctx, tx, now, "")
	}
	return s.claimed(ctx, tx, qRenewClaim, now.Add(s.claim.ttl).UnixMilli())
}

// claimed runs update (qRenewClaim or qReleaseClaim) on the claim's row,
// and returns a *sessiontree.StaleClaimError when the claim is no longer
// the session's current one.
func (s *Storage) claimed(ctx context.Context, tx *sqlx.Tx, update string, extra ...any) error {
	tok := s.claim
	res, err := tx.ExecContext(ctx, update, append([]any{s.pk, tok.holder, tok.fence}, extra...)...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	stale := &sessiontree.StaleClaimError{Session: s.meta.ID, Holder: tok.holder, Fence: tok.fence}
	var cur struct {
		Holder string `db:"holder"`
		Fence  int64  `db:"fence"`
	}
	err = tx.GetContext(ctx, &cur, qClaimRow, s.pk)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	stale.Current, stale.CurrentFence = cur.Holder, cur.Fence
	return stale
}

// Holder returns the name the claim was taken under.
func (c *Claim) Holder() string { return c.claim.holder }

// Fence returns the claim's fence.
func (c *Claim) Fence() int64 { return c.claim.fence }

// Renew extends the lease by the claim's ttl from now.
func (c *Claim) Renew(ctx context.Context) error {
	return c.claimTx(ctx, "renew claim on session "+c.meta.ID, func(tx *sqlx.Tx) error {
		return c.claimed(ctx, tx, qRenewClaim, c.db.opts.now().Add(c.claim.ttl).UnixMilli())
	})
}

// Release ends the claim; the session's fence stays, so the next claim's
// is higher.
func (c *Claim) Release(ctx context.Context) error {
	return c.claimTx(ctx, "release claim on session "+c.meta.ID, func(tx *sqlx.Tx) error {
		return c.claimed(ctx, tx, qReleaseClaim)
	})
}
