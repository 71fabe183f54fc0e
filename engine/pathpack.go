package engine

import (
	"bytes"
	"database/sql"
	"strconv"
	"strings"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sessiontree/sessiontree"
)

// Reading the active path a chunk of rows per statement.
//
// Reading an entry as a row costs, besides SQLite's step, a call into the
// driver per column (each taking the connection's mutex) and a Go
// allocation per value: for a path of 10,000 entries the allocations
// alone make the garbage collector a third of the read. So the path is
// read packRows branch rows at a time as one row of aggregates, in the
// branch's depth order: the keys, and the JSON texts joined by a record
// separator (0x1E, which valid JSON never holds unescaped) as one blob.
// Each entry's JSON is then a slice of the chunk's blob, and its common
// fields are read from the JSON's start (canonical.go): a chunk holding a
// row that is not canonical is read row by row. A JSON text longer than
// packedMaxRaw is left out of the blob, an empty record, and read as a
// row of its own (qBranchBig).
//
// What it buys, measured against the row read and the plain read in one
// run (BenchmarkReadPathAB, CPU per operation, median of 8; issue 14):
//
//	                        packed   rows (canonical)  plain columns  database/sql plain
//	active path, 10,000     16.7ms       20.6ms           32.6ms          38.3ms
//	context,     10,000     21.6ms       26.1ms           41.2ms          39.8ms
//	active path, 100,000     228ms        326ms            332ms           359ms
//	context,     100,000     303ms        412ms            599ms           542ms
//
// (database/sql from an earlier run of the same benchmark, count 6.) A
// compacted path of 200 entries is one chunk either way: within noise.
//
// The JSON texts are checked against their checksums through one more
// aggregate, the sum of the chunk's checksums (a missing one counted as
// -1, which no checksum is), against the sum of the checksums of the
// slices: one damaged entry changes it. (A list of the checksums, one
// number per row to format and parse, cost more than twice as much.)
//
// The split is checked (as many separators as rows, less one, in each
// column, and each entry the child of the one before it); when it does not
// hold, as with a JSON text holding the separator, or when the chunk is
// too big for one SQLite value, the chunk is read row by row instead. So
// is a chunk whose sum of checksums is not its JSON texts': the row read,
// which checks each entry's, reports the entry.

// packRows is how many branch rows one packed read takes: enough to make
// the statement's own cost small, few enough that the chunk's blob stays
// small next to the path (it is held twice while it is read).
const packRows = 256

const recordSeparator = 0x1e

// qBranchPacked reads the branch rows of session ?1 at depths ?2..?3; the
// last column counts the canonical rows among them.
// A JSON text longer than ?4 bytes is left out of the blob (an empty
// record), for qBranchBig to read.
const qBranchPacked = `SELECT count(*), group_concat(e.pk),
       CAST(group_concat(CASE WHEN octet_length(e.raw) <= ?4 THEN e.raw ELSE '' END, char(30)) AS BLOB),
       coalesce(sum(coalesce(e.checksum, -1)), 0), count(e.canonical)
FROM branch b JOIN entries e ON e.pk = b.entry
WHERE b.session = ?1 AND b.depth BETWEEN ?2 AND ?3`

// qBranchBig reads the JSON texts qBranchPacked leaves out, in depth
// order.
const qBranchBig = `SELECT CAST(e.raw AS BLOB)
FROM branch b JOIN entries e ON e.pk = b.entry
WHERE b.session = ?1 AND b.depth BETWEEN ?2 AND ?3 AND octet_length(e.raw) > ?4
ORDER BY b.depth`

// packedMaxRaw is the longest JSON text a packed read puts in its blob.
// A longer one (an inline image, a large tool output) costs little read
// as a row of its own, while in the blob SQLite copies it as the blob
// grows and the chunk holds it twice: the resume of a session of inline
// images took twice as long packed, and 5 MiB more memory.
const packedMaxRaw = 16 << 10

// branchRange appends the entries of the branch rows lo..hi to out.
func (r q) branchRange(out []sessiontree.Entry, session, lo, hi int64) ([]sessiontree.Entry, error) {
	for a := lo; a <= hi; a += packRows {
		b := min(a+packRows-1, hi)
		before := len(out)
		var ok bool
		var err error
		if out, ok, err = r.packedBranch(out, session, a, b); err != nil {
			return nil, err
		}
		if !ok {
			if out, err = r.appendEntries(out[:before], qBranchRange, session, a, b); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// packedBranch appends the entries of the branch rows lo..hi to out, read
// packed; false: read them row by row instead (out may hold part of them).
func (r q) packedBranch(out []sessiontree.Entry, session, lo, hi int64) ([]sessiontree.Entry, bool, error) {
	var n, sum, canonical int64
	var keyList sql.NullString // NULL when there is no row
	var raws []byte
	chunk := args(session, lo, hi, packedMaxRaw) // qBranchPacked's and qBranchBig's
	if err := r.row(qBranchPacked, chunk, &n, &keyList, &raws, &sum, &canonical); err != nil {
		if sqliteCode(err) == sqlite3.SQLITE_TOOBIG {
			return out, false, nil
		}
		return nil, false, err
	}
	keys := keyList.String
	if n != hi-lo+1 || canonical != n || strings.Count(keys, ",") != int(n-1) ||
		bytes.Count(raws, []byte{recordSeparator}) != int(n-1) {
		// A gap (the row query reports it), a row that is not canonical,
		// or a separator inside a value.
		return out, false, nil
	}
	start := len(out)
	big := bigTexts{r: r, args: chunk}
	defer big.close()
	for range n {
		var key string
		var raw []byte
		key, keys, _ = strings.Cut(keys, ",")
		if j := bytes.IndexByte(raws, recordSeparator); j >= 0 {
			raw, raws = raws[:j:j], raws[j+1:]
		} else {
			raw, raws = raws, nil
		}
		pk, err := strconv.ParseInt(key, 10, 64)
		if err != nil {
			return out, false, nil
		}
		if len(raw) == 0 { // left out for its size
			if raw, err = big.next(); err != nil || raw == nil {
				return out, false, err
			}
		}
		sum -= sessiontree.EntryChecksum(raw)
		e, err := scanFields(pk, raw, true)
		if err != nil || len(out) > start && e.ParentID != out[len(out)-1].ID {
			return out, false, nil // the row query tells what is wrong
		}
		out = append(out, e)
	}
	if sum != 0 {
		return out, false, nil // the row query reports the entry
	}
	return out, true, nil
}

// bigTexts reads, in depth order, the JSON texts a packed read of a
// chunk left out for their size (qBranchBig), from the first one met.
type bigTexts struct {
	r    q
	args []any
	rows *rows
}

// next returns the next text; nil when there is none.
func (b *bigTexts) next() ([]byte, error) {
	if b.rows == nil {
		rs, err := b.r.rows(qBranchBig, b.args...)
		if err != nil {
			return nil, err
		}
		b.rows = rs
	}
	if !b.rows.Next() {
		return nil, b.rows.Err()
	}
	raw, _ := b.rows.dest[0].([]byte)
	return raw, nil
}

func (b *bigTexts) close() {
	if b.rows != nil {
		b.rows.Close()
	}
}
