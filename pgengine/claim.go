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
	var tok *sessiontree.ClaimToken
	err = s.claimTx(ctx, "claim session "+s.meta.ID, func(tx *sqlx.Tx) error {
		var terr error
		tok, terr = sessiontree.TakeClaim(claimRow{ctx, tx, s.pk}, s.meta.ID, holder, ttl, s.db.opts.now())
		return terr
	})
	if err != nil {
		return nil, err
	}
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
			return lockWaitErr(err)
		}
		return fn(tx)
	})
}

// claimRow is the session's claims row in a write transaction tx that
// holds the session row's lock: the sessiontree.ClaimRow the root
// package's claim rules run on.
type claimRow struct {
	ctx context.Context
	tx  *sqlx.Tx
	pk  int64
}

// Live implements sessiontree.ClaimRow.
func (r claimRow) Live(now time.Time) (string, time.Time, bool, error) {
	var cur struct {
		Holder  string `db:"holder"`
		Expires int64  `db:"expires_ms"`
	}
	err := r.tx.GetContext(r.ctx, &cur, qLiveClaim, r.pk, now.UnixMilli())
	if errors.Is(err, sql.ErrNoRows) {
		return "", time.Time{}, false, nil
	}
	return cur.Holder, time.UnixMilli(cur.Expires), err == nil, err
}

// claimedError is the refusal of a write to session id, which holder
// claimed until expires (Unix ms).
func claimedError(id, holder string, expires int64) error {
	return &sessiontree.ClaimedError{Session: id, Holder: holder, Expires: time.UnixMilli(expires).UTC()}
}

// Take implements sessiontree.ClaimRow.
func (r claimRow) Take(holder string, expires time.Time) (fence int64, err error) {
	err = r.tx.GetContext(r.ctx, &fence, qTakeClaim, r.pk, holder, expires.UnixMilli())
	return fence, err
}

// Renew implements sessiontree.ClaimRow.
func (r claimRow) Renew(holder string, fence int64, expires time.Time) (sql.Result, error) {
	return r.tx.ExecContext(r.ctx, qRenewClaim, r.pk, holder, fence, expires.UnixMilli())
}

// Release implements sessiontree.ClaimRow.
func (r claimRow) Release(holder string, fence int64) (sql.Result, error) {
	return r.tx.ExecContext(r.ctx, qReleaseClaim, r.pk, holder, fence)
}

// Current implements sessiontree.ClaimRow.
func (r claimRow) Current() (holder string, fence int64, err error) {
	var cur struct {
		Holder string `db:"holder"`
		Fence  int64  `db:"fence"`
	}
	err = r.tx.GetContext(r.ctx, &cur, qClaimRow, r.pk)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, nil
	}
	return cur.Holder, cur.Fence, err
}

// checkClaim is the claim rule of a write (sessiontree.CheckClaim), run
// in its transaction tx once the session row is locked.
func (s *Storage) checkClaim(ctx context.Context, tx *sqlx.Tx) error {
	return sessiontree.CheckClaim(claimRow{ctx, tx, s.pk}, s.meta.ID, s.claim, s.db.opts.now())
}

// Holder returns the name the claim was taken under.
func (c *Claim) Holder() string { return c.claim.Holder }

// Fence returns the claim's fence.
func (c *Claim) Fence() int64 { return c.claim.Fence }

// Renew extends the lease by the claim's ttl from now.
func (c *Claim) Renew(ctx context.Context) error {
	return c.claimTx(ctx, "renew claim on session "+c.meta.ID, func(tx *sqlx.Tx) error {
		return c.claim.Renew(claimRow{ctx, tx, c.pk}, c.meta.ID, c.db.opts.now())
	})
}

// Release ends the claim; the session's fence stays, so the next claim's
// is higher.
func (c *Claim) Release(ctx context.Context) error {
	return c.claimTx(ctx, "release claim on session "+c.meta.ID, func(tx *sqlx.Tx) error {
		return c.claim.Release(claimRow{ctx, tx, c.pk}, c.meta.ID)
	})
}
