package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// Benchmarks for the speed targets of issue 4. The large fixtures are
// built once per test process in a temporary directory (see TestMain) and
// shared by the benchmarks that only read them.
//
//	go test ./engine -run '^$' -bench . -count 5

var (
	benchDir     string
	fixturesOnce sync.Once
	fixtures     benchFixtures
	fixturesErr  error
)

type benchFixtures struct {
	path string
	// big is a 100,000-entry session whose leaf's compaction boundary is
	// 200 entries back.
	big string
	// fork is a session with two 10,000-deep branches meeting 5,000 deep;
	// the leaf is the tip of the first.
	fork       string
	tipA, tipB string
}

// cpuTime is the process's user and system CPU time so far. On a shared,
// noisy machine the CPU time per operation says more than the wall time.
func cpuTime() time.Duration { return engine.CPUTime() }

// measureCPU reports the CPU time per operation from now until the
// returned function is called (or the benchmark ends); call it right
// before the loop, and the stop function right after it when work that
// is not measured follows.
func measureCPU(b *testing.B) (stop func()) {
	start := cpuTime()
	var used time.Duration
	stopped := false
	stop = func() {
		if !stopped {
			stopped, used = true, cpuTime()-start
		}
	}
	b.Cleanup(func() {
		stop()
		if b.N > 0 {
			b.ReportMetric(float64(used)/float64(b.N), "cpu-ns/op")
		}
	})
	return stop
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "engine-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	benchDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const benchTS = "2026-03-01T10:00:00.000Z"

// gen makes realistic entries: alternating user and assistant messages of
// a few hundred bytes, ids from a counter.
type gen struct {
	n      int
	prefix string
}

func (g *gen) id() string {
	g.n++
	return fmt.Sprintf("%s%07x", g.prefix, g.n)
}

func (g *gen) message(parent string) sessiontree.Entry {
	id := g.id()
	var msg string
	if g.n%2 == 1 {
		msg = `{"role":"user","content":"Please look at the failing test in engine/path_test.go and tell me why the boundary is off by one ` + id + `","timestamp":1748768401000}`
	} else {
		msg = `{"role":"assistant","content":[{"type":"text","text":"The walk stops one entry early because the kept entry is compared before it is appended; here is the fix ` + id + `"}],"provider":"anthropic","model":"claude-sonnet-4","usage":{"input":1200,"output":240,"cacheRead":5000,"cacheWrite":70,"totalTokens":6510,"cost":{"total":0.0123}},"stopReason":"stop","timestamp":1748768402000}`
	}
	return mustEntry(sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: []byte(`{"message":` + msg + `}`)}, id, parent)
}

func mustEntry(d sessiontree.Draft, id, parent string) sessiontree.Entry {
	e, err := sessiontree.BuildEntry(d, id, parent, benchTS)
	if err != nil {
		panic(err)
	}
	return e
}

// chain appends n messages under parent and returns them.
func (g *gen) chain(parent string, n int) []sessiontree.Entry {
	out := make([]sessiontree.Entry, 0, n)
	for range n {
		e := g.message(parent)
		out = append(out, e)
		parent = e.ID
	}
	return out
}

func importAll(ctx context.Context, st *engine.Storage, entries []sessiontree.Entry) error {
	for len(entries) > 0 {
		n := min(len(entries), 10000)
		if err := st.AppendBatch(ctx, entries[:n]); err != nil {
			return err
		}
		entries = entries[n:]
	}
	return nil
}

func loadFixtures(b *testing.B) benchFixtures {
	b.Helper()
	fixturesOnce.Do(func() { fixtures, fixturesErr = buildFixtures() })
	if fixturesErr != nil {
		b.Fatal(fixturesErr)
	}
	return fixtures
}

