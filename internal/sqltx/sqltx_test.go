package sqltx_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite"

	"github.com/sessiontree/sessiontree/internal/sqltx"
)

func TestRunCommitsOrRollsBack(t *testing.T) {
	ctx := context.Background()
	db, err := sqlx.Open("sqlite", filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE t (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
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
