package engine

import (
	"database/sql"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"sort"

	"github.com/sessiontree/sessiontree"
)

// A session's rows through each index.
//
// SQLite's integrity_check compares every index with its table, for the
// whole database. A session's check compares the session's rows only:
// for each index of its tables, the rows read from the table and the same
// rows read through the index (INDEXED BY: the index's columns and the
// row's key) must be the same set. Each side is summed into a digest (the count of rows
// and the sum of a hash of each row's columns), so a row missing from the
// index, one it holds too many, or an index entry whose columns differ
// from its row's is found, without sorting either side. The entries rows
// from the table are those the replay read (by key range); the session
// row is read again, NOT INDEXED. The usage_days rows, whose table is its
// primary key, are looked up by it, for each day and bucket the replay
// gives, and compared with the rows read through usage_days_by_session
// (which the replay's comparison reads).

// entryIndex is an index of entries: the session's rows through it (?1
// and ?2 are the session's key range, ?3 its key), and the same columns
// of a row the replay read, false when the index leaves the row out.
type entryIndex struct {
	name, through string
	cols          func(b []byte, w *checkRow) ([]byte, bool)
}

// entryIndexCount is how many indexes entries has (schema.sql).
const entryIndexCount = 4

var entryIndexes = [entryIndexCount]entryIndex{
	{"sqlite_autoindex_entries_1",
		`SELECT session, id, pk FROM entries INDEXED BY sqlite_autoindex_entries_1 WHERE session = ?3`,
		func(b []byte, w *checkRow) ([]byte, bool) {
			return appendValues(b, w.session, w.c.e.ID, w.c.node.pk), true
		}},
	{"entries_by_parent",
		`SELECT parent_pk, pk FROM entries INDEXED BY entries_by_parent WHERE parent_pk BETWEEN ?1 AND ?2 AND parent_pk <> pk - 1`,
		func(b []byte, w *checkRow) ([]byte, bool) {
			in := w.parentPK.Valid && w.parentPK.Int64 != w.c.node.pk-1
			return appendValues(b, w.parentPK.Int64, w.c.node.pk), in
		}},
	{"entries_roots",
		`SELECT session, pk FROM entries INDEXED BY entries_roots WHERE session = ?3 AND parent_pk IS NULL`,
		func(b []byte, w *checkRow) ([]byte, bool) {
			return appendValues(b, w.session, w.c.node.pk), !w.parentPK.Valid
		}},
	{"entries_by_type",
		`SELECT session, type, pk FROM entries INDEXED BY entries_by_type WHERE session = ?3 AND type <> 'message'`,
		func(b []byte, w *checkRow) ([]byte, bool) {
			return appendValues(b, w.session, string(w.c.e.Type), w.c.node.pk), w.c.e.Type != sessiontree.TypeMessage
		}},
}

// entryDigests are the digests of a session's entries rows as each entry
// index holds them.
type entryDigests [entryIndexCount]rowDigest

// indexHashes sets the hash of the row's columns in each entry index,
// and whether the index holds it.
func (w *checkRow) indexHashes() {
	var b []byte
	for i, x := range entryIndexes {
		b, w.inIndex[i] = x.cols(b[:0], w)
		w.indexHash[i] = rowHash(b)
	}
}

// add adds a row the replay read.
func (d *entryDigests) add(w *checkRow) {
	for i := range d {
		if w.inIndex[i] {
			d[i].n++
			d[i].sum += w.indexHash[i]
		}
	}
}

// indexPair is an index of the sessions table: the session's row from
// the table and through the index (?3 is the session's key).
type indexPair struct {
	index, table, through string
}

var sessionIndexes = []indexPair{
	{"sqlite_autoindex_sessions_1",
		`SELECT id, pk FROM sessions NOT INDEXED WHERE pk = ?3`,
		`SELECT id, pk FROM sessions INDEXED BY sqlite_autoindex_sessions_1
WHERE id = (SELECT id FROM sessions NOT INDEXED WHERE pk = ?3) AND pk = ?3`},
	{"sessions_by_cwd",
		`SELECT cwd, pk FROM sessions NOT INDEXED WHERE pk = ?3`,
		`SELECT cwd, pk FROM sessions INDEXED BY sessions_by_cwd
WHERE cwd = (SELECT cwd FROM sessions NOT INDEXED WHERE pk = ?3) AND pk = ?3`},
}

