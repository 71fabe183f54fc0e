package pgengine

import (
	"cmp"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/sqltx"
)

// The common append (an ordinary entry under a leaf, by a writer without
// a claim) runs on pgx's own interface, not through database/sql, in one
// round trip when its Storage kept its row (rowcache.go): the entry built
// from that copy, then BEGIN, the row's lock that checks it is still
// that version (keptQuery), the entry's insert, the row's write-back and
// COMMIT in one pipelined batch (appendKept). Otherwise, or when that
// batch was refused, in two: BEGIN and the row lock (probeQuery); the
// insert, the write-back and COMMIT. It is the same transaction as the
// general path's, with the same statements and rules: the row lock, the
// IfLeaf guard (judged on the locked row only: a build that fails on the
// kept copy takes the two-round-trip way), the claim refusal (raised by
// the write-back, which aborts the transaction before its COMMIT), a
// taken generated id (the insert fails, the append is tried again), and
// the same retries. An entry that needs a look-up (a leaf, a label, a
// compaction, an entry under a leaf that is not the entry stored last,
// whose parent's children the tree's counts need: shape.go) takes the
// general path. In two round trips the row is
// locked by probeQuery and read, when the Storage does not hold its
// version, by lockQuery in a statement of its own (rowcache.go), whose
// snapshot sees a writer the lock waited for; the general path is still
// taken if lockQuery finds no leaf entry for a leaf the row names.

// errServerClosed is commitBatch's answer for a connection the server
// had closed before the batch was sent: a lost connection
// (driver.ErrBadConn, which the pool drops too), nothing sent.
var errServerClosed = fmt.Errorf("server closed the idle connection: %w", driver.ErrBadConn)

// errNotPiped is the pipelined path's answer for an append it leaves to
// the general path (nothing was written).
var errNotPiped = errors.New("append not pipelined")

// pipelines reports whether an append of d may take the pipelined path.
func (s *Storage) pipelines(d sessiontree.Draft) bool {
	switch d.Type {
	case sessiontree.TypeLeaf, sessiontree.TypeLabel, sessiontree.TypeCompaction:
		return false
	}
	return s.claim == nil
}

