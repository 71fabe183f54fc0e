package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

func init() { registerBackend(engineBackend{}) }

// engineBackend is the SQLite engine. The database is opened once per
// dataset, as an application opens it at start, and the workloads open
// sessions in it; the engine-cold rows open the database file too, as a
// fresh process does.
type engineBackend struct{}

func (engineBackend) name() string { return backendEngine }

func (engineBackend) load(ctx context.Context, dir string, ds *dataset) (stored, error) {
	path := filepath.Join(datasetDir(dir, backendEngine, ds), "sessions.db")
	if err := removeDB(path); err != nil {
		return nil, err
	}
	db, err := engine.Open(ctx, path, engine.Options{})
	if err != nil {
		return nil, err
	}
	st, err := db.CreateSession(ctx, ds.Meta)
	if err == nil {
		err = st.AppendBatch(ctx, ds.Entries)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	st.Close()
	return &engineStored{path: path, id: ds.Meta.ID, db: db}, nil
}

func (engineBackend) fresh(ctx context.Context, dir string, ds *dataset) (sessiontree.Storage, func() error, error) {
	path := filepath.Join(dir, "import.db")
	if err := removeDB(path); err != nil {
		return nil, nil, err
	}
	db, err := engine.Open(ctx, path, engine.Options{})
	if err != nil {
		return nil, nil, err
	}
	st, err := db.CreateSession(ctx, ds.Meta)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return st, func() error {
		err := errors.Join(st.Close(), db.Close())
		removeDB(path)
		os.Remove(filepath.Dir(path))
		return err
	}, nil
}

type engineStored struct {
	path string
	id   string
	db   *engine.DB // open for the dataset's life
}

// open opens the session in the shared database; with o.sync or o.cold
// it opens the database file too (synchronous=FULL for sync), and closing
// the session closes that database.
func (s *engineStored) open(ctx context.Context, o openOpts) (sessiontree.Storage, error) {
	if !o.sync && !o.cold {
		return s.db.OpenSession(ctx, s.id)
	}
	opts := engine.Options{}
	if o.sync {
		opts.Synchronous = engine.SyncFull
	}
	db, err := engine.Open(ctx, s.path, opts)
	if err != nil {
		return nil, err
	}
	st, err := db.OpenSession(ctx, s.id)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &closeDB{Storage: st, db: db}, nil
}

func (s *engineStored) close() error { return s.db.Close() }

// closeDB is a session that closes its own database with it. It keeps the
// engine's StateReader visible, so contexts read the state from the index.
type closeDB struct {
	*engine.Storage
	db *engine.DB
}

// Close closes the session and its database.
func (c *closeDB) Close() error { return errors.Join(c.Storage.Close(), c.db.Close()) }
