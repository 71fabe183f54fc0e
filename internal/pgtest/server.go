package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// EnvURL is the environment variable naming a server to test against.
const EnvURL = "SESSIONTREE_TEST_POSTGRES"

// ErrNoServer is returned by [Start] when PostgreSQL's programs are not
// installed.
var ErrNoServer = errors.New("no PostgreSQL server: set " + EnvURL + " or install postgresql")

// serverURL is the URL [Main] found or started; "" when there is none.
// serverErr says why there is none. Main sets them before any test runs
// when SESSIONTREE_TEST_POSTGRES names a server; otherwise the first test
// that asks for the server starts it (startOnce), so that a test binary
// whose tests need none (a -run or -short that leaves them out) starts
// none.
var (
	serverURL string
	serverErr = errors.New("pgtest.Main was not called from TestMain")
	startOnce sync.Once
	lazy      bool     // Main was called without SESSIONTREE_TEST_POSTGRES
	started   *Cluster // the cluster startOnce started, which Main stops
)

// skipUnderShort is set by [SkipPostgresUnderShort].
var skipUnderShort bool

// Main runs the tests of m against a server: the one SESSIONTREE_TEST_POSTGRES
// names, or a throwaway cluster it starts when a test first asks for one
// and stops when the tests end. It returns m.Run's exit code. Call it
// from TestMain: os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	if u := os.Getenv(EnvURL); u != "" {
		serverURL, serverErr = u, nil
		return m.Run()
	}
	lazy = true
	code := m.Run()
	if started != nil {
		if err := started.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
			code = max(code, 1)
		}
	}
	return code
}

// SkipPostgresUnderShort marks the test binary as one whose PostgreSQL
// tests run again on the second engine what it also runs on SQLite (the
// store's, the command's and the reliability suite's): under -short,
// [URL] and [Template.Database] skip them, so that the quick loop (go
// test -short ./...) runs such tests on SQLite alone and starts no
// server for them. Without -short, as CI runs, they run on both engines.
// The engine's own tests (pgengine, migrate) do not call it and keep
// PostgreSQL in the quick loop. Call it from TestMain before [Main].
func SkipPostgresUnderShort() { skipUnderShort = true }

// server returns the server's URL, starting the throwaway cluster the
// first time when [Main] is to start one.
func server() (string, error) {
	startOnce.Do(func() {
		if !lazy {
			return
		}
		c, err := Start(context.Background())
		if err != nil {
			serverErr = err
			return
		}
		started = c
		serverURL, serverErr = c.URL, nil
	})
	return serverURL, serverErr
}

// Cluster is a throwaway PostgreSQL cluster started by [Start] or
// [StartDurable].
type Cluster struct {
	// URL connects to its postgres database as the superuser.
	URL     string
	dir     string
	bin     string
	opts    string // the server's options, for pg_ctl start
	durable bool   // fsync, synchronous_commit and full_page_writes left on
}

// Start initialises a cluster in a new temporary folder and starts it on
// a free port of 127.0.0.1. It returns [ErrNoServer] when PostgreSQL's
// programs are not installed.
func Start(ctx context.Context) (*Cluster, error) { return start(ctx, false) }

