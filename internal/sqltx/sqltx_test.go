package sqltx_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite"

	"github.com/sessiontree/sessiontree/internal/sqltx"
)

// newTable opens a new database holding table t, closed when the test
// ends.
func newTable(t *testing.T) *sqlx.DB {
	t.Helper()
	db, err := sqlx.Open("sqlite", filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE t (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestRunCommitsOrRollsBack(t *testing.T) {
	ctx := context.Background()
	db := newTable(t)
	insert := func(tx *sqlx.Tx) error { _, err := tx.Exec(`INSERT INTO t VALUES (1)`); return err }
	if err := sqltx.Run(ctx, db, nil, insert); err != nil {
		t.Fatal(err)
	}
	refused := errors.New("refused")
	if err := sqltx.Run(ctx, db, nil, func(tx *sqlx.Tx) error { _ = insert(tx); return refused }); !errors.Is(err, refused) {
		t.Errorf("Run = %v; want fn's error", err)
	}
	func() {
		defer func() { _ = recover() }()
		_ = sqltx.Run(ctx, db, nil, func(tx *sqlx.Tx) error { _ = insert(tx); panic("boom") })
	}()
	var n int
	if err := db.Get(&n, `SELECT count(*) FROM t`); err != nil || n != 1 {
		t.Errorf("rows = %d, %v; want 1: only the committed transaction's", n, err)
	}
}

// TestRunCancelledMidway cancels Run's context while fn runs, and waits
// until database/sql has rolled the transaction back (it does so on a
// goroutine of its own): fn's statements then fail with sql.ErrTxDone,
// and Run must answer the context's error, not that one (pgengine took
// it for a storage failure: 'resolve session: storage failure: sql:
// transaction has already been committed or rolled back'), and not a
// *CommitError either when fn returns nil: the outcome is known, nothing
// was committed.
func TestRunCancelledMidway(t *testing.T) {
	db := newTable(t)
	for _, returnErr := range []bool{true, false} {
		ctx, cancel := context.WithCancel(context.Background())
		err := sqltx.Run(ctx, db, nil, func(tx *sqlx.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO t VALUES (1)`); err != nil {
				return err
			}
			cancel()
			for {
				_, err := tx.ExecContext(context.Background(), `SELECT 1`)
				if errors.Is(err, sql.ErrTxDone) {
					if returnErr {
						return err
					}
					return nil
				}
				time.Sleep(time.Millisecond)
			}
		})
		var ce *sqltx.CommitError
		if !errors.Is(err, context.Canceled) || errors.As(err, &ce) {
			t.Errorf("Run with fn returning an error: %v = %v; want context.Canceled, no *CommitError", returnErr, err)
		}
	}
	var n int
	if err := db.Get(&n, `SELECT count(*) FROM t`); err != nil || n != 0 {
		t.Errorf("rows = %d, %v; want none", n, err)
	}
}

// TestEndedBy: once the context has ended, sql.ErrTxDone and the errors
// broke accepts are answered with the context's error; other errors, and
// any error while the context lives, are kept.
func TestEndedBy(t *testing.T) {
	broken := errors.New("bad connection")
	other := errors.New("syntax error")
	isBroken := func(err error) bool { return errors.Is(err, broken) }
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		ctx       context.Context
		err, want error
	}{
		{ended, sql.ErrTxDone, context.Canceled},
		{ended, broken, context.Canceled},
		{ended, other, other},
		{context.Background(), broken, broken},
		{context.Background(), sql.ErrTxDone, sql.ErrTxDone},
	} {
		if got := sqltx.EndedBy(tc.ctx, tc.err, isBroken); got != tc.want { //nolint:errorlint // the very value
			t.Errorf("EndedBy(ctx ended: %v, %v) = %v; want %v", tc.ctx.Err() != nil, tc.err, got, tc.want)
		}
	}
	if got := sqltx.Ended(ended, broken); got != broken { //nolint:errorlint // the very value
		t.Errorf("Ended(ended, %v) = %v; want it kept: Ended knows sql.ErrTxDone alone", broken, got)
	}
}
