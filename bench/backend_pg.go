package main

import (
	"context"
	"errors"
	"fmt"
	neturl "net/url"
	"strings"

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
// throwaway cluster (durable with Options.PGDurable), whose stop function
// the caller defers; any other value is the URL of a server the run may
// create sessions on. Options.PGCommitDelay goes into the URL.
func startPostgres(ctx context.Context, o Options) (url string, stop func() error, err error) {
	url, stop = o.PG, func() error { return nil }
	if o.PG == pgAuto {
		start := pgtest.Start
		if o.PGDurable {
			start = pgtest.StartDurable
		}
		c, err := start(ctx)
		if err != nil {
			return "", nil, fmt.Errorf("-pg auto: %w", err)
		}
		url, stop = c.URL, c.Stop
	}
	if o.PGCommitDelay != "" {
		if url, err = withSetting(url, "commit_delay", o.PGCommitDelay); err != nil {
			return "", nil, errors.Join(err, stop())
		}
	}
	return url, stop, nil
}

// withSetting adds the setting name=value to a connection string: a
// URL's query parameter, or a key=value string's pair.
func withSetting(conn, name, value string) (string, error) {
	if !strings.HasPrefix(conn, "postgres://") && !strings.HasPrefix(conn, "postgresql://") {
		return conn + " " + name + "=" + value, nil
	}
	u, err := neturl.Parse(conn)
	if err != nil {
		return "", fmt.Errorf("-pg: %w", err)
	}
	q := u.Query()
	q.Set(name, value)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// pgSettings are what the postgres rows' server and the engine's
// connections to it were set to, for the report.
type pgSettings struct {
	// note says, for the report's notes, what server the postgres rows
	// ran on and the settings that decide what its commits cost and
	// keep (-pg auto's throwaway cluster turns fsync, synchronous_commit
	// and full_page_writes off unless -pg-durable; the SQLite rows
	// always sync their log, at checkpoints under synchronous=NORMAL).
	note string
	// commits is the short form for the writers target's line.
	commits string
}

// pgServerSettings reads the settings as a connection of the engine's
// pool has them: commit_delay is the engine's to ask for (pgengine.Open).
func pgServerSettings(ctx context.Context, url, what string) (pgSettings, error) {
	db, err := pgengine.Open(ctx, url, pgengine.Options{MaxConns: 1})
	if err != nil {
		return pgSettings{}, fmt.Errorf("postgres settings: %w", err)
	}
	defer db.Close()
	names := []string{"server_version", "fsync", "synchronous_commit", "full_page_writes", "commit_delay", "commit_siblings"}
	v := make(map[string]string, len(names))
	for _, n := range names {
		if v[n], err = db.ServerSetting(ctx, n); err != nil {
			return pgSettings{}, fmt.Errorf("postgres settings: %w", err)
		}
	}
	delay := "commit_delay=0"
	if v["commit_delay"] != "0" {
		delay = fmt.Sprintf("commit_delay=%s µs, commit_siblings=%s", v["commit_delay"], v["commit_siblings"])
	}
	commits := fmt.Sprintf("fsync=%s, synchronous_commit=%s, %s", v["fsync"], v["synchronous_commit"], delay)
	return pgSettings{
		note: fmt.Sprintf("The postgres rows ran on PostgreSQL %s (%s, over loopback) with fsync=%s, synchronous_commit=%s, full_page_writes=%s; the engine's connections had %s.",
			v["server_version"], what, v["fsync"], v["synchronous_commit"], v["full_page_writes"], delay),
		commits: commits,
	}, nil
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
