package pgengine

import (
	"database/sql"

	"github.com/sessiontree/sessiontree/engine"
)

// Entries carry the checksum of their JSON in entries.checksum
// (migration 2), the SQLite engine's (engine.EntryChecksum, CRC-32C): the
// rule has one owner, and a session moved between the engines keeps the
// same sums. Every write computes it; RawEntries and Check verify it.

// entryChecksum is the checksum stored with raw.
func entryChecksum(raw []byte) int64 { return engine.EntryChecksum(raw) }

// verifyChecksum returns a *sessiontree.CorruptError naming entry id
// when raw does not match its stored checksum sum.
func verifyChecksum(id string, raw []byte, sum sql.NullInt64) error {
	return engine.VerifyChecksum(id, raw, sum)
}
