package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/memory"
)

// Backend names as they appear in the table, the JSON and the charts.
const (
	backendMemory = "memory"
	backendJSONL  = "jsonl"
	backendEngine = "engine"
	// backendEngineCold is the engine opening its database file for each
	// operation, as a fresh process must.
	backendEngineCold = "engine-cold"
	// backendStore is the session store (package store) on the engine.
	backendStore = "store"
	// backendPi is pi's own loader in node. Each pi release measured has
	// rows of its own, named piBackend(version) ("pi-1.6.0"); "pi" in
	// -backends selects all of them, and backendNames' "pi" is where they
	// go in the table.
	backendPi = "pi"
	// backendFloor is bare modernc SQLite doing the minimum for a workload.
	backendFloor = "floor"
	// backendFileFloor is bare file I/O: the bytes read or written.
	backendFileFloor = "floor-file"
)

// backendNames lists the backends in the order the table shows them.
var backendNames = []string{backendMemory, backendJSONL, backendEngine, backendPostgres, backendEngineCold, backendStore, backendPi, backendFloor, backendFileFloor}

// errUnsupported marks an operation a backend does not have (the memory
// backend has no sync to disk); the case is left out of the table.
var errUnsupported = errors.New("not supported by this backend")

// openOpts are how a workload wants a session opened.
type openOpts struct {
	// sync asks for a sync to disk after each write.
	sync bool
	// cold asks the engine to open its database file too, as a fresh
	// process does (the engine-cold rows).
	cold bool
}

// sessionBackend is a storage backend as the workloads drive it. The
// memory backend is always built in; the JSONL backend and the SQLite
// engine register themselves from their own files.
type sessionBackend interface {
	name() string
	// load stores ds where open can find it (untimed setup) and returns a
	// handle on it. dir is a directory the backend may use.
	load(ctx context.Context, dir string, ds *dataset) (stored, error)
	// fresh returns a new empty session for ds's metadata under dir, for
	// the batch-import workload, and a function that closes it and removes
	// what it wrote.
	fresh(ctx context.Context, dir string, ds *dataset) (sessiontree.Storage, func() error, error)
}

// stored is a session a backend holds.
type stored interface {
	// open opens the session as a process resuming it would; the caller
	// closes the result.
	open(ctx context.Context, o openOpts) (sessiontree.Storage, error)
	// close releases the stored session.
	close() error
}

// sessionBackends are the backends compiled in, in table order.
var sessionBackends = []sessionBackend{memoryBackend{}}

// registerBackend adds a backend; backend files call it from init.
func registerBackend(b sessionBackend) { sessionBackends = append(sessionBackends, b) }

// backends are the session backends of this run: those compiled in, and
// PostgreSQL when -pg names a server.
func (r *runner) backends() []sessionBackend {
	if r.pgURL == "" {
		return sessionBackends
	}
	return append(slices.Clone(sessionBackends), pgBackend{url: r.pgURL})
}

// ---- memory ----

// memoryBackend holds the session in RAM: "opening" it returns the loaded
// storage, so its resume is the context build alone, the compute cost
// every backend pays on top of its I/O.
type memoryBackend struct{}

func (memoryBackend) name() string { return backendMemory }

func (memoryBackend) load(ctx context.Context, _ string, ds *dataset) (stored, error) {
	if st := ds.mem; st != nil {
		// The reference pass loaded it already; take it over.
		ds.mem = nil
		return memoryStored{st}, nil
	}
	st, err := loadMemory(ctx, ds)
	if err != nil {
		return nil, err
	}
	return memoryStored{st}, nil
}

func (memoryBackend) fresh(_ context.Context, _ string, ds *dataset) (sessiontree.Storage, func() error, error) {
	st, err := memory.New(ds.Meta, memory.Options{})
	if err != nil {
		return nil, nil, err
	}
	return st, st.Close, nil
}

func loadMemory(ctx context.Context, ds *dataset) (*memory.Storage, error) {
	st, err := memory.New(ds.Meta, memory.Options{})
	if err != nil {
		return nil, err
	}
	if err := st.AppendBatch(ctx, ds.Entries); err != nil {
		return nil, fmt.Errorf("memory: load %s: %w", ds.name(), err)
	}
	return st, nil
}

type memoryStored struct{ st *memory.Storage }

func (m memoryStored) open(_ context.Context, o openOpts) (sessiontree.Storage, error) {
	if o.sync || o.cold {
		return nil, errUnsupported
	}
	return noClose{m.st}, nil
}

func (m memoryStored) close() error { return m.st.Close() }

// noClose hands out a storage that its user may "close" without closing
// the shared one underneath.
type noClose struct{ sessiontree.Storage }

func (noClose) Close() error { return nil }

// reference computes the answers the workloads check against, with the
// memory backend (the reference implementation, which also validates every
// generated entry): the active path, the context's size and the length of
// each old entry's path. It keeps the loaded session in ds.mem for the
// memory backend.
func (ds *dataset) reference(ctx context.Context) error {
	st, err := loadMemory(ctx, ds)
	if err != nil {
		return err
	}
	ds.mem = st
	if leaf, _ := st.Leaf(ctx); leaf != ds.Leaf {
		return fmt.Errorf("reference %s: leaf %s; generator says %s", ds.name(), leaf, ds.Leaf)
	}
	if ds.ActivePath, err = st.Path(ctx, ds.Leaf); err != nil {
		return fmt.Errorf("reference %s: %w", ds.name(), err)
	}
	c, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).Context(ctx, sessiontree.ContextOptions{})
	if err != nil {
		return fmt.Errorf("reference %s: %w", ds.name(), err)
	}
	ds.ContextMessages = len(c.Messages)
	for _, id := range ds.OldEntries {
		p, err := st.Path(ctx, id)
		if err != nil {
			return fmt.Errorf("reference %s: %w", ds.name(), err)
		}
		ds.OldPathLen = append(ds.OldPathLen, len(p))
	}
	return nil
}

// datasetDir is where a backend keeps its copy of a dataset.
func datasetDir(dir, backend string, ds *dataset) string {
	return filepath.Join(dir, backend, ds.name())
}