func buildFixtures() (benchFixtures, error) {
	ctx := context.Background()
	f := benchFixtures{path: filepath.Join(benchDir, "fixtures.db")}
	db, err := engine.Open(ctx, f.path, engine.Options{})
	if err != nil {
		return f, err
	}
	defer db.Close()

	big, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/work/big"})
	if err != nil {
		return f, err
	}
	f.big = big.ID()
	g := &gen{prefix: "b"}
	const total = 100000
	entries := g.chain("", total-151)
	// A compaction 150 entries before the leaf keeping the 50 before it:
	// the active path is the last 200 entries.
	kept := entries[len(entries)-50].ID
	comp := mustEntry(sessiontree.Draft{Type: sessiontree.TypeCompaction,
		Fields: []byte(`{"summary":"Earlier work: the engine's path queries.","firstKeptEntryId":"` + kept + `","tokensBefore":150000}`)},
		g.id(), entries[len(entries)-1].ID)
	entries = append(entries, comp)
	entries = append(entries, g.chain(comp.ID, 150)...)
	if err := importAll(ctx, big, entries); err != nil {
		return f, err
	}

	fork, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/work/fork"})
	if err != nil {
		return f, err
	}
	f.fork = fork.ID()
	g = &gen{prefix: "f"}
	trunk := g.chain("", 5000)
	branchB := g.chain(trunk[len(trunk)-1].ID, 5000)
	branchA := g.chain(trunk[len(trunk)-1].ID, 5000)
	f.tipA, f.tipB = branchA[len(branchA)-1].ID, branchB[len(branchB)-1].ID
	all := append(append(trunk, branchB...), branchA...)
	if err := importAll(ctx, fork, all); err != nil {
		return f, err
	}
	return f, db.Check(ctx, "")
}

func openBench(b *testing.B, path string) *engine.DB {
	b.Helper()
	db, err := engine.Open(context.Background(), path, engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// BenchmarkOpenLeaf opens a session of 100,000 entries and reads its leaf
// (target < 1 ms).
func BenchmarkOpenLeaf(b *testing.B) {
	fx := loadFixtures(b)
	db := openBench(b, fx.path)
	ctx := context.Background()
	measureCPU(b)
	for b.Loop() {
		st, err := db.OpenSession(ctx, fx.big)
		if err != nil {
			b.Fatal(err)
		}
		if leaf, err := st.Leaf(ctx); err != nil || leaf == "" {
			b.Fatal(leaf, err)
		}
	}
}

// BenchmarkContext200 builds the context at the leaf of the 100,000-entry
// session, whose compaction boundary is 200 entries back (target < 5 ms).
func BenchmarkContext200(b *testing.B) {
	fx := loadFixtures(b)
	db := openBench(b, fx.path)
	ctx := context.Background()
	st, err := db.OpenSession(ctx, fx.big)
	if err != nil {
		b.Fatal(err)
	}
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	measureCPU(b)
	for b.Loop() {
		c, err := s.Context(ctx, sessiontree.ContextOptions{})
		if err != nil || len(c.Messages) != 201 {
			b.Fatal(len(c.Messages), err)
		}
	}
}

// editFixtures are two sessions of 100,000 entries, built once, with a
// compaction 151 entries before the leaf keeping the 50 before it, as in
// the big fixture: edits has a context_edit at every tenth entry (10,000
// in all, alternately replacing the content of the message before it and
// dropping it), plain has messages there.
type editFixtures struct {
	path         string
	edits, plain string
	// msgs are the context's message counts at the two leaves.
	msgs map[string]int
}

var (
	editsOnce sync.Once
	editsFx   editFixtures
	editsErr  error
)

func loadEditFixtures(b *testing.B) editFixtures {
	b.Helper()
	editsOnce.Do(func() { editsFx, editsErr = buildEditFixtures() })
	if editsErr != nil {
		b.Fatal(editsErr)
	}
	return editsFx
}

// editEntry is entry number g.n+1 of an edit fixture under parent: with
// edits, every tenth is a context_edit of its parent.
func (g *gen) editEntry(parent string, edits bool) sessiontree.Entry {
	if !edits || (g.n+1)%10 != 0 {
		return g.message(parent)
	}
	repl := `null`
	if (g.n+1)%20 == 0 {
		repl = `{"content":[{"type":"text","text":"shortened"}]}`
	}
	return mustEntry(sessiontree.Draft{Type: sessiontree.TypeContextEdit,
		Fields: []byte(`{"targetId":"` + parent + `","replacement":` + repl + `}`)}, g.id(), parent)
}

func buildEditFixtures() (editFixtures, error) {
	ctx := context.Background()
	f := editFixtures{path: filepath.Join(benchDir, "edits.db"), msgs: map[string]int{}}
	db, err := engine.Open(ctx, f.path, engine.Options{})
	if err != nil {
		return f, err
	}
	defer db.Close()
	for _, edits := range []bool{true, false} {
		st, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/work/edits"})
		if err != nil {
			return f, err
		}
		g := &gen{prefix: "e"}
		var entries []sessiontree.Entry
		parent := ""
		add := func(e sessiontree.Entry) {
			entries = append(entries, e)
			parent = e.ID
		}
		for range 99848 {
			add(g.editEntry(parent, edits))
		}
		kept := entries[len(entries)-50].ID
		// Entry 99,849: not a tenth, so both sessions have 10,000 edit slots.
		add(mustEntry(sessiontree.Draft{Type: sessiontree.TypeCompaction,
			Fields: []byte(`{"summary":"Earlier work.","firstKeptEntryId":"` + kept + `","tokensBefore":150000}`)}, g.id(), parent))
		for range 151 {
			add(g.editEntry(parent, edits))
		}
		if err := importAll(ctx, st, entries); err != nil {
			return f, err
		}
		c, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).Context(ctx, sessiontree.ContextOptions{})
		if err != nil {
			return f, err
		}
		if edits {
			f.edits = st.ID()
		} else {
			f.plain = st.ID()
		}
		f.msgs[st.ID()] = len(c.Messages)
	}
	return f, db.Check(ctx, "")
}

// BenchmarkResumeWithEdits resumes a session of 100,000 entries (opens it
// and builds the context at its leaf, 202 entries after the compaction
// cut) with 10,000 context_edit entries spread over it, and the same
// session without them: building the context reads the rows of the
// context, so the edits elsewhere cost nothing.
func BenchmarkResumeWithEdits(b *testing.B) {
	fx := loadEditFixtures(b)
	db := openBench(b, fx.path)
	ctx := context.Background()
	for _, bc := range []struct{ name, id string }{{"edits=10000", fx.edits}, {"edits=0", fx.plain}} {
		b.Run(bc.name, func(b *testing.B) {
			measureCPU(b)
			for b.Loop() {
				st, err := db.OpenSession(ctx, bc.id)
				if err != nil {
					b.Fatal(err)
				}
				c, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).Context(ctx, sessiontree.ContextOptions{})
				if err != nil || len(c.Messages) != fx.msgs[bc.id] {
					b.Fatal(len(c.Messages), err)
				}
			}
			b.ReportMetric(float64(fx.msgs[bc.id]), "messages")
		})
	}
}

