package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// workload is one thing an agent does with its sessions, measured on every
// backend and against the floor.
type workload struct {
	name string
	// doc is the one-sentence explanation the README and the table use.
	doc string
	// shapes are the session shapes the workload runs on.
	shapes []Shape
	// hot marks workloads that use the dataset's shared open sessions
	// ([runner.session]).
	hot bool
	// capped skips the workload on sessions larger than
	// Options.ImportMaxSize.
	capped bool
	// corpus marks workloads over many sessions (list, search), which run
	// on a corpus rather than on one dataset.
	corpus bool
	// noFileRows marks corpus workloads without a bare-file floor: nothing
	// a file could do stands for them (the search index's catch-up).
	noFileRows bool
	// noFloorRows marks corpus workloads without a bare-SQLite floor.
	noFloorRows bool
	// cases returns every backend's side of the workload on ds.
	cases func(r *runner, ds *dataset) []benchCase
}

// workloads in the order they run and are reported: reads first, so the
// writes that follow do not change what they read.
var workloads = []*workload{
	{
		name:   "open",
		doc:    "Open a stored session and read its leaf, as a process does before anything else (the memory backend has nothing to open).",
		shapes: []Shape{ShapeCompacted},
		cases:  openCases,
	},
	{
		name:   "resume",
		doc:    "Open a stored session and build the model's context at its leaf, then close it: what an agent does when the user resumes a conversation (memory: the context build alone).",
		shapes: Shapes,
		cases:  resumeCases,
	},
	{
		name:   "active-path",
		hot:    true,
		doc:    "Read the active path (leaf up to the root or the compaction boundary) of an open session.",
		shapes: []Shape{ShapeLinear, ShapeCompacted, ShapeBushy},
		cases:  activePathCases,
	},
	{
		name:   "path-random",
		hot:    true,
		doc:    "Read the path from a random old entry (oldest 90% of the log) up to the root or its compaction boundary, as a tree view or a fork does.",
		shapes: []Shape{ShapeCompacted, ShapeBushy},
		cases:  pathRandomCases,
	},
	{
		name:   "move",
		hot:    true,
		doc:    "Move the leaf back and forth between the current leaf and the tip of an abandoned branch whose path meets it about halfway down.",
		shapes: []Shape{ShapeBushy},
		cases:  moveCases,
	},
	{
		name:   "append",
		hot:    true,
		doc:    "Append one realistic entry (user, assistant or tool result) to an open session, without syncing to disk.",
		shapes: []Shape{ShapeLinear},
		cases:  func(r *runner, ds *dataset) []benchCase { return appendCases(r, ds, false) },
	},
	{
		name:   "append-sync",
		hot:    true,
		doc:    "Append one entry and sync it to disk before returning (fsync; SQLite synchronous=FULL).",
		shapes: []Shape{ShapeLinear},
		cases:  func(r *runner, ds *dataset) []benchCase { return appendCases(r, ds, true) },
	},
	{
		name:   "import",
		capped: true,
		doc:    "Batch-import a whole session's entries (ids, parents and timestamps given) into a fresh session; the store row imports the pi file itself (read, parse, batch append, import record; the search index is left to Store.Index, see store-index).",
		shapes: []Shape{ShapeLinear, ShapeLarge},
		cases:  importCases,
	},
	{
		name:   "push",
		doc:    "Push the session from a SQLite session store to the PostgreSQL server's store, where it is new (store.Push, what `sessiontree push --to URL` runs, 4,096 entries a transaction; issue 15's target: 100,000 entries in < 10 s); the store row pushes into a new SQLite store, for reference.",
		shapes: []Shape{ShapeCompacted},
		cases:  pushCases,
	},
	{
		name:   "list",
		doc:    "List a corpus of sessions newest-updated first and read the first page (50 rows with name, counts and first user message): what a session picker shows.",
		corpus: true,
		cases:  listCases,
	},
	{
		name:   "search",
		doc:    "Full-text search of every session of the corpus for a term planted in one session in a hundred, ranked, first 20 hits.",
		corpus: true,
		cases:  searchCases,
	},
	{
		name:   "usage",
		doc:    "Report the tokens and cost of every session of the corpus by day (store.Usage, `sessiontree usage`), from the aggregates the engine keeps per session and day; the floor sums a bare table of usage per session and day, the file floor reads every file, the least a tool summing pi's files must do.",
		corpus: true,
		cases:  usageCases,
	},
	{
		name:   "store-import",
		doc:    "Import 500 of the corpus's small pi files (a third of a smaller corpus) into a fresh session store (each file one transaction; the search index is left to store-index), as a first run over a user's pi folder does.",
		corpus: true,
		cases:  storeImportCases,
	},
	{
		name:  "fleet",
		doc:   "Many agents, one database: G writers (the size column) each append to a session of their own in one engine database (WAL, synchronous=NORMAL), every Append returning once its entry is committed; an operation is 512 entries in all, split between the writers. The floor is bare SQLite committing the same appends as a group commit at its best would: one transaction per round of one append by each writer, each row in its writer's session range, nothing else.",
		cases: fleetCases,
	},
	{
		name:  "writers",
		doc:   "Many processes, one database (issue 15): W writers (the size column) in 4 child processes of the bench binary, 4 sessions each (1 writer: one process, one session), each appending to its own session, every Append returning once its entry is committed; an operation is 512 entries in all, split between the writers. SQLite serializes the writes of all processes; PostgreSQL locks one session row.",
		cases: func(r *runner, ds *dataset) []benchCase { return nil }, // runProcWriters builds them
	},
	{
		name:       "store-index",
		doc:        "Bring the search index up to date after store-import's import (Store.Index over every imported entry), as the command line's import does when it ends and any search does first.",
		corpus:     true,
		noFileRows: true,
		cases:      storeIndexCases,
	},
	{
		name:        "folder-import",
		doc:         "Import a realistic pi folder into a fresh session store (store.Import; the search index is left to folder-index): store-import's small files with a few long sessions, one with inline images, as a first import of years of history meets them.",
		corpus:      true,
		noFloorRows: true,
		cases:       folderImportCases,
	},
	{
		name:       "folder-index",
		doc:        "Bring the search index up to date after folder-import's import (Store.Index over every imported entry): with the import, what a user waits for before every entry of the folder is searchable.",
		corpus:     true,
		noFileRows: true,
		cases:      folderIndexCases,
	},
}

