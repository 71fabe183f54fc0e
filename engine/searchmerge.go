package engine

import (
	"database/sql"
	"errors"
	"strconv"
)

// The search index under deletes.
//
// Deleting a session removes its indexed entries from entries_fts
// (migration 7's trigger), and FTS5 records each as a delete marker in a
// new segment; the marker and the postings it cancels leave the index
// only when a merge writes the oldest segment. FTS5's automerge (16,
// migration 17) reaches the oldest segment after geometrically longer
// stretches, so under churn (sessions created, indexed and deleted, a
// few held at a time) the index held garbage in proportion to the
// deletes since its last full merge: a loop of create, 8 appends, index
// and delete, 30 sessions held (TestSearchIndexChurn), grew
// entries_fts_data to 4.0 MB over 2,000 cycles, for 240 entries, and the
// file to 1,198 pages, which it kept.
//
// So a delete counts the indexed entries it removed (an upper bound of
// the index's rows: not every entry has text), and when those counted
// since the last merge reach the rows the index holds, and at least
// mergeAfterRows, it starts a merge of every segment into one (FTS5's
// 'merge' with a negative page budget), in its transaction, writing at
// most mergePages pages: that merge drops the markers and what they
// cancel. The garbage is then bounded by the larger of the live rows and
// mergeAfterRows, whatever the number of deletes, and a merge rewrites
// at most twice the rows deleted since the one before, so its cost,
// spread over those deletes, is a few rows' worth each. An index larger
// than the budget is left mid-merge, which FTS5 carries on with the
// writes that follow (and the next such delete). Appends, imports and
// the index's catch-up do not count and never merge here.
//
// Measured (medians of 3 to 5 interleaved runs, CPU time, load 5-14 on
// 2 cores): BenchmarkAppend 57 against 59 µs and the store's catch-up
// (BenchmarkImport/generated-index) 10.23 against 10.25 MB/s of CPU,
// paths this does not touch; the churn cycle 1.50 against 1.47 ms
// (BenchmarkSearchIndexChurn: within the noise; the merges
// cost about what the smaller index saves); a delete 321 against 406 µs in BenchmarkDeleteIndexed,
// which deletes a whole store of 2,000 indexed sessions and so pays one
// merge of 16,000 entries in some 2,000 segments for every 1,000
// deletes: that one delete took 92 ms of wall time (load 2.5), the mean
// 0.37 ms.
//
// The count is the database's (the one row of search_merge, migration
// 29), added to by each delete in its own transaction and set to 0 by the
// merge in its: the deletes of every process count, the command line's
// one delete per process included, and a delete that rolls back counts
// nothing. Before, it was the DB's, in memory, and a process that
// deleted a session and exited never reached it. The count's one more
// statement per delete (an upsert of one row, RETURNING it) cost within
// the noise: BenchmarkDeleteIndexed at 2,000x, 5 interleaved runs each,
// load 8 to 11 on 2 cores, medians 519 against 511 µs of CPU and 971
// against 867 µs of wall time per delete, before against after (with a
// plain UPDATE, load 7: 516 against 544 µs of CPU).
const (
	mergeAfterRows = 1000
	mergePages     = 4096 // FTS5 pages of 4,050 bytes: 16 MB written at most
)

// qCountDeleted adds ?1 indexed entries deleted to the count since the
// index's last merge and returns the count (making the row if a restore
// or a hand lost it, rather than failing the delete); qMerged sets it
// to 0.
const (
	qCountDeleted = `INSERT INTO search_merge (id, deleted) VALUES (1, ?1)
	ON CONFLICT (id) DO UPDATE SET deleted = deleted + excluded.deleted RETURNING deleted`
	qMerged = `UPDATE search_merge SET deleted = 0`
)

// deletedFromIndex counts n indexed entries deleted in w's transaction
// and merges the index's segments when those counted since the last
// merge reach the rows it holds and mergeAfterRows (see mergeAfterRows).
func deletedFromIndex(w q, n int64) error {
	if n == 0 {
		return nil
	}
	var deleted int64
	if err := w.row(qCountDeleted, args(n), &deleted); err != nil {
		return err
	}
	if deleted < mergeAfterRows {
		return nil
	}
	live, err := indexRows(w)
	if err != nil {
		return err
	}
	if deleted < live {
		return nil
	}
	if _, err := w.exec(`INSERT INTO entries_fts (entries_fts, rank) VALUES ('merge', -` + strconv.Itoa(mergePages) + `)`); err != nil {
		return err
	}
	_, err = w.exec(qMerged)
	return err
}

// indexRows reads how many rows the search index holds: the first
// varint of FTS5's averages record (entries_fts_data id 1), which every
// insert and delete keeps, one row read instead of a count.
func indexRows(w q) (int64, error) {
	var rec []byte
	err := w.row(`SELECT block FROM entries_fts_data WHERE id = 1`, nil, &rec)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, ok := varint(rec)
	if !ok {
		return 0, nil
	}
	return int64(n), nil
}