// BenchmarkActivePath10k reads a 10,000-entry active path (target < 30 ms).
func BenchmarkActivePath10k(b *testing.B) {
	fx := loadFixtures(b)
	db := openBench(b, fx.path)
	ctx := context.Background()
	st, err := db.OpenSession(ctx, fx.fork)
	if err != nil {
		b.Fatal(err)
	}
	leaf, err := st.Leaf(ctx)
	if err != nil {
		b.Fatal(err)
	}
	measureCPU(b)
	for b.Loop() {
		p, err := st.Path(ctx, leaf)
		if err != nil || len(p) != 10000 {
			b.Fatal(len(p), err)
		}
	}
}

// BenchmarkBareRangeScan is the floor BenchmarkActivePath10k is compared
// with (issue 7's "bare range scan"): the same 10,000 JSON texts stored
// inline in a table keyed by depth, read with one prepared range query
// through database/sql into fresh byte slices, as a caller that keeps the
// rows must.
func BenchmarkBareRangeScan(b *testing.B) {
	fx := loadFixtures(b)
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "bare.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=cache_size(-16384)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE active (depth INTEGER PRIMARY KEY, json BLOB NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `ATTACH DATABASE ? AS fx`, "file:"+fx.path+"?mode=ro"); err != nil {
		b.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO active SELECT b.depth, CAST(e.raw AS BLOB)
FROM fx.sessions s JOIN fx.branch b ON b.session = s.pk JOIN fx.entries e ON e.pk = b.entry
WHERE s.id = ? ORDER BY b.depth`, fx.fork); err != nil {
		b.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `DETACH DATABASE fx`); err != nil {
		b.Fatal(err)
	}
	stmt, err := db.PrepareContext(ctx, `SELECT json FROM active WHERE depth >= ? ORDER BY depth`)
	if err != nil {
		b.Fatal(err)
	}
	defer stmt.Close()
	measureCPU(b)
	for b.Loop() {
		rows, err := stmt.QueryContext(ctx, 1)
		if err != nil {
			b.Fatal(err)
		}
		var out [][]byte
		for rows.Next() {
			var raw []byte
			if err := rows.Scan(&raw); err != nil {
				b.Fatal(err)
			}
			out = append(out, raw)
		}
		if err := rows.Close(); err != nil || len(out) != 10000 {
			b.Fatal(len(out), err)
		}
	}
}

// BenchmarkMoveLeaf moves the leaf between the tips of two 10,000-deep
// branches that meet 5,000 deep (target < 20 ms per move). It works on a
// copy of the fixture, since each move appends a leaf entry.
func BenchmarkMoveLeaf(b *testing.B) {
	fx := loadFixtures(b)
	path := filepath.Join(b.TempDir(), "fork.db")
	copyFile(b, fx.path, path)
	db := openBench(b, path)
	ctx := context.Background()
	st, err := db.OpenSession(ctx, fx.fork)
	if err != nil {
		b.Fatal(err)
	}
	tips := []string{fx.tipB, fx.tipA}
	i := 0
	stop := measureCPU(b)
	for b.Loop() {
		if _, err := st.SetLeaf(ctx, tips[i%2], sessiontree.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
	stop()
	b.StopTimer()
	if err := db.Check(ctx, fx.fork); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkMoveLeafNear moves the leaf of the 100,000-entry session
// between its tip and the tip of a 10-entry side branch that leaves the
// main line 10 entries before it: the cost follows the 10 rows that
// change, not the depth.
func BenchmarkMoveLeafNear(b *testing.B) {
	fx := loadFixtures(b)
	path := filepath.Join(b.TempDir(), "near.db")
	copyFile(b, fx.path, path)
	db := openBench(b, path)
	ctx := context.Background()
	st, err := db.OpenSession(ctx, fx.big)
	if err != nil {
		b.Fatal(err)
	}
	tip, err := st.Leaf(ctx)
	if err != nil {
		b.Fatal(err)
	}
	p, err := st.FullPath(ctx, tip)
	if err != nil {
		b.Fatal(err)
	}
	g := &gen{prefix: "n"}
	side := g.chain(p[len(p)-11].ID, 10)
	if err := st.AppendBatch(ctx, side); err != nil {
		b.Fatal(err)
	}
	tips := []string{tip, side[len(side)-1].ID}
	i := 0
	stop := measureCPU(b)
	for b.Loop() {
		if _, err := st.SetLeaf(ctx, tips[i%2], sessiontree.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
	stop()
	b.StopTimer()
	if err := db.Check(ctx, fx.big); err != nil {
		b.Fatal(err)
	}
}

func copyFile(b testing.TB, from, to string) {
	b.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		b.Fatal(err)
	}
}

var benchDraft = func() sessiontree.Draft {
	g := &gen{prefix: "x", n: 1}
	e := g.message("")
	msg, _ := e.Field("message")
	return sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: []byte(`{"message":` + string(msg) + `}`), Timestamp: benchTS}
}()

// BenchmarkAppend appends single entries (assistant messages with
// usage), one transaction each, with WAL and synchronous=NORMAL (target
// >= 20,000 per second).
func BenchmarkAppend(b *testing.B) { benchAppend(b, benchDraft) }

// benchAppend appends d to a fresh session, one transaction each.
func benchAppend(b *testing.B, d sessiontree.Draft) {
	db := openBench(b, filepath.Join(b.TempDir(), "append.db"))
	ctx := context.Background()
	st, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/work/append"})
	if err != nil {
		b.Fatal(err)
	}
	measureCPU(b)
	start := time.Now()
	for b.Loop() {
		if _, err := st.Append(ctx, d, sessiontree.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "entries/s")
}

// BenchmarkBareInsert is the floor BenchmarkAppend is compared with: a
// prepared INSERT of the same payload into a table with no index, one
// autocommit transaction per row, through modernc.org/sqlite with the same
// pragmas.
func BenchmarkBareInsert(b *testing.B) {
	db := openBare(b)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (id INTEGER PRIMARY KEY, raw TEXT NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	stmt, err := db.PrepareContext(ctx, `INSERT INTO t (raw) VALUES (?)`)
	if err != nil {
		b.Fatal(err)
	}
	defer stmt.Close()
	raw := string(benchDraft.Fields)
	measureCPU(b)
	start := time.Now()
	for b.Loop() {
		if _, err := stmt.ExecContext(ctx, raw); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "entries/s")
}

// openBare opens a fresh database of bare modernc SQLite with the engine's
// pragmas (WAL, synchronous=NORMAL) on one connection, for the floors.
func openBare(b *testing.B) *sql.DB {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bare.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(5000)")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	return db
}

// BenchmarkBareAppendFloor is the least an append can write under the
// issue's schema, in bare SQL: one BEGIN IMMEDIATE transaction inserting
// the entry (its row and its unique (session, id) index entry), its
// materialized-branch row and updating the session's state row, through
// prepared statements on one connection. No parsing, validation, labels,
// usage or type columns: what no implementation of the design can avoid.
func BenchmarkBareAppendFloor(b *testing.B) {
	db := openBare(b)
	ctx := context.Background()
	for _, stmt := range []string{
		`CREATE TABLE sessions (pk INTEGER PRIMARY KEY, leaf TEXT, depth INTEGER NOT NULL, count INTEGER NOT NULL)`,
		`CREATE TABLE entries (pk INTEGER PRIMARY KEY, session INTEGER NOT NULL, id TEXT NOT NULL, parent_id TEXT, raw TEXT NOT NULL, UNIQUE (session, id))`,
		`CREATE TABLE branch (session INTEGER NOT NULL, depth INTEGER NOT NULL, entry INTEGER NOT NULL, PRIMARY KEY (session, depth)) WITHOUT ROWID`,
		`INSERT INTO sessions VALUES (1, NULL, 0, 0)`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			b.Fatal(err)
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	prepare := func(q string) *sql.Stmt {
		st, err := conn.PrepareContext(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		return st
	}
	begin, commit := prepare(`BEGIN IMMEDIATE`), prepare(`COMMIT`)
	insert := prepare(`INSERT INTO entries (pk, session, id, parent_id, raw) VALUES (?, 1, ?, ?, ?)`)
	extend := prepare(`INSERT INTO branch (session, depth, entry) VALUES (1, ?, ?)`)
	state := prepare(`UPDATE sessions SET leaf = ?, depth = ?, count = ? WHERE pk = 1`)
	raw := string(benchDraft.Fields)
	var parent any
	n := int64(0)
	measureCPU(b)
	start := time.Now()
	for b.Loop() {
		n++
		id := fmt.Sprintf("%08x", n)
		for _, step := range []struct {
			st   *sql.Stmt
			args []any
		}{{begin, nil}, {insert, []any{n, id, parent, raw}}, {extend, []any{n, n}}, {state, []any{id, n, n}}, {commit, nil}} {
			if _, err := step.st.ExecContext(ctx, step.args...); err != nil {
				b.Fatal(err)
			}
		}
		parent = id
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "entries/s")
}

// BenchmarkBareBatchInsert is the floor BenchmarkBatchImport is compared
// with (the bench program's): the same 10,000 entries per transaction as
// (id, parent_id, json) rows through one prepared INSERT, into a table with
// a unique index on id.
func BenchmarkBareBatchInsert(b *testing.B) {
	db := openBare(b)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE entries (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, parent_id TEXT, json BLOB NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	const n = 10000
	var batches [][]sessiontree.Entry
	for i := range b.N + 1 {
		g := &gen{prefix: fmt.Sprintf("%x", i%16)}
		batches = append(batches, g.chain("", n))
	}
	b.ResetTimer()
	measureCPU(b)
	start := time.Now()
	for i := range b.N {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO entries (id, parent_id, json) VALUES (?, ?, ?)`)
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range batches[i] {
			var parent any
			if e.ParentID != "" {
				parent = e.ParentID
			}
			if _, err := stmt.ExecContext(ctx, fmt.Sprintf("%d-%s", i, e.ID), parent, []byte(e.Raw)); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*n)/time.Since(start).Seconds(), "entries/s")
}

// BenchmarkBatchImport imports 10,000 entries per AppendBatch into a
// fresh session (target >= 150,000 entries per second).
func BenchmarkBatchImport(b *testing.B) {
	db := openBench(b, filepath.Join(b.TempDir(), "import.db"))
	ctx := context.Background()
	const n = 10000
	var sessions []*engine.Storage
	var batches [][]sessiontree.Entry
	for i := range b.N + 1 {
		st, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/work/import"})
		if err != nil {
			b.Fatal(err)
		}
		g := &gen{prefix: fmt.Sprintf("%x", i%16)}
		sessions = append(sessions, st)
		batches = append(batches, g.chain("", n))
	}
	b.ResetTimer()
	measureCPU(b)
	start := time.Now()
	for i := range b.N {
		if err := sessions[i].AppendBatch(ctx, batches[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*n)/time.Since(start).Seconds(), "entries/s")
}