func findWorkload(name string) *workload {
	for _, w := range workloads {
		if w.name == name {
			return w
		}
	}
	return nil
}

func workloadNames() []string {
	var out []string
	for _, w := range workloads {
		out = append(out, w.name)
	}
	return out
}

// eachStored returns a case per loaded session backend, built by mk.
func eachStored(r *runner, mk func(name string, s stored) func(ctx context.Context) (*prepared, error)) []benchCase {
	var out []benchCase
	for _, b := range r.backends() {
		s, ok := r.stores[b.name()]
		if !ok {
			continue
		}
		out = append(out, benchCase{backend: b.name(), setup: mk(b.name(), s)})
	}
	return out
}

func checkLen(what string, got, want int) error {
	if got != want {
		return fmt.Errorf("%s: got %d entries, want %d", what, got, want)
	}
	return nil
}

// ---- open ----

func openCases(r *runner, ds *dataset) []benchCase {
	mk := func(o openOpts) func(name string, s stored) func(ctx context.Context) (*prepared, error) {
		return func(name string, s stored) func(ctx context.Context) (*prepared, error) {
			return func(ctx context.Context) (*prepared, error) {
				if name == backendMemory {
					return nil, errUnsupported
				}
				return &prepared{rows: 1, op: func(ctx context.Context) error {
					st, err := s.open(ctx, o)
					if err != nil {
						return err
					}
					leaf, err := st.Leaf(ctx)
					if err == nil && leaf != ds.Leaf {
						err = fmt.Errorf("leaf %s, want %s", leaf, ds.Leaf)
					}
					if cerr := st.Close(); err == nil {
						err = cerr
					}
					return err
				}}, nil
			}
		}
	}
	cs := eachStored(r, mk(openOpts{}))
	cs = append(cs, coldCase(r, mk(openOpts{cold: true})))
	cs = append(cs, piCases(r, ds, "open")...)
	cs = append(cs, benchCase{backend: backendFloor, setup: func(ctx context.Context) (*prepared, error) {
		f := r.floor
		if f == nil {
			return nil, errUnsupported
		}
		return &prepared{rows: 1, op: func(ctx context.Context) error {
			db, err := openFloor(ctx, f.path, "NORMAL")
			if err != nil {
				return err
			}
			defer db.Close()
			var leaf string
			return db.QueryRowContext(ctx, floorLeaf, ds.Meta.ID).Scan(&leaf)
		}}, nil
	}})
	return append(cs, readFileCase(ds))
}

