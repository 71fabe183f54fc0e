package pgengine

import (
	"context"
	"errors"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sessiontree/sessiontree"
)

// The pipelined appends (pipe.go, group.go) lock their session's row
// with probeQuery, which reads only the row's version (xmin, the
// transaction that wrote it) and the locking transaction's id, not the
// row's 22 columns and its leaf's entry. Each Storage keeps the row as
// its last pipelined write committed it, with that write's transaction
// id (rowCache): when the locked row is still that version, nobody has
// written the session since, and the copy is the row. Any other version
// (another process's write, a write through the general path, a watch's
// registration, a rolled-back write's row never kept) is read in one
// more round trip, under the lock already held, with lockQuery. A
// Storage writing its session alone therefore reads two numbers per
// append instead of the row and its leaf's entry (the row's 22 columns
// took 10% of a writer's CPU to scan, its buckets' JSON 5% to parse):
// 16 writers, steady state, CPU per append 123 -> 114 µs client, 165 ->
// 160 µs server (bench/README.md). The ids are
// compared on their low 32 bits, as xmin holds them, and the row's entry
// count with the kept row's: a false match would need another
// transaction with the same 32 bits, four billion transactions later, to
// leave the row with as many entries as the Storage last wrote.
//
// A pipelined append (pipe.go) or a group whose members all kept their
// rows (group.go) goes further: it builds its entries from the copies
// before locking anything (buildKept) and locks each row with keptQuery
// in the batch that writes and commits, which aborts the transaction when
// the row is not the version kept (migration 10) or is locked by another
// transaction (NOWAIT: the batch never waits for a row, so its locks need
// no order); the write then runs again from the rows locked (errNotKept).

// probeQuery locks session $1's row for the transaction, as lockQuery
// does, and reads its version and the transaction's id.
const probeQuery = `SELECT s.xmin, s.entry_count, txid_current() FROM sessions s WHERE s.pk = $1 AND NOT s.deleting FOR UPDATE OF s`

// probeFreeQuery is probeQuery for a group's leader, which waits for no
// row (group.go): a row another transaction holds is skipped, as a
// missing one is (no row).
const probeFreeQuery = probeQuery + ` SKIP LOCKED`

// probe is a row locked by probeQuery.
type probe struct {
	xmin    uint32 // the row's version
	entries int64  // the row's entry count
	txid    int64  // the locking transaction's id
}

// scan is probeQuery's row scanner.
func (p *probe) scan(row pgx.Row) error { return row.Scan(&p.xmin, &p.entries, &p.txid) }

// rowCache is a Storage's copy of its session's row as its last
// pipelined write committed it. Safe for concurrent use (mu guards the
// fields).
type rowCache struct {
	mu  sync.Mutex
	xid uint32   // the transaction that wrote row; 0 for none
	row *session // never changed once kept; its tally is in stats, buckets
	// stats and buckets are the row's tally, resumed in each copy.
	stats   sessiontree.Stats
	buckets []sessiontree.UsageBucket
}

// get returns a copy of the kept row to write when the locked row p is
// the version kept, else nil.
func (c *rowCache) get(p probe) *session {
	st, v := c.current()
	if st == nil || v.xmin != p.xmin || v.entries != p.entries {
		return nil
	}
	return st
}

// current returns a copy of the kept row and its version (xmin and
// entry count), nil when none is kept.
func (c *rowCache) current() (*session, probe) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.row == nil {
		return nil, probe{}
	}
	cp := *c.row
	cp.tally = sessiontree.ResumeTally(c.stats, c.buckets)
	return &cp, probe{xmin: c.xid, entries: c.stats.Entries}
}

// keep keeps st, written by a transaction that committed; the caller
// no longer uses st.
func (c *rowCache) keep(st *session) {
	stats, buckets := st.tally.Stats(), st.tally.Buckets()
	st.tally, st.usage = sessiontree.Tally{}, usageAdds{}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.xid, c.row, c.stats, c.buckets = uint32(st.txid), st, stats, buckets
}

