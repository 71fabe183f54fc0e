package pgengine

import (
	"context"
	"sync/atomic"
)

// The planner's statistics after a bulk load (issue 15). A session's
// queries name it by its key (session = $1): when the statistics of
// entries were taken while the table held fewer sessions than the
// statistics target, every one of them is in the most-common-values list,
// and a session added since is estimated at one row. After a bulk import
// of such a session the planner then picks any index that starts with the
// session column and filters the rest, run once per row of another scan:
// a State query of a 100k-entry session took 12 minutes that way. The
// server's autovacuum analyzes the table later (a minute or more); a
// write that stored a bulk of entries analyzes at once when the
// statistics are stale by that rule or by autovacuum's own (a tenth of
// the table added).

// analyzeMinRows is how many entries batches must have stored since the
// last check before a commit looks at the statistics; a batch of that
// many for one session is a session the planner must know (a scan per
// row of another costs the square of its size).
const analyzeMinRows = 1000

// bulkRows counts the entries batches stored since the last check
// (approximately: a batch that rolls back counts too, which only costs a
// check), and whether one of them stored a large session.
type bulkRows struct {
	n         atomic.Int64
	large     atomic.Bool
	analyzing atomic.Bool
}

// add counts a stored batch of n entries.
func (b *bulkRows) add(n int) {
	b.n.Add(int64(n))
	if n >= analyzeMinRows {
		b.large.Store(true)
	}
}

// staleStats reports whether the statistics of entries mislead, given
// that $1 entries were added since they were taken, $2 whether a large
// session was among them: never taken, a tenth of the table added
// (autovacuum's rule, run now), or a large new session the statistics
// estimate at one row (every session they know is in the
// most-common-values list).
const staleStats = `SELECT c.reltuples < 0 OR $1 >= c.reltuples / 10 OR $2 AND coalesce((SELECT s.n_distinct BETWEEN 0 AND
	current_setting('default_statistics_target')::real FROM pg_stats s
	WHERE s.schemaname = n.nspname AND s.tablename = 'entries' AND s.attname = 'session'), true)
	FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = 'entries'::regclass`

// analyzeAfterBulk runs after a write's commit: when batches stored
// analyzeMinRows entries or more since the last check and the statistics
// are stale, it analyzes the tables a session's reads plan over (the
// columns they filter on; ANALYZE waits for no writer). One caller checks
// at a time; a failure is left to autovacuum, the write has committed.
func (db *DB) analyzeAfterBulk(ctx context.Context) {
	b := &db.bulk
	if b.n.Load() < analyzeMinRows || !b.analyzing.CompareAndSwap(false, true) {
		return
	}
	defer b.analyzing.Store(false)
	added, large := b.n.Swap(0), b.large.Swap(false)
	var stale bool
	if err := db.db.GetContext(ctx, &stale, staleStats, added, large); err != nil || !stale {
		return
	}
	_, _ = db.db.ExecContext(ctx, `ANALYZE entries (session, seq, id, parent_id, depth, type), branch`)
}