// coldCase is the engine-cold side of a workload: the engine opening its
// database file for every operation.
func coldCase(r *runner, mk func(name string, s stored) func(ctx context.Context) (*prepared, error)) benchCase {
	return benchCase{backend: backendEngineCold, setup: func(ctx context.Context) (*prepared, error) {
		s, ok := r.stores[backendEngine]
		if !ok {
			return nil, errUnsupported
		}
		return mk(backendEngineCold, s)(ctx)
	}}
}

// readFileCase reads the session file's bytes: the floor of anything that
// must load a JSONL file.
func readFileCase(ds *dataset) benchCase {
	return benchCase{backend: backendFileFloor, setup: func(ctx context.Context) (*prepared, error) {
		return &prepared{rows: len(ds.Entries), bytes: ds.FileBytes, op: func(ctx context.Context) error {
			b, err := os.ReadFile(ds.File)
			if err == nil && int64(len(b)) != ds.FileBytes {
				err = fmt.Errorf("read %d bytes, want %d", len(b), ds.FileBytes)
			}
			return err
		}}, nil
	}}
}

// ---- resume ----

func resumeCases(r *runner, ds *dataset) []benchCase {
	mk := func(o openOpts) func(name string, s stored) func(ctx context.Context) (*prepared, error) {
		return func(name string, s stored) func(ctx context.Context) (*prepared, error) {
			return func(ctx context.Context) (*prepared, error) {
				return &prepared{rows: len(ds.ActivePath), op: func(ctx context.Context) error {
					st, err := s.open(ctx, o)
					if err != nil {
						return err
					}
					c, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).Context(ctx, sessiontree.ContextOptions{})
					if err == nil && len(c.Messages) != ds.ContextMessages {
						err = fmt.Errorf("context has %d messages, want %d", len(c.Messages), ds.ContextMessages)
					}
					if cerr := st.Close(); err == nil {
						err = cerr
					}
					return err
				}}, nil
			}
		}
	}
	cs := eachStored(r, mk(openOpts{}))
	cs = append(cs, coldCase(r, mk(openOpts{cold: true})))
	cs = append(cs, piCases(r, ds, "resume")...)
	cs = append(cs, benchCase{backend: backendFloor, setup: func(ctx context.Context) (*prepared, error) {
		f := r.floor
		if f == nil {
			return nil, errUnsupported
		}
		return &prepared{rows: len(ds.ActivePath), op: func(ctx context.Context) error {
			db, err := openFloor(ctx, f.path, "NORMAL")
			if err != nil {
				return err
			}
			defer db.Close()
			stmt, err := db.PrepareContext(ctx, floorActive)
			if err != nil {
				return err
			}
			defer stmt.Close()
			rows, err := queryRows(ctx, stmt, f.activeFrom)
			if err != nil {
				return err
			}
			return checkLen("floor resume", len(rows), len(ds.ActivePath))
		}}, nil
	}})
	return append(cs, readFileCase(ds))
}

// ---- paths ----

