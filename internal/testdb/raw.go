package testdb

import (
	"context"
	"fmt"
	"net/url"

	"github.com/jmoiron/sqlx"
)

// View runs fn in one read transaction on a connection of the test's own
// to the database file at path, as another process would open it, with
// the engine's SQL functions (see [EngineDriver]): for tests that read
// the engine's tables behind its back.
func View(ctx context.Context, path string, fn func(tx *sqlx.Tx) error) error {
	return run(ctx, path, false, fn)
}

// Update is [View] for a write transaction (BEGIN IMMEDIATE, waiting for
// the engine's writers), for tests that damage or rewrite tables by hand.
func Update(ctx context.Context, path string, fn func(tx *sqlx.Tx) error) error {
	return run(ctx, path, true, fn)
}

func run(ctx context.Context, path string, write bool, fn func(tx *sqlx.Tx) error) error {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "recursive_triggers(1)")
	if write {
		q.Set("_txlock", "immediate")
	}
	u := url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}
	db, err := sqlx.Open(EngineDriver(), u.String())
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin on %s: %w", path, err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
