package pgengine

import (
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/sessiontree/sessiontree/migrate"
)

// The schema fence (migration 20): a statement-level trigger on the
// sessions table refuses a write, and with it its transaction, on the
// connection of a program older than the database's schema. Open refuses
// a newer schema; the fence stops a process that opened the database
// before a newer one migrated it, which would otherwise go on deriving
// values (usage by day, names, labels, counters) by its older rules,
// values every newer Check then calls corrupt. Every such write writes
// the session's row, so the fence sits there.
//
// A connection says which schema its program knows in the setting
// migrate.SchemaSetting, sent with the connection's other settings when
// it starts (no round trip); an engine from before migration 20 sends
// none. A later migration that changes a rule of derived values creates
// the trigger again with its own version: this engine's writes then fail
// with codeSchemaFence, which storageErr makes migrate.ErrNewer.
// Migration 21 did, for the tree's counts an engine of 20 does not keep.

// codeSchemaFence is the error schema_fence raises (migration 20).
const codeSchemaFence = "ST003"

// knownSchema is the latest migration this engine knows.
var knownSchema = sync.OnceValue(func() int64 {
	migs, err := migrate.Names(migrate.PostgresFiles)
	if err != nil {
		return 0 // Open's migrate.Up reports it
	}
	return migrate.Latest(migs)
})

// sayKnownSchema sets cfg's connections to tell the fence the schema
// this engine knows.
func sayKnownSchema(cfg *pgx.ConnConfig) {
	cfg.RuntimeParams[migrate.SchemaSetting] = strconv.FormatInt(knownSchema(), 10)
}