// lockedSessions are the sessions of rows ss locked with the probes ps
// (a Storage whose row is missing has none): each Storage's kept row
// where it is the version locked, the others read with lockQuery in one
// round trip on conn.
func lockedSessions(ctx context.Context, conn *pgx.Conn, ss []*Storage, ps map[int64]probe) (map[int64]*session, error) {
	out := make(map[int64]*session, len(ss))
	read := make(map[int64]*lockRow)
	var b pgx.Batch
	for _, s := range ss {
		p, ok := ps[s.pk]
		if !ok {
			continue
		}
		if st := s.rows.get(p); st != nil {
			st.txid = p.txid
			out[s.pk] = st
			continue
		}
		b.Queue(lockQuery, s.pk).Query(func(rows pgx.Rows) error {
			got, err := pgx.CollectRows(rows, pgx.RowToAddrOfStructByName[lockRow])
			if len(got) == 1 {
				read[s.pk] = got[0]
			}
			return err
		})
	}
	if b.Len() > 0 {
		if err := runBatch(ctx, conn, &b); err != nil {
			return nil, err
		}
	}
	for _, s := range ss {
		if r, ok := read[s.pk]; ok {
			st, err := s.sessionOf(r)
			if err != nil {
				return nil, err
			}
			st.txid = ps[s.pk].txid
			out[s.pk] = st
		}
	}
	return out, nil
}

// keptQuery locks session $1's row, as probeQuery does but without
// waiting for another transaction's lock (NOWAIT), when the row is the
// version $2 (xmin), $3 (entry count), and reads the transaction's id;
// any other version, a missing row (refuse_stale_row, migration 10:
// codeStaleRow) or a row locked by another transaction
// (codeLockNotAvailable) aborts the transaction.
const keptQuery = `SELECT CASE WHEN (SELECT s.xmin = $2::xid AND s.entry_count = $3 FROM sessions s
	WHERE s.pk = $1 AND NOT s.deleting FOR UPDATE OF s NOWAIT) THEN txid_current() ELSE refuse_stale_row($1) END`

// codeStaleRow is the error refuse_stale_row raises (migration 10).
const codeStaleRow = "ST002"

// errNotKept is the answer of a write from a kept row that was not
// written (nothing was): none is kept, the build failed on the copy, or
// the locked row was not the copy's version. The write runs again from
// the row read under its lock.
var errNotKept = errors.New("the kept row is not the session's")

// buildKept builds d, before any lock, on a copy of the row s kept, and
// returns the entry and what storing it writes, to be sent after
// keptLock; errNotKept when s keeps no row or the build fails on it (a
// guard, a leaf not read): the copy may be stale, so the row read under
// the lock answers.
func (s *Storage) buildKept(d sessiontree.Draft, opts sessiontree.AppendOptions) (sessiontree.Entry, *pipedWrite, error) {
	st, v := s.rows.current()
	if st == nil {
		return sessiontree.Entry{}, nil, errNotKept
	}
	e, w, err := st.pipedAppend(d, opts)
	if err != nil {
		return sessiontree.Entry{}, nil, errNotKept
	}
	w.kept = v
	return e, w, nil
}

// keptLock queues in b the lock of the row w was built from (buildKept),
// which aborts the transaction unless the row is still that version, and
// sets w's transaction id.
func (w *pipedWrite) keptLock(b *pgx.Batch) {
	b.Queue(keptQuery, w.st.pk, w.kept.xmin, w.kept.entries).QueryRow(func(row pgx.Row) error {
		return row.Scan(&w.st.txid)
	})
}

// refused reports whether err, the error of a batch of writes among them
// w, refused writes built from kept rows (buildKept): a row was not its
// copy's version, or was locked by another transaction. The transaction
// is then rolled back (nothing was written). It counts the batch in g
// (kept: committed, stale: refused) when w was built from a kept row.
func (g *groupCommit) refused(ctx context.Context, conn *pgx.Conn, w *pipedWrite, err error) bool {
	if w.kept == (probe{}) {
		return false
	}
	var pg *pgconn.PgError
	switch {
	case err == nil:
		g.kept.Add(1)
	case errors.As(err, &pg) && (pg.Code == codeStaleRow || pg.Code == codeLockNotAvailable):
		g.stale.Add(1)
		_ = rollback(ctx, conn)
		return true
	}
	return false
}
