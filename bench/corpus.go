package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// ShapeCorpus names the results of the workloads over many sessions (list,
// search, store import); their size is the number of sessions.
const ShapeCorpus Shape = "corpus"

const (
	// corpusQuery is planted in the first user message of about one
	// session in a hundred: something specific a user looks for.
	corpusQuery     = "flakyTestRetry"
	corpusPlantRate = 100
	// corpusImportFiles is how many of the corpus's files one run of the
	// store-import workload imports into a fresh store (a third of a
	// smaller corpus).
	corpusImportFiles = 500
	// corpusGap is the time between two sessions' starts.
	corpusGap = 37 * time.Minute
)

// corpus is many small sessions in one pi sessions folder, as a user's
// ~/.pi/agent/sessions holds them after months of work.
type corpus struct {
	// dir is the sessions folder: dir/--<cwd>--/<time>_<id>.jsonl.
	dir      string
	files    []string
	sessions []corpusSession
	nEntries int
	bytes    int64
	// matches counts the sessions the query is planted in.
	matches int
	// importFiles are the files one store-import run imports.
	importFiles   []string
	importEntries int
	importBytes   int64
	// entryRows are every entry with its session's index, for the floor.
	entryRows []corpusEntry
	// metas and entries are each session's header and entries.
	metas   []sessiontree.SessionMeta
	entries [][]sessiontree.Entry
}

// corpusSession is what a session list shows of one session.
type corpusSession struct {
	ID, Cwd, Name, Created, Updated, FirstUser string
	Entries, Messages                          int
}

type corpusEntry struct {
	session int
	e       sessiontree.Entry
}

// generateCorpus writes n sessions of 2 to maxEntries entries each
// (log-uniform, so most are short) into dir.
func generateCorpus(seed uint64, n, maxEntries int, dir string) (*corpus, error) {
	c := &corpus{dir: dir}
	rng := rand.New(rand.NewPCG(seed, 0xc0ffee))
	for i := range n {
		size := int(math.Exp(rng.Float64()*math.Log(float64(maxEntries)/2)) * 2)
		size = max(2, min(size, maxEntries))
		ds := &dataset{Shape: ShapeLinear, Size: size, Seed: seedFor(seed, ShapeCorpus, i)}
		g := newGenerator(ds.Seed, ShapeLinear)
		g.now = benchEpochMillis + int64(i)*corpusGap.Milliseconds()
		ds.Meta = sessiontree.SessionMeta{ID: g.uuidV7(), Version: 3, CreatedAt: g.iso(), Cwd: benchCwd}
		plant := i%corpusPlantRate == min(corpusPlantRate/2, n/2)
		if plant {
			g.plant = corpusQuery
			c.matches++
		}
		if err := g.fill(ds); err != nil {
			return nil, err
		}
		if err := ds.writeFile(dir); err != nil {
			return nil, err
		}
		c.files = append(c.files, ds.File)
		c.nEntries += len(ds.Entries)
		c.metas = append(c.metas, ds.Meta)
		c.entries = append(c.entries, ds.Entries)
		c.bytes += ds.FileBytes
		if i < min(corpusImportFiles, max(1, n/3)) {
			c.importFiles = append(c.importFiles, ds.File)
			c.importEntries += len(ds.Entries)
			c.importBytes += ds.FileBytes
		}
		c.sessions = append(c.sessions, describe(ds))
		for _, e := range ds.Entries {
			c.entryRows = append(c.entryRows, corpusEntry{i, e})
		}
	}
	return c, nil
}

// describe computes a session's list row the way the store defines it.
func describe(ds *dataset) corpusSession {
	s := corpusSession{ID: ds.Meta.ID, Cwd: ds.Meta.Cwd, Created: ds.Meta.CreatedAt, Updated: ds.Meta.CreatedAt, Entries: len(ds.Entries)}
	for _, e := range ds.Entries {
		s.Updated = e.Timestamp
		switch e.Type {
		case sessiontree.TypeSessionInfo:
			s.Name = sessiontree.NameOf(e)
		case sessiontree.TypeMessage:
			s.Messages++
			if s.FirstUser == "" && sessiontree.MessageInfoOf(e).Role == "user" {
				s.FirstUser = firstText(e)
			}
		}
	}
	return s
}

