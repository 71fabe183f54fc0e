package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/pgengine"
)

// The writers workload is issue 15's "16 writers appending to 16
// different sessions from 4 processes": each process a child of the bench
// binary (writerChild), each writer a goroutine appending to its own
// session, every append committed before it returns. Its results have the
// shape "writers" and the number of writers as their size; one writer in
// one process is the rate the target compares with.

// ShapeWriters names the results of the writers workload; their size is
// the number of writers in all.
const ShapeWriters Shape = "writers"

// writerChildArg, as the bench binary's first argument, runs it as a
// writers child (writerChild) instead of the benchmark.
const writerChildArg = "-writers-child"

// writersOpEntries is how many entries one operation appends in all, split
// evenly between the writers.
const writersOpEntries = 512

// writerSetups are the workload's configurations: processes × sessions
// each.
var writerSetups = []struct{ procs, each int }{{1, 1}, {4, 4}}

// runProcWriters runs the writers workload once per configuration.
func (r *runner) runProcWriters(ctx context.Context) error {
	w := findWorkload("writers")
	if !r.opts.wantsWorkload(w.name) || r.opts.Process {
		return nil
	}
	defer func() {
		r.ds = nil
		if !r.opts.Keep {
			os.RemoveAll(filepath.Join(r.dir, "writers"))
		}
	}()
	for _, s := range writerSetups {
		r.ds = &dataset{Shape: ShapeWriters, Size: s.procs * s.each}
		if err := r.runWorkload(ctx, w, writersCases(r, s.procs, s.each)); err != nil {
			return err
		}
	}
	return nil
}

// writersCases are the SQLite engine's and PostgreSQL's sides: procs
// children of each sessions sessions.
func writersCases(r *runner, procs, sessions int) []benchCase {
	g := procs * sessions
	per := max(1, writersOpEntries/g)
	mk := func(backend string, create func(ctx context.Context) (target string, ids []string, done func() error, err error)) benchCase {
		return benchCase{backend: backend, setup: func(ctx context.Context) (*prepared, error) {
			target, ids, done, err := create(ctx)
			if err != nil {
				return nil, err
			}
			var children []*writerProc
			closeAll := func() error {
				var errs []error
				for _, c := range children {
					errs = append(errs, c.close())
				}
				return errors.Join(append(errs, done())...)
			}
			for p := range procs {
				c, err := startWriter(ctx, backend, target, per, ids[p*sessions:(p+1)*sessions])
				if err != nil {
					return nil, errors.Join(err, closeAll())
				}
				children = append(children, c)
			}
			return &prepared{rows: g * per, external: true, close: closeAll,
				note: fmt.Sprintf("%d processes × %d sessions, %d appends by each writer", procs, sessions, per),
				op:   func(ctx context.Context) error { return writersRound(children) }}, nil
		}}
	}
	engineCase := mk(backendEngine, func(ctx context.Context) (string, []string, func() error, error) {
		path := filepath.Join(r.dir, "writers", fmt.Sprintf("engine-%d.db", g))
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", nil, nil, err
		}
		db, err := engine.Open(ctx, path, engine.Options{})
		if err != nil {
			return "", nil, nil, err
		}
		defer db.Close()
		ids := make([]string, g)
		for i := range ids {
			st, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: benchCwd})
			if err != nil {
				return "", nil, nil, err
			}
			ids[i] = st.ID()
		}
		return path, ids, func() error { return removeDB(path) }, nil
	})
	pgCase := mk(backendPostgres, func(ctx context.Context) (string, []string, func() error, error) {
		if r.pgURL == "" {
			return "", nil, nil, errUnsupported
		}
		db, err := pgengine.Open(ctx, r.pgURL, pgengine.Options{})
		if err != nil {
			return "", nil, nil, err
		}
		writers, done, err := pgWriters(ctx, db, g)
		if err != nil {
			return "", nil, nil, err
		}
		ids := make([]string, g)
		for i, w := range writers {
			ids[i] = w.Storage().(*pgengine.Storage).ID()
		}
		return r.pgURL, ids, done, nil
	})
	return []benchCase{engineCase, pgCase}
}

// writerProc is a running writers child.
type writerProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// startWriter starts a child appending per entries to each session of ids
// in the database target (a file for the engine, a URL for postgres) at
// each round, and waits until it is ready.
func startWriter(ctx context.Context, backend, target string, per int, ids []string) (*writerProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self, writerChildArg, backend, target, strconv.Itoa(per), strings.Join(ids, ","))
	in, out, err := startPiped(cmd, "writers child")
	if err != nil {
		return nil, err
	}
	c := &writerProc{cmd: cmd, in: in, out: bufio.NewReader(out)}
	if err := c.expect("ready"); err != nil {
		return nil, errors.Join(err, c.close())
	}
	return c, nil
}

