package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/pgengine"
)

// pgFleetCase is the fleet workload on PostgreSQL: ds.Size writers, each
// appending to a session of its own in one database, through a pool with
// a connection per writer. The sessions are deleted when the case ends.
func pgFleetCase(r *runner, ds *dataset) benchCase {
	g, each := ds.Size, fleetPerWriter(ds.Size)
	return benchCase{backend: backendPostgres, setup: func(ctx context.Context) (*prepared, error) {
		if r.pgURL == "" {
			return nil, errUnsupported
		}
		db, err := pgengine.Open(ctx, r.pgURL, pgengine.Options{MaxConns: g})
		if err != nil {
			return nil, err
		}
		writers, done, err := pgWriters(ctx, db, g)
		if err != nil {
			return nil, err
		}
		return &prepared{rows: g * each, close: done, note: fmt.Sprintf("%d appends by each writer", each),
			op: func(ctx context.Context) error { return runWriters(ctx, writers, each, ds.Appends) }}, nil
	}}
}

// pgWriters creates g sessions in db, one per writer, and returns them
// with a function deleting them and closing db.
func pgWriters(ctx context.Context, db *pgengine.DB, g int) ([]*sessiontree.Session, func() error, error) {
	var ids []string
	done := func() error {
		var errs []error
		for _, id := range ids {
			errs = append(errs, db.DeleteSession(context.Background(), id, sessiontree.DeleteOptions{Force: true}))
		}
		return errors.Join(append(errs, db.Close())...)
	}
	writers := make([]*sessiontree.Session, g)
	for i := range writers {
		st, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: benchCwd})
		if err != nil {
			return nil, nil, errors.Join(err, done())
		}
		ids = append(ids, st.ID())
		writers[i] = sessiontree.NewSession(st, sessiontree.SessionOptions{})
	}
	return writers, done, nil
}