func start(ctx context.Context, durable bool) (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	c := &Cluster{dir: dir, bin: bin, durable: durable}
	if err := c.start(ctx); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

// StartDurable starts a cluster as [Start] does, with the server's own
// durability: fsync, synchronous_commit and full_page_writes on, every
// commit waiting for its WAL flush (Start turns them off, which tests
// want). For measuring what commits cost, as the bench program's
// -pg-durable does.
func StartDurable(ctx context.Context) (*Cluster, error) { return start(ctx, true) }

func (c *Cluster) start(ctx context.Context) error {
	if err := c.ownFolder(); err != nil {
		return err
	}
	data := filepath.Join(c.dir, "data")
	copied, err := c.initData(ctx, data)
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	c.opts = fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=300", port, c.dir)
	if !c.durable {
		c.opts += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	}
	err = c.pgctlStart(ctx)
	if err != nil && copied {
		err = c.restartFromInitdb(ctx, data)
	}
	if err != nil {
		return err
	}
	c.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	return nil
}

// restartFromInitdb starts the server again from a folder initdb makes,
// after a copy of the template failed to start: the template, damaged
// since it was kept, is made again.
func (c *Cluster) restartFromInitdb(ctx context.Context, data string) error {
	_ = c.run(ctx, "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
	if err := errors.Join(os.RemoveAll(data), os.RemoveAll(templateDir(c.bin))); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	if _, err := c.initData(ctx, data); err != nil {
		return err
	}
	return c.pgctlStart(ctx)
}

// pgctlStart starts the initialised server and waits until it accepts
// connections.
func (c *Cluster) pgctlStart(ctx context.Context) error {
	return c.run(ctx, "pg_ctl", "-D", filepath.Join(c.dir, "data"), "-o", c.opts, "-l", filepath.Join(c.dir, "log"), "-w", "-t", "60", "start")
}

// Down stops the server as an administrator's restart does (fast
// shutdown: every connection is ended), its data kept; [Cluster.Up]
// starts it again. Connections tried meanwhile see what a client of a
// restarting server sees.
func (c *Cluster) Down(ctx context.Context) error {
	return c.run(ctx, "pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", "fast", "-w", "stop")
}

// Up starts the server [Cluster.Down] stopped, on the same port, and
// waits until it accepts connections.
func (c *Cluster) Up(ctx context.Context) error { return c.pgctlStart(ctx) }

// Own starts a cluster of tb's own, for a test that stops and starts its
// server ([Cluster.Down], [Cluster.Up]) without disturbing the others,
// and stops it when tb ends. Without PostgreSQL's programs tb is skipped
// (failed under CI=true), as [URL] does without a server. Under -short it
// skips tb: a cluster's start and stop take seconds, which the quick loop
// leaves to the full run.
func Own(tb testing.TB) *Cluster {
	tb.Helper()
	if testing.Short() {
		tb.Skip("starts a PostgreSQL cluster of its own: runs without -short")
	}
	c, err := Start(context.Background())
	if errors.Is(err, ErrNoServer) {
		noServer(tb, err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := c.Stop(); err != nil {
			tb.Errorf("stop the test's own cluster: %v", err)
		}
	})
	return c
}

// Stop stops the server at once and removes its folder.
func (c *Cluster) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := c.run(ctx, "pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", "immediate", "-w", "stop")
	return errors.Join(err, os.RemoveAll(c.dir))
}

// ownFolder gives the folder to the postgres user when running as root.
func (c *Cluster) ownFolder() error {
	if os.Geteuid() != 0 {
		return nil
	}
	uid, gid, err := serverUser()
	if err != nil {
		return err
	}
	if err := os.Chown(c.dir, uid, gid); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	return nil
}

// serverUser returns the ids of the postgres user, whom the server runs
// as when the tests run as root.
func serverUser() (uid, gid int, err error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return 0, 0, fmt.Errorf("start postgres as root: no postgres user to run it as: %w", err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid, nil
}

// run runs one of PostgreSQL's programs, as the postgres user when root.
func (c *Cluster) run(ctx context.Context, prog string, args ...string) error {
	argv := append([]string{filepath.Join(c.bin, prog)}, args...)
	if os.Geteuid() == 0 {
		argv = append([]string{"runuser", "-u", "postgres", "--"}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = c.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		return fmt.Errorf("%s: %w\n%s%s", prog, err, out.Bytes(), log)
	}
	return nil
}

// binDir finds the folder holding initdb and pg_ctl: the newest
// /usr/lib/postgresql/N/bin, else PATH.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return versionOf(b) - versionOf(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", ErrNoServer
}

// versionOf reads N from /usr/lib/postgresql/N/bin, 0 if it is not a number.
func versionOf(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
