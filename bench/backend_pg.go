package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/pgengine"
)

// backendPostgres is the PostgreSQL engine (package pgengine) over
// loopback, measured when -pg names a server.
const backendPostgres = "postgres"

// pgAuto is the -pg value that starts a throwaway cluster (internal/pgtest)
// for the run.
const pgAuto = "auto"

// startPostgres resolves Options.PG to a server URL: "auto" starts a
// throwaway cluster, whose stop function the caller defers; any other
// value is the URL of a server the run may create sessions on.
func startPostgres(ctx context.Context, pg string) (url string, stop func() error, err error) {
	if pg != pgAuto {
		return pg, func() error { return nil }, nil
	}
	c, err := pgtest.Start(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("-pg auto: %w", err)
	}
	return c.URL, c.Stop, nil
}

// pgServerNote says, for the report's notes, what server the postgres
// rows ran on and the settings that decide what its commits cost and
// keep: fsync, synchronous_commit and full_page_writes (-pg auto's
// throwaway cluster turns all three off; the SQLite rows always sync
// their log, at checkpoints under synchronous=NORMAL).
func pgServerNote(ctx context.Context, url, what string) (string, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return "", fmt.Errorf("postgres settings: %w", err)
	}
	defer conn.Close(context.Background())
	var version, fsync, syncCommit, fullPages string
	if err := conn.QueryRow(ctx, `SELECT current_setting('server_version'), current_setting('fsync'),
	current_setting('synchronous_commit'), current_setting('full_page_writes')`).Scan(&version, &fsync, &syncCommit, &fullPages); err != nil {
		return "", fmt.Errorf("postgres settings: %w", err)
	}
	return fmt.Sprintf("The postgres rows ran on PostgreSQL %s (%s, over loopback) with fsync=%s, synchronous_commit=%s, full_page_writes=%s.",
		version, what, fsync, syncCommit, fullPages), nil
}

// pgBackend is the PostgreSQL engine on the server at url. Like the SQLite
// engine's rows, the database is opened once per dataset and the workloads
// open sessions in it. Every session it creates it deletes again, so a
// run leaves a shared server as it found it.
type pgBackend struct{ url string }

func (pgBackend) name() string { return backendPostgres }

// createFresh opens the database and creates a session with meta in it,
// deleting first a session of the same id left by an interrupted run.
func (b pgBackend) createFresh(ctx context.Context, meta sessiontree.SessionMeta, o pgengine.Options) (*pgengine.DB, *pgengine.Storage, error) {
	db, err := pgengine.Open(ctx, b.url, o)
	if err != nil {
		return nil, nil, err
	}
	if meta.ID != "" {
		if err := db.DeleteSession(ctx, meta.ID, sessiontree.DeleteOptions{Force: true}); err != nil && !errors.Is(err, sessiontree.ErrNotFound) {
			db.Close()
			return nil, nil, err
		}
	}
	st, err := db.CreateSession(ctx, meta)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, st, nil
}

func (b pgBackend) load(ctx context.Context, _ string, ds *dataset) (stored, error) {
	db, st, err := b.createFresh(ctx, ds.Meta, pgengine.Options{})
	if err != nil {
		return nil, err
	}
	if err := st.AppendBatch(ctx, ds.Entries); err != nil {
		return nil, errors.Join(err, db.DeleteSession(ctx, ds.Meta.ID, sessiontree.DeleteOptions{Force: true}), db.Close())
	}
	return &pgStored{url: b.url, id: ds.Meta.ID, db: db}, nil
}

// fresh creates a session with a new id (so an import never meets the
// loaded dataset's) and deletes it when done.
func (b pgBackend) fresh(ctx context.Context, _ string, ds *dataset) (sessiontree.Storage, func() error, error) {
	meta := ds.Meta
	meta.ID = ""
	db, st, err := b.createFresh(ctx, meta, pgengine.Options{})
	if err != nil {
		return nil, nil, err
	}
	return st, func() error {
		return errors.Join(db.DeleteSession(context.Background(), st.ID(), sessiontree.DeleteOptions{Force: true}), db.Close())
	}, nil
}

type pgStored struct {
	url string
	id  string
	db  *pgengine.DB // open for the dataset's life
}

// open opens the session in the shared pool. There is no sync mode (the
// server decides durability) and no cold mode: a fresh process's cost is
// connecting, measured by the whole-process mode, not here.
func (s *pgStored) open(ctx context.Context, o openOpts) (sessiontree.Storage, error) {
	if o.sync || o.cold {
		return nil, errUnsupported
	}
	return s.db.OpenSession(ctx, s.id)
}

func (s *pgStored) close() error {
	return errors.Join(s.db.DeleteSession(context.Background(), s.id, sessiontree.DeleteOptions{Force: true}), s.db.Close())
}