func activePathCases(r *runner, ds *dataset) []benchCase {
	cs := eachStored(r, func(name string, s stored) func(ctx context.Context) (*prepared, error) {
		return func(ctx context.Context) (*prepared, error) {
			st, err := r.session(ctx, name, s, openOpts{})
			if err != nil {
				return nil, err
			}
			return &prepared{rows: len(ds.ActivePath), close: st.Close, op: func(ctx context.Context) error {
				p, err := st.Path(ctx, ds.Leaf)
				if err != nil {
					return err
				}
				return checkLen("active path", len(p), len(ds.ActivePath))
			}}, nil
		}
	})
	return append(cs, floorCase(r, func(ctx context.Context, db *sql.DB, f *floorStore) (*prepared, error) {
		stmt, err := db.PrepareContext(ctx, floorActive)
		if err != nil {
			return nil, err
		}
		return &prepared{rows: len(ds.ActivePath), close: stmt.Close, op: func(ctx context.Context) error {
			rows, err := queryRows(ctx, stmt, f.activeFrom)
			if err != nil {
				return err
			}
			return checkLen("floor active path", len(rows), len(ds.ActivePath))
		}}, nil
	}))
}

// floorCase opens the floor database for the case's life and lets mk
// prepare its statements.
func floorCase(r *runner, mk func(ctx context.Context, db *sql.DB, f *floorStore) (*prepared, error)) benchCase {
	return floorCaseSync(r, "NORMAL", mk)
}

func floorCaseSync(r *runner, synchronous string, mk func(ctx context.Context, db *sql.DB, f *floorStore) (*prepared, error)) benchCase {
	return benchCase{backend: backendFloor, setup: func(ctx context.Context) (*prepared, error) {
		f := r.floor
		if f == nil {
			return nil, errUnsupported
		}
		db, err := openFloor(ctx, f.path, synchronous)
		if err != nil {
			return nil, err
		}
		p, err := mk(ctx, db, f)
		if err != nil {
			db.Close()
			return nil, err
		}
		inner := p.close
		p.close = func() error {
			if inner != nil {
				inner()
			}
			return db.Close()
		}
		return p, nil
	}}
}

func meanOldPath(ds *dataset) int {
	sum := 0
	for _, n := range ds.OldPathLen {
		sum += n
	}
	return sum / max(1, len(ds.OldPathLen))
}

func pathRandomCases(r *runner, ds *dataset) []benchCase {
	rows := meanOldPath(ds)
	cs := eachStored(r, func(name string, s stored) func(ctx context.Context) (*prepared, error) {
		return func(ctx context.Context) (*prepared, error) {
			st, err := r.session(ctx, name, s, openOpts{})
			if err != nil {
				return nil, err
			}
			i := 0
			return &prepared{rows: rows, close: st.Close, op: func(ctx context.Context) error {
				k := i % len(ds.OldEntries)
				i++
				p, err := st.Path(ctx, ds.OldEntries[k])
				if err != nil {
					return err
				}
				return checkLen("path", len(p), ds.OldPathLen[k])
			}}, nil
		}
	})
	return append(cs, floorCase(r, func(ctx context.Context, db *sql.DB, f *floorStore) (*prepared, error) {
		stmt, err := db.PrepareContext(ctx, floorWalk)
		if err != nil {
			return nil, err
		}
		i := 0
		return &prepared{rows: rows, close: stmt.Close, op: func(ctx context.Context) error {
			k := i % len(ds.OldEntries)
			i++
			out, err := queryRows(ctx, stmt, ds.OldEntries[k], ds.OldPathLen[k])
			if err != nil {
				return err
			}
			slices.Reverse(out) // root first, as the backends return it
			return checkLen("floor path", len(out), ds.OldPathLen[k])
		}}, nil
	}))
}

// ---- move ----

