package engine_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/internal/childenv"
	"github.com/sessiontree/sessiontree/internal/testdb"
)

// openDB opens a database for a test; its cleanup checks every session
// (integrity_check, the branch against parent ids, counters, labels) and
// closes it.
func openDB(t testing.TB, path string, opts engine.Options) *engine.DB {
	t.Helper()
	db, err := engine.Open(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Check(context.Background(), ""); err != nil && !errors.Is(err, sessiontree.ErrClosed) {
			t.Errorf("Check() = %v", err)
		}
		db.Close()
	})
	return db
}

// newDB opens a new database in a temporary directory, as openDB does: a
// copy of one made once (emptyDB).
func newDB(t testing.TB) *engine.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	emptyDB.CopyTo(t, path)
	return openDB(t, path, engine.Options{})
}

// emptyDB is a new database, made once per test binary.
var emptyDB = testdb.New(func(ctx context.Context, path string) error {
	db, err := engine.Open(ctx, path, engine.Options{})
	if err != nil {
		return err
	}
	return db.Close()
})

// openDamaged opens a fresh database (a copy of emptyDB) for a test that
// damages it on purpose: unlike openDB, closing it runs no check.
func openDamaged(t testing.TB) *engine.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	emptyDB.CopyTo(t, path)
	db, err := engine.Open(context.Background(), path, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newSession(t testing.TB, db *engine.DB) *engine.Storage {
	t.Helper()
	st, err := db.CreateSession(context.Background(), sessiontree.SessionMeta{Cwd: "/work/test"})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func userMsg(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"role": "user", "content": text})
	return b
}