// qUsageDayByKey reads one usage_days row by its primary key.
const qUsageDayByKey = `SELECT input, output, cache_read, cache_write, cost FROM usage_days
WHERE day = ?1 AND session = ?2 AND bucket = ?3`

// rowDigest sums a set of rows: how many, and the sum of a hash of each.
type rowDigest struct {
	n   int64
	sum uint64
}

// digest reads a query's rows into a digest.
func digest(r q, query string, a ...any) (rowDigest, error) {
	var d rowDigest
	rows, err := r.rows(query, a...)
	if err != nil {
		return d, err
	}
	defer rows.Close()
	vals := make([]any, len(rows.dest))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var buf []byte
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return d, err
		}
		buf = appendValues(buf[:0], vals...)
		d.n++
		d.sum += rowHash(buf)
	}
	return d, rows.Err()
}

// appendValues appends columns' values, each tagged with its type and
// length so that no two rows' columns run together alike.
func appendValues(b []byte, vals ...any) []byte {
	for _, v := range vals {
		switch x := v.(type) {
		case nil:
			b = append(b, 'n')
		case int64:
			b = binary.AppendVarint(append(b, 'i'), x)
		case string:
			b = append(binary.AppendUvarint(append(b, 's'), uint64(len(x))), x...)
		case []byte:
			b = append(binary.AppendUvarint(append(b, 'b'), uint64(len(x))), x...)
		default:
			b = fmt.Appendf(append(b, 'f'), "%v;", v)
		}
	}
	return b
}

// digestSeed seeds the rows' hashes. Both sides of a comparison are
// summed in one process, so any seed does.
var digestSeed = maphash.MakeSeed()

// rowHash is the hash of a row's columns as appendValues wrote them.
func rowHash(b []byte) uint64 { return maphash.Bytes(digestSeed, b) }

// checkIndexes compares the rows of the session rp replayed in each of
// its tables with the same rows through each index.
func checkIndexes(r q, rp *replayed) error {
	lo, hi := pkRange(rp.pk)
	disagree := func(index string, table, through rowDigest) error {
		return &sessiontree.CorruptError{Reason: fmt.Sprintf(
			"index %s disagrees with its table: %d rows of the session through it, %d in the table, or their columns differ",
			index, through.n, table.n)}
	}
	for i, x := range entryIndexes {
		through, err := digest(r, x.through, lo, hi, rp.pk)
		if err != nil {
			return err
		}
		if through != rp.indexes[i] {
			return disagree(x.name, rp.indexes[i], through)
		}
	}
	for _, p := range sessionIndexes {
		table, err := digest(r, p.table, lo, hi, rp.pk)
		if err != nil {
			return err
		}
		through, err := digest(r, p.through, lo, hi, rp.pk)
		if err != nil {
			return err
		}
		if table != through {
			return disagree(p.index, table, through)
		}
	}
	return checkUsageDayKeys(r, rp)
}

// checkUsageDayKeys looks up each day and bucket of the replay's usage in
// usage_days by its primary key: the replay's comparison read them
// through usage_days_by_session.
func checkUsageDayKeys(r q, rp *replayed) error {
	keys := make([]sessiontree.UsageDayKey, 0, len(rp.days))
	for k := range rp.days {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].Day < keys[j].Day || keys[i].Day == keys[j].Day && keys[i].Bucket < keys[j].Bucket
	})
	for _, k := range keys {
		var u sessiontree.Usage
		err := r.row(qUsageDayByKey, args(k.Day, rp.pk, k.Bucket), &u.Input, &u.Output, &u.CacheRead, &u.CacheWrite, &u.Cost)
		if err == sql.ErrNoRows || err == nil && u != rp.days[k] {
			return &sessiontree.CorruptError{Reason: fmt.Sprintf(
				"usage_days by its key: %s %s is not the row read through usage_days_by_session", k.Day, k.Bucket)}
		}
		if err != nil {
			return err
		}
	}
	return nil
}