func moveCases(r *runner, ds *dataset) []benchCase {
	if ds.MoveTarget == "" {
		return nil
	}
	leafDepth, tipDepth, meetDepth := ds.Depth[ds.Leaf], ds.Depth[ds.MoveTarget], ds.Depth[ds.MoveMeet]
	note := fmt.Sprintf("leaf depth %d ↔ tip depth %d, meeting at depth %d", leafDepth, tipDepth, meetDepth)
	rows := (leafDepth + tipDepth - 2*meetDepth) / 2
	targets := [2]string{ds.MoveTarget, ds.Leaf}
	cs := eachStored(r, func(name string, s stored) func(ctx context.Context) (*prepared, error) {
		return func(ctx context.Context) (*prepared, error) {
			st, err := r.session(ctx, name, s, openOpts{})
			if err != nil {
				return nil, err
			}
			i := 0
			return &prepared{rows: rows, note: note,
				op: func(ctx context.Context) error {
					_, err := st.SetLeaf(ctx, targets[i%2], sessiontree.AppendOptions{})
					i++
					return err
				},
				close: func() error {
					// Leave the session on its leaf for the appends.
					if leaf, err := st.Leaf(ctx); err == nil && leaf != ds.Leaf {
						st.SetLeaf(ctx, ds.Leaf, sessiontree.AppendOptions{})
					}
					return st.Close()
				}}, nil
		}
	})
	return append(cs, floorCase(r, func(ctx context.Context, db *sql.DB, f *floorStore) (*prepared, error) {
		// The floor of a move: one transaction that appends the leaf entry
		// and walks from the new leaf up to where the branches meet (the
		// rows a materialized branch must rewrite).
		leafRaw := func(target string) []byte {
			return []byte(fmt.Sprintf(`{"type":"leaf","id":"%s","parentId":"%s","timestamp":"2026-01-05T12:00:00.000Z","targetId":"%s"}`, "z0000000", ds.Leaf, target))
		}
		raws := [2][]byte{leafRaw(targets[0]), leafRaw(targets[1])}
		i := 0
		return &prepared{rows: rows, note: note, op: func(ctx context.Context) error {
			k := i % 2
			i++
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			if _, err := tx.ExecContext(ctx, floorInsert, f.newAppendID(), targets[1-k], raws[k]); err != nil {
				return err
			}
			rs, err := tx.QueryContext(ctx, floorMeet, targets[k], ds.MoveMeet)
			if err != nil {
				return err
			}
			n := 0
			for rs.Next() {
				var id string
				if err := rs.Scan(&id); err != nil {
					rs.Close()
					return err
				}
				n++
			}
			rs.Close()
			if err := rs.Err(); err != nil {
				return err
			}
			return tx.Commit()
		}}, nil
	}))
}

// ---- append ----

