package pgengine

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5"

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

// probeQuery locks session $1's row for the transaction, as lockQuery
// does, and reads its version and the transaction's id.
const probeQuery = `SELECT s.xmin, s.entry_count, txid_current() FROM sessions s WHERE s.pk = $1 AND NOT s.deleting FOR UPDATE OF s`

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
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.row == nil || c.xid != p.xmin || c.stats.Entries != p.entries {
		return nil
	}
	cp := *c.row
	cp.tally = sessiontree.ResumeTally(c.stats, c.buckets)
	return &cp
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
