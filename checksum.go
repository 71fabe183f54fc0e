package sessiontree

import (
	"database/sql"
	"fmt"
	"hash/crc32"
	"strconv"
	"sync"
)

// Checksums of the stored JSON.
//
// Every engine keeps with each entry the CRC-32C (Castagnoli) of its raw
// bytes, computed by the write that stores it (SQLite's migration 11,
// PostgreSQL's migration 2), so that a session moved between the engines
// keeps the same sums. A database's own checks see pages, not values: a
// changed letter inside an entry's JSON, or JSON cut short, is a valid row
// to them, and the JSON would be read and printed as if it were the entry.
// With the checksum, an engine's Check finds the row and every read that
// hands out entries refuses it with a [CorruptError] naming the entry.
//
// CRC-32C because it is in the standard library, runs on the CPU's CRC
// instruction (about 60 ns for an entry of 400 bytes, some 10 GB/s on
// long ones, against a few hundred MB/s for FNV-1a) and detects every
// change of up to 32 consecutive bits: one letter changed is always
// found. It is a check against damage, not against someone who means it:
// whoever can write the database can write a matching checksum.

// castagnoli is made at the first checksum, not at start-up: making it
// takes a fifth of a millisecond, which a command that reads no entry
// (info, ls) does not pay.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// EntryChecksum returns the checksum an engine keeps of an entry's JSON
// raw: the CRC-32C of the bytes, a number from 0 to 2^32-1.
func EntryChecksum(raw []byte) int64 { return int64(crc32.Checksum(raw, castagnoli())) }

// VerifyChecksum returns a *CorruptError naming entry id when raw is not
// the JSON that sum, the entry's stored checksum, was computed from, or
// when the entry has no checksum (sum NULL); nil when they agree.
func VerifyChecksum(id string, raw []byte, sum sql.NullInt64) error {
	if reason := ChecksumProblem(raw, sum.Int64, sum.Valid); reason != "" {
		return &CorruptError{EntryID: id, Reason: reason}
	}
	return nil
}

// ChecksumProblem says what is wrong with raw against its stored
// checksum sum (valid false: NULL), "" when nothing is. It is for a read
// that knows the entry's key but not yet its id; [VerifyChecksum] makes
// the error of one that knows it.
func ChecksumProblem(raw []byte, sum int64, valid bool) string {
	switch {
	case !valid:
		return "the stored JSON has no checksum"
	case EntryChecksum(raw) != sum:
		return fmt.Sprintf("the stored JSON does not match its checksum (%d bytes)", len(raw))
	}
	return ""
}

// HeaderChecksum returns the checksum an engine keeps of a session's
// header (SQLite's migration 25, PostgreSQL's migration 18): the
// CRC-32C of m's fields as the session's row holds them (id, version,
// timestamp, cwd, parent session, "" for none) in that order, each
// written as its length in decimal, a colon and its bytes, so that no
// two headers give the same bytes.
//
// The row's columns are the header: an export writes its first line from
// them (jsonl.HeaderLine), and the bytes of an imported file's header
// are not kept (an import writes that line anew). The engine computes the
// checksum once, from the header it stores when it creates the session;
// nothing changes a header afterwards (a name is an entry; a fork is a
// new session with a header of its own), so Check finds a column changed
// behind the engine's back instead of an export writing another header.
// The encoding is the checksum's own, not the header line's, so that a
// change in what an export writes leaves the stored sums right.
func HeaderChecksum(m SessionMeta) int64 {
	var buf [128]byte
	b := buf[:0]
	for _, f := range [...]string{m.ID, strconv.Itoa(m.Version), m.CreatedAt, m.Cwd, m.ParentSession} {
		b = strconv.AppendInt(b, int64(len(f)), 10)
		b = append(b, ':')
		b = append(b, f...)
	}
	return EntryChecksum(b)
}

// VerifyHeaderChecksum returns a *CorruptError when m, a session's
// header as its row holds it, is not the header whose [HeaderChecksum]
// sum is (or sum is NULL); nil when they agree.
func VerifyHeaderChecksum(m SessionMeta, sum sql.NullInt64) error {
	switch {
	case !sum.Valid:
		return &CorruptError{Reason: fmt.Sprintf("session %s: the header has no checksum", m.ID)}
	case HeaderChecksum(m) != sum.Int64:
		return &CorruptError{Reason: fmt.Sprintf("session %s: the header (id, version, timestamp, cwd, parent session) does not match its checksum", m.ID)}
	}
	return nil
}