func appendCases(r *runner, ds *dataset, sync bool) []benchCase {
	cs := eachStored(r, func(name string, s stored) func(ctx context.Context) (*prepared, error) {
		return func(ctx context.Context) (*prepared, error) {
			st, err := r.session(ctx, name, s, openOpts{sync: sync})
			if err != nil {
				return nil, err
			}
			i := 0
			return &prepared{rows: 1, close: st.Close, op: func(ctx context.Context) error {
				d := ds.Appends[i%len(ds.Appends)]
				i++
				_, err := st.Append(ctx, d, sessiontree.AppendOptions{})
				return err
			}}, nil
		}
	})
	synchronous := "NORMAL"
	if sync {
		synchronous = "FULL"
	}
	cs = append(cs, floorCaseSync(r, synchronous, func(ctx context.Context, db *sql.DB, f *floorStore) (*prepared, error) {
		stmt, err := db.PrepareContext(ctx, floorInsert)
		if err != nil {
			return nil, err
		}
		i, parent := 0, ds.Leaf
		return &prepared{rows: 1, close: stmt.Close, op: func(ctx context.Context) error {
			id := f.newAppendID()
			_, err := stmt.ExecContext(ctx, id, parent, f.appendRaw[i%len(f.appendRaw)])
			i, parent = i+1, id
			return err
		}}, nil
	}))
	return append(cs, benchCase{backend: backendFileFloor, setup: func(ctx context.Context) (*prepared, error) {
		// The floor of a JSONL append: one write of the line, as a file
		// opened for appending takes it, and an fsync when syncing.
		dir := filepath.Join(r.dir, backendFileFloor)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(filepath.Join(dir, ds.name()+".jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, err
		}
		lines := make([][]byte, len(ds.Appends))
		for i, d := range ds.Appends {
			e, err := sessiontree.BuildEntry(d, fmt.Sprintf("%08x", i), ds.Leaf, d.Timestamp)
			if err != nil {
				f.Close()
				return nil, err
			}
			lines[i] = append(e.Raw, '\n')
		}
		i := 0
		return &prepared{rows: 1, close: f.Close, op: func(ctx context.Context) error {
			_, err := f.Write(lines[i%len(lines)])
			i++
			if err == nil && sync {
				err = f.Sync()
			}
			return err
		}}, nil
	}})
}

// ---- import ----

func importCases(r *runner, ds *dataset) []benchCase {
	var cs []benchCase
	for _, b := range r.backends() {
		if _, ok := r.stores[b.name()]; !ok {
			continue
		}
		cs = append(cs, benchCase{backend: b.name(), setup: func(ctx context.Context) (*prepared, error) {
			dir := filepath.Join(r.dir, b.name(), "import")
			var st sessiontree.Storage
			var done func() error
			p := &prepared{maxIters: 1, rows: len(ds.Entries), bytes: ds.PayloadBytes}
			p.before = func(ctx context.Context) error {
				if err := os.MkdirAll(dir, 0o700); err != nil {
					return err
				}
				var err error
				st, done, err = b.fresh(ctx, dir, ds)
				return err
			}
			p.op = func(ctx context.Context) error {
				ba, ok := st.(sessiontree.BatchAppender)
				if !ok {
					return errUnsupported
				}
				return ba.AppendBatch(ctx, ds.Entries)
			}
			p.after = func(ctx context.Context) error {
				err := done()
				os.RemoveAll(dir)
				return err
			}
			return p, nil
		}})
	}
	cs = append(cs, benchCase{backend: backendStore, setup: func(ctx context.Context) (*prepared, error) {
		if _, ok := r.stores[backendEngine]; !ok {
			return nil, errUnsupported
		}
		path := filepath.Join(r.dir, backendStore, "import.db")
		var s *store.Store
		p := &prepared{maxIters: 1, rows: len(ds.Entries), bytes: ds.FileBytes}
		p.before = func(ctx context.Context) error {
			if err := removeDB(path); err != nil {
				return err
			}
			var err error
			s, err = store.Open(ctx, path, store.Options{})
			return err
		}
		p.op = func(ctx context.Context) error {
			rep, err := s.Import(ctx, []string{ds.File}, store.ImportOptions{})
			if err == nil && rep.Entries != len(ds.Entries) {
				err = fmt.Errorf("store import: %d entries, want %d", rep.Entries, len(ds.Entries))
			}
			return err
		}
		p.after = func(ctx context.Context) error {
			err := s.Close()
			removeDB(path)
			return err
		}
		return p, nil
	}})
	cs = append(cs, benchCase{backend: backendFloor, setup: func(ctx context.Context) (*prepared, error) {
		if r.floor == nil {
			return nil, errUnsupported
		}
		path := filepath.Join(r.dir, backendFloor, "import.db")
		var db *sql.DB
		p := &prepared{maxIters: 1, rows: len(ds.Entries), bytes: ds.PayloadBytes}
		p.before = func(ctx context.Context) error {
			var err error
			db, err = freshFloor(ctx, path, floorSchema)
			return err
		}
		p.op = func(ctx context.Context) error { return floorInsertAll(ctx, db, ds.Entries) }
		p.after = func(ctx context.Context) error {
			err := db.Close()
			removeDB(path)
			return err
		}
		return p, nil
	}})
	return append(cs, benchCase{backend: backendFileFloor, setup: func(ctx context.Context) (*prepared, error) {
		// The floor of writing a session file: the same bytes through one
		// buffered writer.
		path := filepath.Join(r.dir, backendFileFloor, "import.jsonl")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		p := &prepared{maxIters: 1, rows: len(ds.Entries), bytes: ds.PayloadBytes}
		p.op = func(ctx context.Context) error {
			f, err := os.Create(path)
			if err != nil {
				return err
			}
			w := bufio.NewWriterSize(f, 1<<20)
			for _, e := range ds.Entries {
				w.Write(e.Raw)
				w.WriteByte('\n')
			}
			if err := w.Flush(); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		}
		p.after = func(ctx context.Context) error { return os.Remove(path) }
		return p, nil
	}})
}
