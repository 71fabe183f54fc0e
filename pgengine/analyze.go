package pgengine

import (
	"context"
	"slices"
	"sync"
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
// statistics have never been taken or do not know a session it stored
// in bulk. Once they know it, they need not be taken again as it grows:
// the planner scales each session's share of the table, as the statistics
// give it, by the table's size now. (Analyzing also when a tenth of the
// table was added, autovacuum's own rule, ran an ANALYZE after every
// batch of a long session loaded into a young database: 56% of the
// server's time in a push of 100,000 entries.)

// analyzeMinRows is how many entries batches must have stored since the
// last check before a commit looks at the statistics; a batch of that
// many for one session is a session the planner must know (a scan per
// row of another costs the square of its size).
const analyzeMinRows = 1000

// maxBulkSessions bounds the sessions bulkRows remembers between two
// checks; more than that many in bulk is itself a reason to analyze.
const maxBulkSessions = 64

// bulkRows counts the entries batches stored since the last check
// (approximately: a batch that rolls back counts too, which only costs a
// check), and the sessions they stored in bulk.
type bulkRows struct {
	n         atomic.Int64
	analyzing atomic.Bool
	analyzed  atomic.Int64 // ANALYZE runs, for tests
	// analyzedAll counts those of every column (analyzeAll), for tests.
	analyzedAll atomic.Int64

	mu       sync.Mutex
	sessions []int64 // keys of sessions a batch of analyzeMinRows or more stored
	many     bool    // more than maxBulkSessions of them
}

// add counts a stored batch of n entries of session pk.
func (b *bulkRows) add(pk int64, n int) {
	b.n.Add(int64(n))
	if n < analyzeMinRows {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case slices.Contains(b.sessions, pk):
	case len(b.sessions) < maxBulkSessions:
		b.sessions = append(b.sessions, pk)
	default:
		b.many = true
	}
}

// take returns and forgets the entries counted, the sessions stored in
// bulk and whether there were too many to list.
func (b *bulkRows) take() (n int64, sessions []int64, many bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, sessions, many = b.n.Swap(0), b.sessions, b.many
	b.sessions, b.many = nil, false
	return n, sessions, many
}

// staleStats reports whether the statistics of entries' columns other
// than its session were never taken (no ANALYZE, or one of the session
// columns alone), and whether they mislead, given the keys $1 of sessions stored in bulk
// since they were checked and $2 whether more were: never taken, or one
// of those sessions missing from the most-common-values list while that
// list holds every session the statistics know (so the planner would
// take it for one row).
const staleStats = `SELECT NOT EXISTS (SELECT FROM pg_stats s
		WHERE s.schemaname = n.nspname AND s.tablename = 'entries' AND s.attname = 'type') AS never,
	c.reltuples < 0 OR coalesce((SELECT s.n_distinct BETWEEN 0 AND
		current_setting('default_statistics_target')::real
		AND ($2 OR EXISTS (SELECT 1 FROM unnest($1::bigint[]) AS k(pk)
			WHERE k.pk <> ALL (coalesce(s.most_common_vals::text::bigint[], '{}'))))
	FROM pg_stats s
	WHERE s.schemaname = n.nspname AND s.tablename = 'entries' AND s.attname = 'session'), true) AS stale
	FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = 'entries'::regclass`

// The statistics an ANALYZE after a bulk load takes: of the columns a
// session's reads filter on, when they were never taken; else of the
// session columns alone, whose most common values are what a session
// new to them misleads (the other columns' statistics hold as they
// were, and taking them is most of the work: 85 against 20 ms on a
// table of 20,000 entries).
const (
	analyzeAll      = `ANALYZE entries (session, seq, id, parent_id, depth, type), branch`
	analyzeSessions = `ANALYZE entries (session), branch (session)`
)

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
	_, sessions, many := b.take()
	var st struct{ Never, Stale bool }
	if err := db.db.GetContext(ctx, &st, staleStats, sessions, many); err != nil || !st.Stale {
		return
	}
	analyze := analyzeSessions
	if st.Never {
		analyze = analyzeAll
	}
	if _, err := db.db.ExecContext(ctx, analyze); err == nil {
		b.analyzed.Add(1)
		if st.Never {
			b.analyzedAll.Add(1)
		}
	}
}