// firstText is a message's string content or its first text block.
func firstText(e sessiontree.Entry) string {
	var m struct {
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(e.Raw, &m) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(m.Message.Content, &s) == nil {
		return s
	}
	var blocks []struct{ Type, Text string }
	json.Unmarshal(m.Message.Content, &blocks)
	for _, b := range blocks {
		if b.Type == "text" {
			return b.Text
		}
	}
	return ""
}

// searchText is the text of an entry worth finding, as the store's index
// takes it (migration 0004): message content (text, thinking, tool-call
// argument strings), a bash execution's command and output, custom-message
// content, summaries and session names.
func searchText(e sessiontree.Entry) string {
	var v struct {
		Message struct {
			Content json.RawMessage `json:"content"`
			Command string          `json:"command"`
			Output  string          `json:"output"`
		} `json:"message"`
		Content json.RawMessage `json:"content"`
		Summary string          `json:"summary"`
		Name    string          `json:"name"`
	}
	if json.Unmarshal(e.Raw, &v) != nil {
		return ""
	}
	var parts []string
	content := func(raw json.RawMessage) {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			parts = append(parts, s)
			return
		}
		var blocks []struct {
			Type, Text, Thinking string
			Arguments            map[string]any
		}
		json.Unmarshal(raw, &blocks)
		for _, b := range blocks {
			switch b.Type {
			case "text":
				parts = append(parts, b.Text)
			case "thinking":
				parts = append(parts, b.Thinking)
			case "toolCall":
				for _, a := range b.Arguments {
					if s, ok := a.(string); ok {
						parts = append(parts, s)
					}
				}
			}
		}
	}
	switch e.Type {
	case sessiontree.TypeMessage:
		content(v.Message.Content)
		parts = append(parts, v.Message.Command, v.Message.Output)
	case sessiontree.TypeCustomMessage:
		content(v.Content)
	case sessiontree.TypeCompaction, sessiontree.TypeBranchSummary:
		parts = append(parts, v.Summary)
	case sessiontree.TypeSessionInfo:
		parts = append(parts, v.Name)
	}
	return strings.TrimSpace(strings.Join(parts, "\n"))
}

// ---- the corpus run ----