func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open(testdb.EngineDriver(), "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=recursive_triggers(1)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestReopen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	db, err := engine.Open(ctx, path, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := newSession(t, db)
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	u, err := s.AppendMessage(ctx, userMsg("one"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendThinkingLevel(ctx, "high"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetLabel(ctx, u.ID, "start"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetName(ctx, "named"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MoveTo(ctx, u.ID, &sessiontree.BranchSummary{Summary: "left"}); err != nil {
		t.Fatal(err)
	}
	before, err := s.Context(ctx, sessiontree.ContextOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := st.Leaf(ctx)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Leaf(ctx); !errors.Is(err, sessiontree.ErrClosed) {
		t.Errorf("Leaf() after DB.Close = %v; want ErrClosed", err)
	}

	db = openDB(t, path, engine.Options{})
	st2, err := db.OpenSession(ctx, st.ID())
	if err != nil {
		t.Fatal(err)
	}
	s2 := sessiontree.NewSession(st2, sessiontree.SessionOptions{})
	after, err := s2.Context(ctx, sessiontree.ContextOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("context after reopen (-before +after):\n%s", diff)
	}
	if got, _ := st2.Leaf(ctx); got != leaf {
		t.Errorf("Leaf() after reopen = %q; want %q", got, leaf)
	}
	if got, _ := st2.Labels(ctx); !cmp.Equal(got, map[string]string{u.ID: "start"}) {
		t.Errorf("Labels() after reopen = %v", got)
	}
	if got, _ := st2.Name(ctx); got != "named" {
		t.Errorf("Name() after reopen = %q", got)
	}
	if _, err := db.OpenSession(ctx, "no-such-session"); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("OpenSession(missing) = %v; want ErrNotFound", err)
	}
}

func TestAppendOnlyTriggers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	db := openDB(t, path, engine.Options{})
	st := newSession(t, db)
	other := newSession(t, db)
	for _, s := range []*engine.Storage{st, other} {
		for i := range 3 {
			d := sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":` + string(userMsg(strconv.Itoa(i))) + `}`)}
			if _, err := s.Append(ctx, d, sessiontree.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	raw := rawDB(t, path)
	for _, stmt := range []string{
		`UPDATE entries SET raw = '{}' WHERE seq = 1`,
		`UPDATE entries SET parent_id = NULL`,
		`DELETE FROM entries WHERE seq = 3`,
		`DELETE FROM entries`,
		`INSERT OR REPLACE INTO entries SELECT * FROM entries WHERE seq = 1`,
	} {
		if _, err := raw.ExecContext(ctx, stmt); err == nil {
			t.Errorf("%s: succeeded; want the append-only trigger to refuse it", stmt)
		}
	}
	if _, err := raw.ExecContext(ctx, `UPDATE sessions SET deleting = 1 WHERE id = ?`, st.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `UPDATE sessions SET deleting = 0 WHERE id = ?`, st.ID()); err == nil {
		t.Errorf("un-marking a deleting session succeeded")
	}
	if err := db.DeleteSession(ctx, st.ID(), sessiontree.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.OpenSession(ctx, st.ID()); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("OpenSession(deleted) = %v; want ErrNotFound", err)
	}
	if log, err := other.Log(ctx, 0, 0); err != nil || len(log) != 3 {
		t.Errorf("other session's log = %d entries, %v; want 3", len(log), err)
	}
	var n int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM entries`).Scan(&n); err != nil || n != 3 {
		t.Errorf("entries left = %d, %v; want 3", n, err)
	}
	if err := db.DeleteSession(ctx, st.ID(), sessiontree.DeleteOptions{}); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("DeleteSession(deleted) = %v; want ErrNotFound", err)
	}
}

// TestConcurrentGoroutines appends from goroutines, each with its own
// Storage of the same session: one chain, nothing lost.
func TestConcurrentGoroutines(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	st := newSession(t, db)
	const workers, each = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine, err := db.OpenSession(ctx, st.ID())
			if err != nil {
				errs <- err
				return
			}
			s := sessiontree.NewSession(mine, sessiontree.SessionOptions{})
			for i := range each {
				if _, err := s.AppendMessage(ctx, userMsg(fmt.Sprintf("w%d-%d", w, i))); err != nil {
					errs <- err
					return
				}
				if i%10 == 0 {
					if _, err := s.Context(ctx, sessiontree.ContextOptions{}); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkChain(t, st, workers*each)
}

// checkChain checks the session is one chain of n entries from the leaf.
func checkChain(t *testing.T, st *engine.Storage, n int) {
	t.Helper()
	ctx := context.Background()
	leaf, err := st.Leaf(ctx)
	if err != nil {
		t.Fatal(err)
	}
	path, err := st.FullPath(ctx, leaf)
	if err != nil {
		t.Fatal(err)
	}
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(path) != n || len(log) != n {
		t.Errorf("after %d appends: path %d, log %d; want one chain of all", n, len(path), len(log))
	}
}

const childEnv = "ENGINE_TEST_CHILD"

// TestMultiProcess runs this test binary as several processes appending to
// one session at once, with the parent appending too.
func TestMultiProcess(t *testing.T) {
	t.Parallel()
	if spec := os.Getenv(childEnv); spec != "" {
		return // the child's work is in TestMultiProcessChild
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	db := openDB(t, path, engine.Options{})
	st := newSession(t, db)
	const procs, each = 3, 60
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMultiProcessChild$", "-test.count=1")
		cmd.Env = childenv.Env(fmt.Sprintf("%s=%s|%s|%d|p%d", childEnv, path, st.ID(), each, p))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	for i := range each {
		if _, err := s.AppendMessage(ctx, userMsg(fmt.Sprintf("parent-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child %d: %v\n%s", i, err, outs[i])
		}
	}
	checkChain(t, st, (procs+1)*each)
}

// TestMultiProcessChild is the child of TestMultiProcess.
func TestMultiProcessChild(t *testing.T) {
	spec := os.Getenv(childEnv)
	if spec == "" {
		t.Skip("run by TestMultiProcess")
	}
	var path, id, tag string
	var n int
	parts := bytes.Split([]byte(spec), []byte("|"))
	path, id, tag = string(parts[0]), string(parts[1]), string(parts[3])
	n, _ = strconv.Atoi(string(parts[2]))
	ctx := context.Background()
	db, err := engine.Open(ctx, path, engine.Options{BusyTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := db.OpenSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	for i := range n {
		if _, err := s.AppendMessage(ctx, userMsg(fmt.Sprintf("%s-%d", tag, i))); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRefusesForeignFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	makeSQLite := func(name string, stmts ...string) string {
		path := filepath.Join(dir, name)
		db, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range stmts {
			if _, err := db.Exec(s); err != nil {
				t.Fatal(err)
			}
		}
		db.Close()
		return path
	}
	notSQLite := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notSQLite, bytes.Repeat([]byte("not a database\n"), 100), 0o600); err != nil {
		t.Fatal(err)
	}
	newer := filepath.Join(dir, "newer.db")
	db, err := engine.Open(ctx, newer, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw := rawDB(t, newer)
	for _, s := range []string{
		`INSERT INTO schema_migrations VALUES (99, '0099_future.sql', 'x', '2030-01-01T00:00:00.000Z')`,
		`PRAGMA user_version = 99`,
	} {
		if _, err := raw.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	newerRecordOnly := filepath.Join(dir, "newer-record.db")
	db, err = engine.Open(ctx, newerRecordOnly, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw = rawDB(t, newerRecordOnly)
	if _, err := raw.Exec(`INSERT INTO schema_migrations VALUES (99, '0099_future.sql', 'x', 'now')`); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	tests := []struct {
		name string
		path string
		want error
	}{
		{"not SQLite", notSQLite, engine.ErrNotDatabase},
		{"SQLite of another program", makeSQLite("other.db", `CREATE TABLE notes (x)`), engine.ErrForeign},
		{"another application_id", makeSQLite("appid.db", `PRAGMA application_id = 42`, `CREATE TABLE t (x)`), engine.ErrForeign},
		{"newer schema", newer, engine.ErrNewer},
		{"newer migration record", newerRecordOnly, engine.ErrNewer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := os.ReadFile(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			db, err := engine.Open(ctx, tt.path, engine.Options{})
			if err == nil {
				db.Close()
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Open(%s) = %v; want %v", tt.name, err, tt.want)
			}
			after, err := os.ReadFile(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Errorf("Open(%s) changed the file", tt.name)
			}
		})
	}
}

func TestFileModes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "a", "b")
	path := filepath.Join(dir, "sessions.db")
	db := openDB(t, path, engine.Options{})
	st := newSession(t, db)
	d := sessiontree.Draft{Type: sessiontree.TypeCustom, Fields: json.RawMessage(`{"customType":"x"}`)}
	if _, err := st.Append(ctx, d, sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode = %v; want 0600", filepath.Base(p), fi.Mode().Perm())
		}
	}
	for _, p := range []string{dir, filepath.Dir(dir)} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("directory %s mode = %v; want 0700", p, fi.Mode().Perm())
		}
	}
}

func TestSynchronousOption(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		opt  engine.Synchronous
		want int
	}{{engine.SyncNormal, 1}, {engine.SyncFull, 2}} {
		path := filepath.Join(t.TempDir(), "s.db")
		db := openDB(t, path, engine.Options{Synchronous: tt.opt})
		var got int
		if err := db.QueryPragma(context.Background(), "synchronous", &got); err != nil || got != tt.want {
			t.Errorf("synchronous with option %d = %d, %v; want %d", tt.opt, got, err, tt.want)
		}
	}
}

// TestBusyIsRetriedThenLocked holds the write lock from another
// connection: a write waits, succeeds once the lock is released within the
// busy timeout, and fails with ErrLocked when it is not.
func TestBusyIsRetriedThenLocked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	db := openDB(t, path, engine.Options{BusyTimeout: 300 * time.Millisecond})
	st := newSession(t, db)
	d := sessiontree.Draft{Type: sessiontree.TypeCustom, Fields: json.RawMessage(`{"customType":"x"}`)}
	raw := rawDB(t, path)
	conn, err := raw.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, d, sessiontree.AppendOptions{}); !errors.Is(err, sessiontree.ErrLocked) {
		t.Errorf("Append under another writer's lock = %v; want ErrLocked", err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		conn.ExecContext(ctx, "COMMIT")
	}()
	if _, err := st.Append(ctx, d, sessiontree.AppendOptions{}); err != nil {
		t.Errorf("Append after the lock is released = %v", err)
	}
}

// TestCheckFindsDamage damages the materialized branch and a counter
// behind the engine's back; Check reports it.
func TestCheckFindsDamage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	template, id := damageTemplate(t)
	for _, damage := range []string{
		`DELETE FROM branch WHERE depth = 2`,
		`UPDATE branch SET entry = entry - 1 WHERE depth = 3`,
		`UPDATE sessions SET message_count = 7`,
		`UPDATE sessions SET tool_calls = 1`,
		`UPDATE sessions SET cost = cost + 1e-15`,
		`UPDATE sessions SET first_user_text = 'other'`,
		`UPDATE sessions SET usage_buckets = json_set(usage_buckets, '$[0].first_seq', 1)`,
		`UPDATE sessions SET usage_buckets = json_set(usage_buckets, '$[0].cost', usage_buckets ->> '$[0].cost' * 2)`,
		`UPDATE sessions SET usage_buckets = json_set(usage_buckets, '$[0].bucket', 'p/other')`,
		`UPDATE sessions SET usage_buckets = '[]'`,
		`UPDATE sessions SET usage_buckets = json_remove(usage_buckets, '$[0].tokens')`,
		`UPDATE sessions SET usage_buckets = '[{"bucket":"p/m","first_seq":5,"tokens":3,"cost":"0.1"}]'`,
		`UPDATE sessions SET usage_buckets = '{'`,
		`DELETE FROM labels`,
		`UPDATE sessions SET branch_count = branch_count + 1`,
		`UPDATE sessions SET root_count = root_count + 1`,
		`UPDATE sessions SET compaction_count = 1`,
		`UPDATE sessions SET label_count = 0`,
		`UPDATE sessions SET updated_at = '2001-01-01T00:00:00.000Z'`,
	} {
		t.Run(damage, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.db")
			copyFile(t, template, path)
			db, err := engine.Open(ctx, path, engine.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.Check(ctx, id); err != nil {
				t.Fatalf("Check() before damage = %v", err)
			}
			if _, err := rawDB(t, path).ExecContext(ctx, damage); err != nil {
				t.Fatal(err)
			}
			if err := db.Check(ctx, id); !errors.Is(err, sessiontree.ErrCorrupt) {
				t.Errorf("Check() after %q = %v; want ErrCorrupt", damage, err)
			}
		})
	}
}

// TestCheckReportsPageDamage overwrites one page of the entries table's
// b-tree with garbage, behind SQLite's back: the whole database's Check
// reports what integrity_check lists before it stops at the page (the
// tree and the page), and goes on to name each session the page held
// rows of, as their own checks find them, and no other.
func TestCheckReportsPageDamage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	db := openDB(t, path, engine.Options{}) // closed before its cleanup checks
	var ids []string
	for k := range 4 {
		st := newSession(t, db)
		s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
		for i := range 30 {
			if _, err := s.AppendMessage(ctx, userMsg(fmt.Sprintf("%d-%d %0300d", k, i, i))); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, st.ID())
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var page int64
	if err := rawDB(t, path).QueryRowContext(ctx, `SELECT pageno FROM dbstat WHERE name = 'entries' AND pagetype = 'leaf'
		ORDER BY pageno LIMIT 1 OFFSET 10`).Scan(&page); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xA5}, 4096), (page-1)*4096); err != nil {
		t.Fatal(err)
	}
	f.Close()
	db, err = engine.Open(ctx, path, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var damaged []string
	for _, id := range ids {
		if err := db.Check(ctx, id); errors.Is(err, sessiontree.ErrCorrupt) {
			damaged = append(damaged, id)
		} else if err != nil {
			t.Fatalf("Check(%s) = %v", id, err)
		}
	}
	if len(damaged) == 0 || len(damaged) == len(ids) {
		t.Fatalf("page %d damages %d sessions of %d; want some", page, len(damaged), len(ids))
	}
	err = db.Check(ctx, "")
	if !errors.Is(err, sessiontree.ErrCorrupt) {
		t.Fatalf("Check() = %v; want ErrCorrupt", err)
	}
	msg := err.Error()
	for _, want := range []string{"PRAGMA integrity_check", fmt.Sprintf("page %d:", page)} {
		if !strings.Contains(msg, want) {
			t.Errorf("Check() = %v; want it to say %q", err, want)
		}
	}
	for _, id := range ids {
		if named := strings.Contains(msg, "session "+id); named != slices.Contains(damaged, id) {
			t.Errorf("Check() names session %s: %v; want %v (its own check found it damaged)", id, named, !named)
		}
	}
}

// damageTemplate makes the database TestCheckFindsDamage damages a copy
// of for each case, once (a new database each, its migrations and
// appends, took most of the test's time under the race detector): a
// session of four messages, a label and an assistant message with usage.
// It returns the file and the session's id.
func damageTemplate(t *testing.T) (path, id string) {
	t.Helper()
	ctx := context.Background()
	path = filepath.Join(t.TempDir(), "template.db")
	db, err := engine.Open(ctx, path, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := newSession(t, db)
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	var first string
	for i := range 4 {
		e, err := s.AppendMessage(ctx, userMsg(strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		if first == "" {
			first = e.ID
		}
	}
	if _, err := s.SetLabel(ctx, first, "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(ctx, json.RawMessage(`{"role":"assistant","content":[],"provider":"p","model":"m",`+
		`"usage":{"input":1,"output":2,"cost":{"total":0.1}}}`)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil { // checkpointed: the file is whole
		t.Fatal(err)
	}
	return path, st.ID()
}

// TestPathsOffTheBranch compares every path and state the engine answers
// with the root package's walk over the same log, in a tree with
// branches, compactions of both kinds and moves.
func TestPathsOffTheBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	st := newSession(t, db)
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	var ids []string
	add := func(e sessiontree.Entry, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	for round := range 6 {
		for i := range 5 {
			add(s.AppendMessage(ctx, userMsg(fmt.Sprintf("r%d-%d", round, i))))
		}
		add(s.AppendModelChange(ctx, "p", fmt.Sprintf("m%d", round)))
		switch round % 3 {
		case 0:
			add(s.AppendCompaction(ctx, sessiontree.Compaction{Summary: "s", FirstKeptEntryID: ids[len(ids)-3]}))
		case 1:
			add(s.AppendCompaction(ctx, sessiontree.Compaction{Summary: "t", RetainedTail: []json.RawMessage{userMsg("kept")}}))
		case 2:
			add(s.AppendCompaction(ctx, sessiontree.Compaction{Summary: "u", FirstKeptEntryID: ids[0]}))
		}
		add(s.AppendThinkingLevel(ctx, fmt.Sprintf("t%d", round)))
		if _, err := s.MoveTo(ctx, ids[len(ids)*2/3], nil); err != nil {
			t.Fatal(err)
		}
	}
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]sessiontree.Entry{}
	for _, e := range log {
		byID[e.ID] = e
	}
	lookup := func(id string) (sessiontree.Entry, bool) { e, ok := byID[id]; return e, ok }
	for _, id := range ids {
		for _, full := range []bool{false, true} {
			want, err := sessiontree.WalkPath(ctx, id, full, len(log), lookup)
			if err != nil {
				t.Fatal(err)
			}
			got, err := st.Path(ctx, id)
			if full {
				got, err = st.FullPath(ctx, id)
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(idsOf(want), idsOf(got)); diff != "" {
				t.Errorf("path(%s, full=%v) (-walk +engine):\n%s", id, full, diff)
			}
			if full {
				wantState := sessiontree.DefaultState()
				for _, e := range want {
					wantState.Apply(e)
				}
				gotState, err := st.State(ctx, id)
				if err != nil || !cmp.Equal(wantState, gotState) {
					t.Errorf("State(%s) = %+v, %v; want %+v", id, gotState, err, wantState)
				}
			}
		}
	}
}

func idsOf(es []sessiontree.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// TestBatchValidation checks that a refused batch leaves nothing behind.
func TestBatchValidation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	st := newSession(t, db)
	e := func(id, parent string) sessiontree.Entry {
		d := sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":` + string(userMsg(id)) + `}`)}
		en, err := sessiontree.BuildEntry(d, id, parent, "2026-03-01T10:00:00.000Z")
		if err != nil {
			t.Fatal(err)
		}
		return en
	}
	if err := st.AppendBatch(ctx, []sessiontree.Entry{e("a", ""), e("b", "a")}); err != nil {
		t.Fatal(err)
	}
	many := make([]sessiontree.Entry, 0, 200)
	parent := "b"
	for i := range 200 {
		id := fmt.Sprintf("n%03d", i)
		many = append(many, e(id, parent))
		parent = id
	}
	tests := []struct {
		name  string
		batch []sessiontree.Entry
		want  error
	}{
		{"missing parent", []sessiontree.Entry{e("c", "b"), e("d", "zz")}, sessiontree.ErrNotFound},
		{"parent later in the batch", []sessiontree.Entry{e("c", "d"), e("d", "b")}, sessiontree.ErrNotFound},
		{"duplicate in batch", []sessiontree.Entry{e("c", "b"), e("c", "b")}, sessiontree.ErrCorrupt},
		{"duplicate of stored", append(append([]sessiontree.Entry(nil), many[:150]...), e("a", "n001")), sessiontree.ErrConflict},
		{"duplicate of stored in a full chunk", append(append([]sessiontree.Entry(nil), many[:10]...), append([]sessiontree.Entry{e("b", "n009")}, many[10:]...)...), sessiontree.ErrConflict},
		{"invalid", []sessiontree.Entry{labelWithoutTarget("x", "b")}, sessiontree.ErrInvalidEntry},
		{"fields not its JSON", []sessiontree.Entry{{Type: "future_thing", ID: "x", ParentID: "b", Timestamp: "t", Raw: json.RawMessage(`{}`)}}, sessiontree.ErrInvalidEntry},
	}
	for _, tt := range tests {
		if err := st.AppendBatch(ctx, tt.batch); !errors.Is(err, tt.want) {
			t.Errorf("AppendBatch(%s) = %v; want %v", tt.name, err, tt.want)
		}
		if log, _ := st.Log(ctx, 0, 0); len(log) != 2 {
			t.Errorf("after AppendBatch(%s) the log has %d entries; want 2", tt.name, len(log))
		}
	}
	if err := st.AppendBatch(ctx, many); err != nil {
		t.Fatal(err)
	}
	checkChain(t, st, 202)
}

// TestAppendsSeeOtherWriters alternates appends to one session between
// two DB values on the same file, and a transaction of DB.Update that
// moves the leaf with a batch: the write connection remembers the head
// of the session it appended to, and must notice each time that someone
// else has written since.
func TestAppendsSeeOtherWriters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	a := openDB(t, path, engine.Options{})
	b := openDB(t, path, engine.Options{})
	stA := newSession(t, a)
	stB, err := b.OpenSession(ctx, stA.ID())
	if err != nil {
		t.Fatal(err)
	}
	msg := sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":` + string(userMsg("hi")) + `}`)}
	var last string
	for i := range 20 {
		st := stA
		if i%3 == 2 {
			st = stB
		}
		e, err := st.Append(ctx, msg, sessiontree.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if e.ParentID != last {
			t.Fatalf("append %d: parent %q; want the previous entry %q", i, e.ParentID, last)
		}
		last = e.ID
		if i%5 == 4 {
			// A batch in a transaction of the caller's, on the same
			// connection the appends use.
			batch, err := sessiontree.BuildEntry(msg, fmt.Sprintf("batch%03d", i), last, "2026-03-01T10:00:00.000Z")
			if err != nil {
				t.Fatal(err)
			}
			err = a.Update(ctx, func(tx *engine.Tx) error { return tx.AppendBatch(stA, []sessiontree.Entry{batch}) })
			if err != nil {
				t.Fatal(err)
			}
			last = batch.ID
		}
	}
	checkChain(t, stA, 24)
}

// TestEntriesInAnyShape stores, through a batch, entries whose JSON does
// not start with the four common fields in the usual order, or spells them
// with escapes, or repeats one; every read returns what DecodeEntry reads
// from the JSON.
func TestEntriesInAnyShape(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	st := newSession(t, db)
	batch := appendLines(t, st,
		`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-01T10:00:00.000Z","message":{"role":"user","content":"plain"}}`,
		`{"id":"a2","type":"message","parentId":"a1","timestamp":"2026-03-01T10:00:01.000Z","message":{"role":"user","content":"id first"}}`,
		`{"type":"message","id":"a\u0033","parentId":"a2","timestamp":"2026-03-01T10:00:02.000Z","message":{"role":"user","content":"escaped id"}}`,
		`{"type":"message","id":"a4","parentId":"a3","timestamp":"2026-03-01T10:00:03.000Z","message":{"role":"user","content":"x"},"id":"a5"}`,
		`{ "type": "message", "id": "a6", "parentId": "a5", "timestamp": "2026-03-01T10:00:04.000Z", "message": {"role": "user", "content": "spaces"} }`,
		`{"type":"message","id":"a7","parentId":"a6","timestamp":"2026-03-01T10:00:05.000Z","message":{"role":"user","content":"tab\there, ünïcödé"}}`,
	)
	if _, err := st.Append(ctx, sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":` + string(userMsg("built")) + `}`)}, sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := st.Leaf(ctx)
	path, err := st.FullPath(ctx, leaf)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]sessiontree.Entry{"Log": log, "FullPath": path} {
		if len(got) != len(batch)+1 {
			t.Fatalf("%s() = %d entries; want %d", name, len(got), len(batch)+1)
		}
		for i, e := range got {
			want, err := sessiontree.DecodeEntry(e.Raw)
			if err != nil {
				t.Fatal(err)
			}
			want.Seq = int64(i + 1)
			if diff := cmp.Diff(want, e); diff != "" {
				t.Errorf("%s()[%d] (-decoded +read):\n%s", name, i, diff)
			}
			if i < len(batch) && string(e.Raw) != string(batch[i].Raw) {
				t.Errorf("%s()[%d].Raw = %s; want %s", name, i, e.Raw, batch[i].Raw)
			}
		}
	}
	// Which rows the reads took the fields of from the JSON.
	var marks []int
	rows, err := rawDB(t, db.Path()).QueryContext(ctx, `SELECT coalesce(canonical, 0) FROM entries ORDER BY pk`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var m int
		if err := rows.Scan(&m); err != nil {
			t.Fatal(err)
		}
		marks = append(marks, m)
	}
	if want := []int{1, 0, 1, 0, 0, 1, 1}; !cmp.Equal(marks, want) {
		t.Errorf("canonical marks = %v; want %v", marks, want)
	}
}

// TestBranchMoves moves the leaf, appends and imports batches at random
// in one session, so that the materialized branch is rewritten across
// runs of consecutive entries, inside them and at their ends, and checks
// the whole database after every step.
func TestBranchMoves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	st := newSession(t, db)
	rng := rand.New(rand.NewPCG(1, 2))
	var ids []string
	msg := func(i int) sessiontree.Draft {
		return sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":` + string(userMsg(strconv.Itoa(i))) + `}`)}
	}
	steps := 300
	if testing.Short() {
		steps = 40 // each kind of step several times, four checks
	}
	for step := range steps {
		switch op := rng.IntN(10); {
		case op < 5 || len(ids) == 0:
			for range 1 + rng.IntN(8) {
				e, err := st.Append(ctx, msg(step), sessiontree.AppendOptions{})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, e.ID)
			}
		case op < 8:
			target := ids[rng.IntN(len(ids))]
			if rng.IntN(20) == 0 {
				target = ""
			}
			if _, err := st.SetLeaf(ctx, target, sessiontree.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
		default:
			// A batch under a stored entry, or under the leaf, whose own
			// entries branch among themselves.
			parent := ids[rng.IntN(len(ids))]
			var batch []sessiontree.Entry
			for i := range 1 + rng.IntN(30) {
				p := parent
				if i > 0 && rng.IntN(4) > 0 {
					p = batch[rng.IntN(len(batch))].ID
				}
				e, err := sessiontree.BuildEntry(msg(step), fmt.Sprintf("b%03d-%02d", step, i), p, "2026-03-01T10:00:00.000Z")
				if err != nil {
					t.Fatal(err)
				}
				batch = append(batch, e)
			}
			if err := st.AppendBatch(ctx, batch); err != nil {
				t.Fatal(err)
			}
			for _, e := range batch {
				ids = append(ids, e.ID)
			}
		}
		if step%10 == 9 {
			if err := db.Check(ctx, st.ID()); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}
	}
}
