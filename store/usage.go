package store

import (
	"context"

	"github.com/sessiontree/sessiontree"
)

// Usage reports the tokens and cost of every session in the store, by
// the rules of pi's /session breakdown summed over sessions, grouped by
// day, ISO week, model, working directory or session, and bounded by
// days (UTC dates, both included): see [sessiontree.UsageQuery] and
// engine.DB.Usage. It reads the usage aggregates every write keeps per
// session and day, never the entries, so it costs the same whatever the
// sessions' length. A query it refuses matches sessiontree.ErrBadUsageQuery.
func (s *Store) Usage(ctx context.Context, q sessiontree.UsageQuery) (sessiontree.UsageReport, error) {
	return s.d.Usage(ctx, q)
}