// appendAlone appends d in one or two round trips, or returns
// errNotPiped. A group's leader (leading) waits for no row lock: a row
// another transaction holds answers errAlone, and the append runs again
// once the lead is handed on (group.go).
func (s *Storage) appendAlone(ctx context.Context, d sessiontree.Draft, opts sessiontree.AppendOptions, leading bool) (sessiontree.Entry, error) {
	var out sessiontree.Entry
	err := s.db.retry(ctx, "append", func() error {
		c, err := s.db.db.Conn(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		return c.Raw(func(dc any) (err error) {
			out, err = s.appendOn(ctx, dc.(*stdlib.Conn).Conn(), d, opts, leading)
			return err
		})
	})
	return out, err
}

// appendOn is one attempt of appendAlone on conn: in one round trip
// from the row the Storage kept (appendKept), else in two.
func (s *Storage) appendOn(ctx context.Context, conn *pgx.Conn, d sessiontree.Draft, opts sessiontree.AppendOptions, leading bool) (sessiontree.Entry, error) {
	if e, err := s.appendKept(ctx, conn, d, opts); !errors.Is(err, errNotKept) {
		return e, err
	}
	st, err := s.lockOn(ctx, conn, leading)
	if err != nil {
		return sessiontree.Entry{}, err
	}
	e, w, err := st.pipedAppend(d, opts)
	if err != nil {
		return e, errors.Join(err, rollback(ctx, conn))
	}
	var b pgx.Batch
	return s.commitOn(ctx, conn, &b, d, e, w)
}

// appendKept appends d in one round trip, built from the row the
// Storage kept (buildKept): BEGIN, the lock that checks the row is still
// that version (keptLock), the write and COMMIT in one batch; errNotKept
// when it was not written that way (nothing was).
func (s *Storage) appendKept(ctx context.Context, conn *pgx.Conn, d sessiontree.Draft, opts sessiontree.AppendOptions) (sessiontree.Entry, error) {
	e, w, err := s.buildKept(d, opts)
	if err != nil {
		return e, err
	}
	var b pgx.Batch
	b.Queue("BEGIN")
	w.keptLock(&b)
	return s.commitOn(ctx, conn, &b, d, e, w)
}

// commitOn queues w's statements and COMMIT in b, after what b holds,
// sends it and keeps the row once committed. It returns e, built from d.
func (s *Storage) commitOn(ctx context.Context, conn *pgx.Conn, b *pgx.Batch, d sessiontree.Draft, e sessiontree.Entry, w *pipedWrite) (sessiontree.Entry, error) {
	for _, q := range w.statements() {
		b.Queue(q.sql, q.args...)
	}
	err := commitBatch(ctx, conn, b)
	if s.db.group.refused(ctx, conn, w, err) {
		return e, errNotKept
	}
	if err != nil {
		return e, w.st.idErr(d, e, w.st.commitErr(ctx, conn, err))
	}
	s.rows.keep(w.st)
	return e, nil
}

// lockOn begins the transaction on conn and locks the session's row,
// in one round trip, and returns the row: the one the Storage kept when
// the row is still that version, else read in another round trip
// (rowcache.go). A leader (leading) does not wait for the row: one
// another transaction holds, or a missing one, is errAlone.
func (s *Storage) lockOn(ctx context.Context, conn *pgx.Conn, leading bool) (*session, error) {
	var b pgx.Batch
	b.Queue("BEGIN")
	var p probe
	q := probeQuery
	if leading {
		q = probeFreeQuery
	}
	b.Queue(q, s.pk).QueryRow(p.scan)
	if err := runBatch(ctx, conn, &b); err != nil {
		if leading && errors.Is(err, pgx.ErrNoRows) {
			err = errAlone
		}
		return nil, errors.Join(s.lockErr(err), rollback(ctx, conn))
	}
	sts, err := lockedSessions(ctx, conn, []*Storage{s}, map[int64]probe{s.pk: p})
	if err == nil && sts[s.pk] == nil {
		err = pgx.ErrNoRows
	}
	if err != nil {
		return nil, errors.Join(s.lockErr(err), rollback(ctx, conn))
	}
	return sts[s.pk], nil
}

// statement is one statement of a batch, with its arguments.
type statement struct {
	sql  string
	args []any
}

// pipedWrite is what a pipelined append writes: its entry, placed at p
// under parent (nil: a root, whose session's branch is cleared first),
// and the session row's write-back.
type pipedWrite struct {
	st     *session
	e      sessiontree.Entry
	row    rowFacts
	p      placement
	parent *placement
	save   statement
	// kept is the version of the row it was built from when that was
	// the Storage's kept row (buildKept), checked by keptLock; zero when
	// it was built from the row locked.
	kept probe
}

// statements are w's statements, in order.
func (w *pipedWrite) statements() []statement {
	var out []statement
	if w.parent == nil {
		out = append(out, statement{clearBranch, []any{w.st.pk}}) // a root: moveBranch("")
	}
	return append(out, statement{insertEntry, w.st.insertArgs(w.e, w.row, w.p, w.parent)}, w.save)
}

// pipedAppend builds d under the locked leaf and returns the entry and
// what storing it writes; errNotPiped when the leaf's placement was not
// read, or when the leaf is not the entry stored last (the tree's counts
// then need a look-up: needsChildLookup).
func (st *session) pipedAppend(d sessiontree.Draft, opts sessiontree.AppendOptions) (sessiontree.Entry, *pipedWrite, error) {
	if err := sessiontree.CheckLeafGuard(opts, st.leafID.String); err != nil {
		return sessiontree.Entry{}, nil, err
	}
	if st.leaf == nil && st.leafID.Valid {
		return sessiontree.Entry{}, nil, errNotPiped
	}
	e, f, err := st.build(d)
	if err != nil {
		return e, nil, err
	}
	w := &pipedWrite{st: st, row: rowOf(&f), parent: st.leaf} // the branch's end, nil when the leaf is none
	// Neither the placement nor the note of an entry that is not a
	// compaction or a label reads the database.
	if w.p, err = st.place(context.Background(), nil, e, &f, w.parent); err != nil {
		return e, nil, err
	}
	// The tree's counts need no look-up under the entry stored last,
	// the parent of nearly every append; under another (the first
	// append after a move of the leaf) the general path looks it up.
	if needsChildLookup(e.Type, w.parent, w.p.Seq) {
		return e, nil, errNotPiped
	}
	if err := st.countEntry(context.Background(), nil, e.Type, w.parent, w.p.Seq); err != nil {
		return e, nil, err
	}
	e.Seq = w.p.Seq
	w.e = e
	st.setLeaf(e.ID, &w.p)
	if err := st.noteStats(context.Background(), nil, e, f.Stats); err != nil {
		return e, nil, err
	}
	q, args, err := st.saveStatement(context.Background(), nil)
	if err != nil {
		return e, nil, err
	}
	w.save = statement{q, args}
	return e, w, nil
}

// runBatch sends b and reads every result; the first error is returned.
func runBatch(ctx context.Context, conn *pgx.Conn, b *pgx.Batch) error {
	return conn.SendBatch(ctx, b).Close()
}

// commitBatch queues COMMIT after b's statements, sends b and reads
// every result, and says what came of the commit: nil once the COMMIT's
// reply arrived (the transaction committed, whatever the server or the
// connection did next: a FATAL error as the server is stopped right
// after it, a connection cut before the Sync's reply); the server's
// error when it refused a statement before the COMMIT, or the COMMIT
// with an ERROR (the transaction is aborted, not committed); the
// connection's error when nothing was sent, or when pgx's preparation of
// the batch's new statements failed (a Parse and a Describe each, which
// run nothing, sent before the batch: a connection dropped while idle
// in the pool fails there); else a CommitError, the
// outcome unknown: the connection failed after the batch was sent, or
// the server ended it (FATAL) as it ran the COMMIT. The server runs a
// batch's statements in order and answers each in turn, so an error that
// answers a statement before the COMMIT means the COMMIT never ran;
// but a connection exception (class 08) need not be the server's: a
// pooler between (PgBouncer's "server conn crashed?", 08P01) answers it
// in place of the replies it lost, however far the server got, so its
// outcome is unknown too.
//
// A connection the server closed while it was idle in the pool (a server
// restarted or crashed: no FATAL sent, and the pool pings a connection
// only after a second idle) would take the batch without an error, its
// bytes then dropped by the server's host, and fail at the reply: an
// unknown outcome, though the server never read the batch. So the
// server's close, when it is already there to read, is looked for first
// (closedByServer): the connection is then closed and errServerClosed,
// a lost connection with nothing sent, returned.
func commitBatch(ctx context.Context, conn *pgx.Conn, b *pgx.Batch) error {
	if closedByServer(conn.PgConn().Conn()) {
		_ = conn.Close(ctx)
		return errServerClosed
	}
	var reached, done bool
	b.Queue("COMMIT").Fn = func(br pgx.BatchResults) error {
		reached = true
		_, err := br.Exec()
		done = err == nil
		return err
	}
	err := runBatch(ctx, conn, b)
	var pg *pgconn.PgError
	var pre pgx.ErrPreprocessingBatch
	switch {
	case done || err == nil:
		return nil
	case errors.As(err, &pg) && !isConnectionException(pg) && (!reached || cmp.Or(pg.SeverityUnlocalized, pg.Severity) == "ERROR"):
		return err
	case !errors.As(err, &pg) && (pgconn.SafeToRetry(err) || errors.As(err, &pre)):
		return err
	}
	return &sqltx.CommitError{Err: err}
}

// commitErr is the error of a batch commitBatch did not commit: a
// CommitError as it is (never tried again), a failure to send as it is;
// a statement the server refused aborted the transaction, which is
// rolled back: a taken id, a claim's refusal, a serialization failure.
func (st *session) commitErr(ctx context.Context, conn *pgx.Conn, err error) error {
	var pg *pgconn.PgError
	if !errors.As(err, &pg) || isUnknownCommit(err) {
		return err
	}
	return errors.Join(st.saveErr(insertErr(err)), rollback(ctx, conn))
}

// isConnectionException reports whether pg is of class 08, connection
// exception.
func isConnectionException(pg *pgconn.PgError) bool { return strings.HasPrefix(pg.Code, "08") }

// isUnknownCommit reports whether err is a commit whose outcome is
// unknown (commitBatch, sqltx.Run).
func isUnknownCommit(err error) bool {
	var ce *sqltx.CommitError
	return errors.As(err, &ce)
}

// rollback ends conn's failed or unfinished transaction, even when ctx is
// done; a connection that cannot is closed, and the pool drops it.
func rollback(ctx context.Context, conn *pgx.Conn) error {
	ctx = context.WithoutCancel(ctx)
	if conn.PgConn().TxStatus() == 'I' || conn.IsClosed() {
		return nil
	}
	if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
		_ = conn.Close(ctx)
	}
	return nil
}