// runCorpus generates the corpus and runs the workloads over it.
func (r *runner) runCorpus(ctx context.Context) error {
	var ws []*workload
	for _, w := range workloads {
		if w.corpus && r.opts.wantsWorkload(w.name) {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 || r.opts.CorpusSessions == 0 {
		return nil
	}
	t0 := time.Now()
	dir := filepath.Join(r.dir, "corpus")
	c, err := generateCorpus(r.opts.Seed, r.opts.CorpusSessions, r.opts.CorpusMaxEntries, dir)
	if err != nil {
		return err
	}
	r.corpus = c
	defer func() {
		r.corpus, r.ds = nil, nil
		if r.corpusStore != nil {
			r.corpusStore.Close()
			r.corpusStore = nil
		}
		if !r.opts.Keep {
			os.RemoveAll(dir)
			os.RemoveAll(filepath.Join(r.dir, "store"))
			os.RemoveAll(filepath.Join(r.dir, backendFloor))
		}
	}()
	r.progress("generated a corpus of %d sessions: %d entries, %s, query %q planted in %d (%v)",
		len(c.files), c.nEntries, fmtBytes(c.bytes), corpusQuery, c.matches, time.Since(t0).Round(time.Millisecond))
	r.ds = &dataset{Shape: ShapeCorpus, Size: len(c.files)}
	r.lastDataset = DatasetInfo{Name: fmt.Sprintf("corpus-%s sessions", sizeLabel(len(c.files))), Entries: c.nEntries, FileBytes: c.bytes}

	if r.opts.wants(backendStore) {
		t := time.Now()
		s, err := loadCorpusStore(ctx, filepath.Join(r.dir, "store", "corpus.db"), c)
		if err != nil {
			return err
		}
		r.corpusStore = s
		d := time.Since(t)
		r.progress("  store: loaded the corpus in %v (%.0f entries/s)", d.Round(time.Millisecond), float64(c.nEntries)/d.Seconds())
		// Only a search needs the index (minutes for a million entries).
		if r.opts.wantsWorkload("search") {
			t = time.Now()
			if err := indexCorpusStore(ctx, s, c); err != nil {
				return err
			}
			d = time.Since(t)
			r.progress("  store: indexed the corpus for search in %v (%.0f entries/s)", d.Round(time.Millisecond), float64(c.nEntries)/d.Seconds())
		}
	}
	var floorPath string
	if r.opts.wants(backendFloor) {
		if floorPath, err = buildCorpusFloor(ctx, r.dir, c); err != nil {
			return err
		}
	}
	r.corpusFloor = floorPath
	cleanup, err := r.prepareFolder()
	if err != nil {
		return err
	}
	defer cleanup()
	for _, w := range ws {
		if err := r.runWorkload(ctx, w, w.cases(r, r.ds)); err != nil {
			return err
		}
	}
	return r.processFolder(ctx)
}

// loadCorpusStore puts the corpus into a fresh store. It goes through the
// engine's batch append, a thousand sessions per transaction, rather than
// store.Import's transaction per file: the store-import workload measures
// that, on a slice of the corpus, and loading ten thousand files its way
// would take most of the run's time budget. What list reads (the sessions
// table's columns) is kept by the engine's writes either way; the search
// index is not written by appends, so [indexCorpusStore] brings it up to
// date before any search is timed.
func loadCorpusStore(ctx context.Context, path string, c *corpus) (*store.Store, error) {
	if err := removeDB(path); err != nil {
		return nil, err
	}
	s, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		return nil, err
	}
	const chunk = 1000
	for lo := 0; lo < len(c.metas); lo += chunk {
		hi := min(lo+chunk, len(c.metas))
		err := s.Database().Update(ctx, func(tx sessiontree.DatabaseTx) error {
			for i := lo; i < hi; i++ {
				st, err := tx.NewSession(c.metas[i], nil)
				if err != nil {
					return err
				}
				if err := tx.AppendEntries(st, c.entries[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("store: load corpus: %w", err)
		}
	}
	return s, nil
}

// indexCorpusStore indexes every entry of the loaded corpus
// ([store.Store.Index]), so that the search workload times searches, not
// the catch-up the first search after a write does; the store-index
// workload times that.
func indexCorpusStore(ctx context.Context, s *store.Store, c *corpus) error {
	if err := indexAll(ctx, s, c.nEntries); err != nil {
		return fmt.Errorf("store: index corpus: %w", err)
	}
	return nil
}

// indexAll brings s's search index up to date and checks that it indexed
// the want entries written since.
func indexAll(ctx context.Context, s *store.Store, want int) error {
	n, err := s.Index(ctx, store.IndexOptions{})
	if err == nil && n != int64(want) {
		err = fmt.Errorf("%d entries indexed, want %d", n, want)
	}
	return err
}

// The floor of the corpus workloads: a sessions table with an index on
// the update time (a list's first page is the index's first rows), the
// entries, and a trigram FTS5 table over the same text the store indexes.
const corpusFloorSchema = `
CREATE TABLE sessions(pk INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, cwd TEXT, name TEXT, created TEXT,
	updated TEXT, entries INTEGER, messages INTEGER, first_user TEXT);
CREATE INDEX sessions_by_updated ON sessions(updated DESC);
CREATE TABLE entries(pk INTEGER PRIMARY KEY, session INTEGER NOT NULL, id TEXT NOT NULL, parent_id TEXT, json BLOB NOT NULL,
	UNIQUE(session, id));
CREATE VIRTUAL TABLE fts USING fts5(body, tokenize = 'trigram');
CREATE TABLE usage(day TEXT NOT NULL, session INTEGER NOT NULL, input INTEGER, output INTEGER, cache_read INTEGER,
	cache_write INTEGER, cost REAL, PRIMARY KEY(day, session)) WITHOUT ROWID;
`

const (
	corpusFloorList = `SELECT id, cwd, name, created, updated, entries, messages, first_user
FROM sessions ORDER BY updated DESC LIMIT 50`
	corpusFloorSearch = `SELECT rowid FROM fts WHERE fts MATCH ?1 ORDER BY rank LIMIT 20`
	corpusFloorInsert = `INSERT INTO entries(pk, session, id, parent_id, json) VALUES(?, ?, ?, ?, ?)`
)

func buildCorpusFloor(ctx context.Context, dir string, c *corpus) (string, error) {
	path := filepath.Join(dir, backendFloor, "corpus.db")
	if err := removeDB(path); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	db, err := openFloor(ctx, path, "NORMAL")
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, corpusFloorSchema); err != nil {
		return "", fmt.Errorf("corpus floor schema: %w", err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	for i, s := range c.sessions {
		if _, err := tx.ExecContext(ctx, `INSERT INTO sessions VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			i+1, s.ID, s.Cwd, s.Name, s.Created, s.Updated, s.Entries, s.Messages, s.FirstUser); err != nil {
			return "", err
		}
	}
	ins, err := tx.PrepareContext(ctx, corpusFloorInsert)
	if err != nil {
		return "", err
	}
	for k, ce := range c.entryRows {
		if err := floorInsertEntry(ctx, ins, int64(k+1), ce); err != nil {
			return "", err
		}
	}
	if err := floorInsertText(ctx, tx, c.searchBodies(len(c.entryRows))); err != nil {
		return "", err
	}
	if err := floorInsertUsage(ctx, tx, c); err != nil {
		return "", err
	}
	return path, tx.Commit()
}

// searchBodies returns the search text of the corpus's first n entries.
func (c *corpus) searchBodies(n int) []string {
	bodies := make([]string, n)
	for k, ce := range c.entryRows[:n] {
		bodies[k] = searchText(ce.e)
	}
	return bodies
}

// floorInsertText inserts the non-empty bodies into the floor's FTS5
// table, each with its position (from 1) as rowid, like the entries.
func floorInsertText(ctx context.Context, tx *sql.Tx, bodies []string) error {
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO fts(rowid, body) VALUES(?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for k, body := range bodies {
		if body == "" {
			continue
		}
		if _, err := stmt.ExecContext(ctx, k+1, body); err != nil {
			return err
		}
	}
	return nil
}

func floorInsertEntry(ctx context.Context, stmt *sql.Stmt, pk int64, ce corpusEntry) error {
	var parent any
	if ce.e.ParentID != "" {
		parent = ce.e.ParentID
	}
	_, err := stmt.ExecContext(ctx, pk, ce.session, ce.e.ID, parent, []byte(ce.e.Raw))
	return err
}

// ---- workloads ----

func listCases(r *runner, _ *dataset) []benchCase {
	c := r.corpus
	want := min(store.DefaultListLimit, len(c.sessions))
	cs := []benchCase{
		{backend: backendStore, setup: func(ctx context.Context) (*prepared, error) {
			s := r.corpusStore
			if s == nil {
				return nil, errUnsupported
			}
			return &prepared{rows: want, note: "store.List, first page", op: func(ctx context.Context) error {
				page, err := s.List(ctx, store.ListOptions{})
				if err == nil && len(page.Sessions) != want {
					err = fmt.Errorf("list: %d sessions, want %d", len(page.Sessions), want)
				}
				return err
			}}, nil
		}},
	}
	cs = append(cs, piCorpusCases(r, "list", len(c.sessions))...)
	return append(cs,
		corpusFloorCase(r, want, func(ctx context.Context, stmt *sql.Stmt) error {
			rows, err := stmt.QueryContext(ctx)
			if err != nil {
				return err
			}
			defer rows.Close()
			n := 0
			for rows.Next() {
				var s corpusSession
				if err := rows.Scan(&s.ID, &s.Cwd, &s.Name, &s.Created, &s.Updated, &s.Entries, &s.Messages, &s.FirstUser); err != nil {
					return err
				}
				n++
			}
			if err := rows.Err(); err != nil {
				return err
			}
			return checkLen("floor list", n, want)
		}, corpusFloorList),
		readAllCase(r, nil),
	)
}

func searchCases(r *runner, _ *dataset) []benchCase {
	c := r.corpus
	want := min(store.DefaultSearchLimit, c.matches)
	cs := []benchCase{
		{backend: backendStore, setup: func(ctx context.Context) (*prepared, error) {
			s := r.corpusStore
			if s == nil {
				return nil, errUnsupported
			}
			return &prepared{rows: want, note: fmt.Sprintf("store.Search %q, ranked, %d hits", corpusQuery, want), op: func(ctx context.Context) error {
				res, err := s.Search(ctx, corpusQuery, store.SearchOptions{})
				if err == nil && len(res.Hits) != want {
					err = fmt.Errorf("search: %d hits, want %d", len(res.Hits), want)
				}
				return err
			}}, nil
		}},
	}
	cs = append(cs, piCorpusCases(r, "search", c.matches)...)
	return append(cs,
		corpusFloorCase(r, want, func(ctx context.Context, stmt *sql.Stmt) error {
			rows, err := stmt.QueryContext(ctx, corpusQuery)
			if err != nil {
				return err
			}
			defer rows.Close()
			n := 0
			for rows.Next() {
				var pk int64
				if err := rows.Scan(&pk); err != nil {
					return err
				}
				n++
			}
			if err := rows.Err(); err != nil {
				return err
			}
			return checkLen("floor search", n, want)
		}, corpusFloorSearch),
		readAllCase(r, []byte(corpusQuery)),
	)
}

// corpusFloorCase runs one prepared query on the corpus floor.
func corpusFloorCase(r *runner, rows int, op func(ctx context.Context, stmt *sql.Stmt) error, query string) benchCase {
	return benchCase{backend: backendFloor, setup: func(ctx context.Context) (*prepared, error) {
		if r.corpusFloor == "" {
			return nil, errUnsupported
		}
		db, err := openFloor(ctx, r.corpusFloor, "NORMAL")
		if err != nil {
			return nil, err
		}
		stmt, err := db.PrepareContext(ctx, query)
		if err != nil {
			db.Close()
			return nil, err
		}
		return &prepared{rows: rows, op: func(ctx context.Context) error { return op(ctx, stmt) },
			close: func() error { stmt.Close(); return db.Close() }}, nil
	}}
}

// readAllCase reads every file of the corpus (what listing pi's way must
// read); with a needle it also looks for it in each, as grep would.
func readAllCase(r *runner, needle []byte) benchCase {
	return benchCase{backend: backendFileFloor, setup: func(ctx context.Context) (*prepared, error) {
		c := r.corpus
		return &prepared{rows: len(c.files), bytes: c.bytes, op: func(ctx context.Context) error {
			found := 0
			for _, f := range c.files {
				b, err := os.ReadFile(f)
				if err != nil {
					return err
				}
				if needle != nil && bytes.Contains(b, needle) {
					found++
				}
			}
			if needle != nil && found != c.matches {
				return fmt.Errorf("found %q in %d files, want %d", needle, found, c.matches)
			}
			return nil
		}}, nil
	}}
}

// piCorpusCases time each pi release listing the corpus folder
// (SessionManager.list, which reads every file), or "searching" it the way
// pi's session picker does: the list, then a case-insensitive substring
// filter over each session's message text. pi 1.x's list also keeps only
// the sessions whose header names the cwd asked for (every corpus session
// does), a pass 0.x did not make.
func piCorpusCases(r *runner, op string, want int) []benchCase {
	var cs []benchCase
	for _, pi := range r.pis {
		cs = append(cs, piCorpusCase(r, pi, op, want))
	}
	return cs
}

func piCorpusCase(r *runner, pi *piRunner, op string, want int) benchCase {
	return benchCase{backend: pi.backend, setup: func(ctx context.Context) (*prepared, error) {
		c := r.corpus
		dir := filepath.Dir(c.files[0])
		req := piRequest{Op: op, File: dir, Cwd: benchCwd, Query: corpusQuery}
		p := &prepared{rows: want, external: true}
		p.timed = func(ctx context.Context, n int) (time.Duration, error) {
			req.N = n
			rep, err := pi.call(req)
			if err != nil {
				return 0, err
			}
			if rep.Messages != want {
				return 0, fmt.Errorf("pi %s %s found %d, want %d", pi.version, op, rep.Messages, want)
			}
			return time.Duration(rep.NS), nil
		}
		p.op = func(ctx context.Context) error { _, err := p.timed(ctx, 1); return err }
		p.memory = func(ctx context.Context) (memPeak, error) {
			rep, err := pi.call(piRequest{Op: "memory", Kind: op, File: dir, Cwd: benchCwd, Query: corpusQuery})
			if err != nil {
				return memPeak{}, err
			}
			return memPeak{Heap: rep.Heap, RSS: -1}, nil // node keeps its heap between runs: RSS growth is not attributable
		}
		if op == "list" {
			p.note = "SessionManager.list: reads every file"
		} else {
			p.note = "pi's picker: list, then filter message text"
		}
		return p, nil
	}}
}

func storeImportCases(r *runner, _ *dataset) []benchCase {
	c := r.corpus
	note := fmt.Sprintf("%d files", len(c.importFiles))
	return []benchCase{
		{backend: backendStore, setup: func(ctx context.Context) (*prepared, error) {
			if r.corpusStore == nil {
				return nil, errUnsupported
			}
			fs := &freshStore{path: filepath.Join(r.dir, "store", "import.db")}
			p := &prepared{maxIters: 1, rows: c.importEntries, bytes: c.importBytes, before: fs.open, after: fs.close,
				note: note + "; store.Import, search index left pending (store-index)"}
			p.op = func(ctx context.Context) error { return importCorpusFiles(ctx, fs.s, c) }
			return p, nil
		}},
		{backend: backendFloor, setup: func(ctx context.Context) (*prepared, error) {
			if r.corpusFloor == "" {
				return nil, errUnsupported
			}
			path := filepath.Join(r.dir, backendFloor, "import.db")
			rows := c.entryRows[:c.importEntries]
			var db *sql.DB
			p := &prepared{maxIters: 1, rows: c.importEntries, bytes: c.importBytes, note: note + "; one transaction per file, no search index"}
			p.before = func(ctx context.Context) error {
				var err error
				db, err = freshFloor(ctx, path, corpusFloorSchema)
				return err
			}
			p.op = func(ctx context.Context) error {
				for start := 0; start < len(rows); {
					end := start
					for end < len(rows) && rows[end].session == rows[start].session {
						end++
					}
					if err := floorInsertFile(ctx, db, rows[start:end], int64(start)); err != nil {
						return err
					}
					start = end
				}
				return nil
			}
			p.after = func(ctx context.Context) error {
				err := db.Close()
				removeDB(path)
				return err
			}
			return p, nil
		}},
		readFilesCase(c.importFiles, c.importEntries, c.importBytes, note+"; read"),
	}
}

// readFilesCase is the file floor of an import of files: reading each
// whole, as any importer must.
func readFilesCase(files []string, rows int, bytes int64, note string) benchCase {
	return benchCase{backend: backendFileFloor, setup: func(ctx context.Context) (*prepared, error) {
		if len(files) == 0 {
			return nil, errUnsupported
		}
		return &prepared{rows: rows, bytes: bytes, note: note, maxIters: 1, op: func(ctx context.Context) error {
			for _, f := range files {
				if _, err := os.ReadFile(f); err != nil {
					return err
				}
			}
			return nil
		}}, nil
	}}
}

// storeIndexCases time the search index's catch-up after the store-import
// workload's import: [store.Store.Index] over every imported entry, and
// on the floor, the same text inserted into a bare trigram FTS5 table in
// one transaction.
func storeIndexCases(r *runner, _ *dataset) []benchCase {
	c := r.corpus
	note := fmt.Sprintf("%d files imported", len(c.importFiles))
	return []benchCase{
		{backend: backendStore, setup: func(ctx context.Context) (*prepared, error) {
			if r.corpusStore == nil {
				return nil, errUnsupported
			}
			fs := &freshStore{path: filepath.Join(r.dir, "store", "index.db")}
			p := &prepared{maxIters: 1, rows: c.importEntries, bytes: c.importBytes, after: fs.close,
				note: note + " by store.Import, then store.Index"}
			p.before = func(ctx context.Context) error {
				if err := fs.open(ctx); err != nil {
					return err
				}
				return importCorpusFiles(ctx, fs.s, c)
			}
			p.op = func(ctx context.Context) error {
				if err := indexAll(ctx, fs.s, c.importEntries); err != nil {
					return fmt.Errorf("store index: %w", err)
				}
				return nil
			}
			return p, nil
		}},
		floorIndexCase(r, "index.db", c.importEntries, c.importBytes, func() []string { return c.searchBodies(c.importEntries) }, note+"; their text into FTS5, one transaction"),
	}
}

// floorIndexCase is the floor of an index catch-up: the text of rows
// entries (bodies, made when the case is set up) inserted into a bare
// trigram FTS5 table in one transaction, in a fresh database named name.
func floorIndexCase(r *runner, name string, rows int, bytes int64, bodies func() []string, note string) benchCase {
	return benchCase{backend: backendFloor, setup: func(ctx context.Context) (*prepared, error) {
		if r.corpusFloor == "" || rows == 0 {
			return nil, errUnsupported
		}
		path := filepath.Join(r.dir, backendFloor, name)
		texts := bodies()
		var db *sql.DB
		p := &prepared{maxIters: 1, rows: rows, bytes: bytes, note: note}
		p.before = func(ctx context.Context) error {
			var err error
			db, err = freshFloor(ctx, path, corpusFloorSchema)
			return err
		}
		p.op = func(ctx context.Context) error { return floorIndex(ctx, db, texts) }
		p.after = func(ctx context.Context) error {
			err := db.Close()
			removeDB(path)
			return err
		}
		return p, nil
	}}
}

// freshStore is a store opened on a new database before each run of an
// import or index workload and removed after it.
type freshStore struct {
	path string
	s    *store.Store
}

func (fs *freshStore) open(ctx context.Context) error {
	if err := removeDB(fs.path); err != nil {
		return err
	}
	var err error
	fs.s, err = store.Open(ctx, fs.path, store.Options{})
	return err
}

func (fs *freshStore) close(context.Context) error {
	err := fs.s.Close()
	removeDB(fs.path)
	return err
}

// importCorpusFiles imports the store-import slice of the corpus into s.
func importCorpusFiles(ctx context.Context, s *store.Store, c *corpus) error {
	rep, err := s.Import(ctx, c.importFiles, store.ImportOptions{})
	if err == nil && rep.Entries != c.importEntries {
		err = fmt.Errorf("store import: %d entries, want %d", rep.Entries, c.importEntries)
	}
	return err
}

// floorIndex indexes bodies in one transaction ([floorInsertText]).
func floorIndex(ctx context.Context, db *sql.DB, bodies []string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := floorInsertText(ctx, tx, bodies); err != nil {
		return err
	}
	return tx.Commit()
}

// floorInsertFile inserts one file's entries in one transaction.
func floorInsertFile(ctx context.Context, db *sql.DB, rows []corpusEntry, pk0 int64) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, corpusFloorInsert)
	if err != nil {
		return err
	}
	for k, ce := range rows {
		if err := floorInsertEntry(ctx, stmt, pk0+int64(k)+1, ce); err != nil {
			return err
		}
	}
	return tx.Commit()
}
