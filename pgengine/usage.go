package pgengine

import (
	"context"

	"github.com/sessiontree/sessiontree"
)

// Usage implements [sessiontree.Database.Usage].
//
// TODO(pgstore): usage_days on PostgreSQL.
func (db *DB) Usage(ctx context.Context, q sessiontree.UsageQuery) (sessiontree.UsageReport, error) {
	return sessiontree.UsageReport{}, &UnsupportedError{Op: "Usage"}
}