// expect reads the child's next line and checks it is want.
func (c *writerProc) expect(want string) error {
	line, err := c.out.ReadString('\n')
	if got := strings.TrimSpace(line); got != want {
		return fmt.Errorf("writers child %d: said %q, want %q (%v)", c.cmd.Process.Pid, got, want, err)
	}
	return nil
}

// close ends the child (its input closes) and waits for it.
func (c *writerProc) close() error {
	c.in.Close()
	if err := c.cmd.Wait(); err != nil {
		return fmt.Errorf("writers child %d: %w", c.cmd.Process.Pid, err)
	}
	return nil
}

// writersRound starts one round in every child at once and waits until
// each has committed its appends.
func writersRound(children []*writerProc) error {
	for _, c := range children {
		if _, err := io.WriteString(c.in, "go\n"); err != nil {
			return err
		}
	}
	var errs []error
	for _, c := range children {
		errs = append(errs, c.expect("done"))
	}
	return errors.Join(errs...)
}

// writerChild is the bench binary run as a writers child: args are the
// backend, the database, the appends per session and round, and the
// comma-separated session ids. It says "ready", then for each "go" line
// on stdin appends to every session at once and says "done"; it ends at
// the end of its input. It returns the exit code.
func writerChild(args []string) int {
	if err := runWriterChild(context.Background(), args, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench writers child:", err)
		return 1
	}
	return 0
}

func runWriterChild(ctx context.Context, args []string, in io.Reader, out io.Writer) error {
	if len(args) != 4 {
		return fmt.Errorf("want 4 arguments (backend, database, appends, ids), got %d", len(args))
	}
	per, err := strconv.Atoi(args[2])
	if err != nil || per < 1 {
		return fmt.Errorf("appends %q: want a positive number", args[2])
	}
	open, closeDB, err := openWriterDB(ctx, args[0], args[1], len(strings.Split(args[3], ",")))
	if err != nil {
		return err
	}
	defer closeDB()
	var writers []*sessiontree.Session
	for _, id := range strings.Split(args[3], ",") {
		st, err := open(ctx, id)
		if err != nil {
			return err
		}
		writers = append(writers, sessiontree.NewSession(st, sessiontree.SessionOptions{}))
	}
	dir, err := os.MkdirTemp("", "bench-writer-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	drafts, err := generate(1, ShapeLinear, 1000, dir)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "ready")
	stop, err := profileWriterChild()
	if err != nil {
		return err
	}
	defer stop()
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		if err := runWriters(ctx, writers, per, drafts.Appends); err != nil {
			return err
		}
		fmt.Fprintln(out, "done")
	}
	return lines.Err()
}

// writerProfileEnv, when set, has each writers child write a Go CPU
// profile of its rounds to the file named by its value, a dot and the
// child's process id: where a writer's CPU goes (bench/README.md,
// PostgreSQL writers).
const writerProfileEnv = "BENCH_WRITER_CPUPROFILE"

// profileWriterChild starts the CPU profile $BENCH_WRITER_CPUPROFILE
// asks for, if any, until the function it returns is called.
func profileWriterChild() (func(), error) {
	prefix := os.Getenv(writerProfileEnv)
	if prefix == "" {
		return func() {}, nil
	}
	return startCPUProfile(fmt.Sprintf("%s.%d", prefix, os.Getpid()))
}

// openWriterDB opens a writers child's database: an engine file or a
// PostgreSQL URL with a connection per writer.
func openWriterDB(ctx context.Context, backend, target string, writers int) (func(context.Context, string) (sessiontree.Storage, error), func() error, error) {
	switch backend {
	case backendEngine:
		db, err := engine.Open(ctx, target, engine.Options{})
		if err != nil {
			return nil, nil, err
		}
		return func(ctx context.Context, id string) (sessiontree.Storage, error) { return db.OpenSession(ctx, id) }, db.Close, nil
	case backendPostgres:
		db, err := pgengine.Open(ctx, target, pgengine.Options{MaxConns: writers})
		if err != nil {
			return nil, nil, err
		}
		return func(ctx context.Context, id string) (sessiontree.Storage, error) { return db.OpenSession(ctx, id) }, db.Close, nil
	}
	return nil, nil, fmt.Errorf("backend %q: want %s or %s", backend, backendEngine, backendPostgres)
}
