package engine

import (
	"database/sql"
	"runtime"
	"sync"

	"github.com/sessiontree/sessiontree"
)

// Reading a session's rows for its check.
//
// What the check derives from one row alone (its checksum, its JSON
// decoded and compared with the columns, the facts an append computes,
// its search text) is most of its work, and independent of the other
// rows; the replay (parents, placement, counters) must follow the log in
// order. So one goroutine reads the rows, in chunks of checkChunkRows,
// workers (one per processor) derive each chunk's rows, and the caller
// replays the chunks in order as they are done: a 100,000-entry session's
// check costs about its replay's time rather than the sum.

// checkChunkRows is how many rows a worker of the check derives at once.
const checkChunkRows = 256

// checkRow is one entries row as the check reads it, and what a worker
// derives from it alone.
type checkRow struct {
	c                              checked // columns, and the placement as stored
	parentID, target, custom, role sql.NullString
	parentPK                       sql.NullInt64
	session                        int64
	raw                            []byte
	canonical                      bool
	sum                            sql.NullInt64

	dec sessiontree.Entry // the stored JSON decoded
	f   facts
	// hasText: it has search text (asked for only).
	hasText bool
	// indexHash is the hash of the row's columns in each entry index,
	// inIndex whether the index holds the row (see entryIndexes).
	indexHash [entryIndexCount]uint64
	inIndex   [entryIndexCount]bool
	// err is the first problem of the row alone.
	err error
}

// rowChunk is a chunk of rows; done is closed once they are derived.
type rowChunk struct {
	rows []checkRow
	done chan struct{}
}

// scan reads the current row.
func (w *checkRow) scan(rows *rows) error {
	var typ string
	e, n := &w.c.e, &w.c.node
	err := rows.Scan(&n.pk, &w.session, &e.Seq, &e.ID, &w.parentID, &w.parentPK, &typ, &e.Timestamp, &n.depth, &n.start,
		&n.thinking, &n.model, &n.tools, &w.target, &w.custom, &w.role, &w.raw, &w.canonical, &w.sum)
	e.Type, e.ParentID = sessiontree.EntryType(typ), w.parentID.String
	return err
}

// derive checks what can be checked of the row alone: its JSON against
// its checksum, the columns against the JSON, the canonical mark; and
// computes its facts, and with withText whether it has search text.
func (w *checkRow) derive(withText bool) {
	e := &w.c.e
	if err := sessiontree.VerifyChecksum(e.ID, w.raw, w.sum); err != nil {
		w.err = err
		return
	}
	dec, err := sessiontree.DecodeEntryOwned(w.raw)
	if err != nil {
		w.err = corruptEntry(e.ID, "stored JSON: %v", err)
		return
	}
	if dec.Type != e.Type || dec.ID != e.ID || dec.ParentID != e.ParentID || dec.Timestamp != e.Timestamp {
		w.err = corruptEntry(e.ID, "columns disagree with the stored JSON")
		return
	}
	if w.canonical {
		e.Raw = w.raw
		ok := isCanonical(*e)
		e.Raw = nil
		if !ok {
			w.err = corruptEntry(e.ID, "marked canonical, but the stored JSON does not start with the columns")
			return
		}
	}
	dec.Seq = e.Seq
	w.f = factsOf(dec)
	if w.target.String != w.f.Target || w.custom.String != w.f.customType || w.role.String != w.f.role {
		w.err = corruptEntry(e.ID, "indexed columns disagree with the stored JSON")
		return
	}
	w.dec = dec
	w.indexHashes()
	if withText {
		var err error
		if w.hasText, err = sessiontree.HasSearchText(string(e.Type), w.raw); err != nil {
			w.err = corruptEntry(e.ID, "search text: %v", err)
		}
	}
}

// eachCheckRow calls fn with each row of keys lo..hi in key order,
// derived (see derive), until fn returns an error.
func eachCheckRow(r q, lo, hi int64, withText bool, fn func(*checkRow) error) error {
	rows, err := r.rows(qCheckEntries, lo, hi)
	if err != nil {
		return err
	}
	defer rows.Close()
	workers := max(runtime.GOMAXPROCS(0), 1)
	work := make(chan *rowChunk, workers)
	ordered := make(chan *rowChunk, 2*workers)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var scanErr error
	wg.Go(func() { scanErr = readChunks(rows, work, ordered, stop) })
	for range workers {
		wg.Go(func() {
			for ch := range work {
				for i := range ch.rows {
					ch.rows[i].derive(withText)
				}
				close(ch.done)
			}
		})
	}
	err = replayChunks(ordered, fn)
	close(stop)
	wg.Wait() // the reader has let go of rows before they close
	if err != nil {
		return err
	}
	if scanErr != nil {
		return scanErr
	}
	return rows.Err()
}

// readChunks reads rows in chunks, handing each to the workers and then,
// in order, to the replay, until the rows end or stop closes.
func readChunks(rows *rows, work, ordered chan<- *rowChunk, stop <-chan struct{}) error {
	defer close(ordered)
	defer close(work)
	for {
		ch := &rowChunk{rows: make([]checkRow, 0, checkChunkRows), done: make(chan struct{})}
		for len(ch.rows) < checkChunkRows && rows.Next() {
			ch.rows = append(ch.rows, checkRow{})
			if err := ch.rows[len(ch.rows)-1].scan(rows); err != nil {
				return err
			}
		}
		if len(ch.rows) == 0 {
			return nil
		}
		for _, c := range []chan<- *rowChunk{work, ordered} {
			select {
			case c <- ch:
			case <-stop:
				return nil
			}
		}
		if len(ch.rows) < checkChunkRows {
			return nil
		}
	}
}

// replayChunks calls fn with the rows of each chunk, in order, once the
// chunk is derived.
func replayChunks(ordered <-chan *rowChunk, fn func(*checkRow) error) error {
	for ch := range ordered {
		<-ch.done
		for i := range ch.rows {
			if err := fn(&ch.rows[i]); err != nil {
				return err
			}
		}
	}
	return nil
}
