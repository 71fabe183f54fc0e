package migrate_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/migrate"
)

// TestMain finds a server for the PostgreSQL tests (internal/pgtest).
// They run in parallel, each on a database of its own, mostly waiting for
// the server: 4 per CPU (pgtest.MainWaiting).
func TestMain(m *testing.M) { os.Exit(pgtest.MainWaiting(m)) }

// emptyPostgres is a database with nothing in it.
var emptyPostgres = pgtest.NewTemplate(func(context.Context, string) error { return nil })

func openPostgres(t testing.TB) *sqlx.DB {
	t.Helper()
	db, err := sqlx.Open("pgx", emptyPostgres.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var pgOpts = migrate.Options{Dialect: migrate.Postgres}

// TestPostgresFiles applies the PostgreSQL engine's own migrations, twice.
func TestPostgresFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openPostgres(t)
	migs, err := migrate.Load(migrate.PostgresFiles)
	if err != nil || len(migs) == 0 {
		t.Fatalf("Load(PostgresFiles) = %d migrations, %v; want some", len(migs), err)
	}
	res, err := migrate.Up(ctx, db, migrate.PostgresFiles, pgOpts)
	if err != nil {
		t.Fatal(err)
	}
	if res.From != 0 || res.To != migrate.Latest(migs) || len(res.Applied) != len(migs) {
		t.Errorf("first Up = %+v; want 0 -> %d, all applied", res, migrate.Latest(migs))
	}
	res, err = migrate.Up(ctx, db, migrate.PostgresFiles, pgOpts)
	if err != nil || len(res.Applied) != 0 {
		t.Errorf("second Up = %+v, %v; want nothing applied", res, err)
	}
	if v, err := migrate.Postgres.Version(ctx, db); err != nil || v != migrate.Latest(migs) {
		t.Errorf("Version = %d, %v; want %d", v, err, migrate.Latest(migs))
	}
}

func TestPostgresFailingStepLeavesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openPostgres(t)
	files := fstest.MapFS{
		"0001_a.sql": {Data: []byte(`CREATE TABLE a (x integer);`)},
		"0002_b.sql": {Data: []byte(`CREATE TABLE b (x integer); INSERT INTO nowhere VALUES (1);`)},
	}
	if _, err := migrate.Up(ctx, db, files, pgOpts); err == nil {
		t.Fatal("Up with a failing step succeeded")
	}
	var n int
	if err := db.GetContext(ctx, &n, `SELECT count(*) FROM pg_tables WHERE tablename = 'b'`); err != nil || n != 0 {
		t.Errorf("table b of the failed step: count %d, %v; want 0", n, err)
	}
	if v, err := migrate.Postgres.Version(ctx, db); err != nil || v != 1 {
		t.Errorf("Version = %d, %v; want 1", v, err)
	}
}

func TestPostgresRefusesNewerAndEdited(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openPostgres(t)
	files := fstest.MapFS{"0001_a.sql": {Data: []byte(`CREATE TABLE a (x integer);`)}}
	if _, err := migrate.Up(ctx, db, files, pgOpts); err != nil {
		t.Fatal(err)
	}
	edited := fstest.MapFS{"0001_a.sql": {Data: []byte(`CREATE TABLE a (y integer);`)}}
	if _, err := migrate.Up(ctx, db, edited, pgOpts); !errors.Is(err, migrate.ErrChecksum) {
		t.Errorf("Up with an edited file: %v; want ErrChecksum", err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO schema_migrations VALUES (99, '0099_x.sql', 'x', 'now')`); err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.Up(ctx, db, files, pgOpts); !errors.Is(err, migrate.ErrNewer) {
		t.Errorf("Up on a newer database: %v; want ErrNewer", err)
	}
}

// TestPostgresConcurrentUp: processes migrating at once apply each step
// once (the advisory lock).
func TestPostgresConcurrentUp(t *testing.T) {
	t.Parallel()
	concurrentUps(t, emptyPostgres.Database(t))
}

// TestPostgresConcurrentUpUnderRepeatableRead: processes migrating an
// empty database at once all succeed, each step applied once, when the
// database's transactions default to REPEATABLE READ. A step's snapshot,
// taken when it asked for the advisory lock, did not see the steps
// applied while it waited, so the process applied them again and failed
// ("already exists").
func TestPostgresConcurrentUpUnderRepeatableRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := emptyPostgres.Database(t)
	admin, err := sqlx.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var name string
	if err := admin.GetContext(ctx, &name, `SELECT current_database()`); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.ExecContext(ctx, `ALTER DATABASE "`+name+`" SET default_transaction_isolation = 'repeatable read'`); err != nil {
		t.Fatal(err)
	}
	concurrentUps(t, dsn)
}

// concurrentUps migrates the database at url from 4 handles at once and
// checks that each succeeds and each step is applied once in all.
func concurrentUps(t *testing.T, url string) {
	t.Helper()
	const n = 4
	type result struct {
		applied int
		err     error
	}
	results := make(chan result, n)
	for range n {
		go func() {
			db, err := sqlx.Open("pgx", url)
			if err != nil {
				results <- result{err: err}
				return
			}
			defer db.Close()
			res, err := migrate.Up(context.Background(), db, migrate.PostgresFiles, pgOpts)
			results <- result{len(res.Applied), err}
		}()
	}
	total := 0
	for range n {
		r := <-results
		if r.err != nil {
			t.Error(r.err)
		}
		total += r.applied
	}
	migs, _ := migrate.Load(migrate.PostgresFiles)
	if total != len(migs) {
		t.Errorf("%d concurrent Ups applied %d steps in all; want %d, each once", n, total, len(migs))
	}
}

// TestPostgresReadOnlyNamesPending: a database that cannot be written
// (here every transaction read-only, as on a standby or for a role set
// so) with a migration pending fails naming that migration, and nothing
// is written. Each recorded migration took a step of its own before, and
// the first one's write (creating the records table if missing) failed
// naming 0001, applied long ago.
func TestPostgresReadOnlyNamesPending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := emptyPostgres.Database(t)
	files := fstest.MapFS{"0001_a.sql": {Data: []byte(`CREATE TABLE a (x integer);`)}}
	rw, err := sqlx.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if _, err := migrate.Up(ctx, rw, files, pgOpts); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["default_transaction_read_only"] = "on"
	ro := sqlx.NewDb(stdlib.OpenDB(*cfg), "pgx")
	defer ro.Close()
	files["0002_b.sql"] = &fstest.MapFile{Data: []byte(`CREATE TABLE b (x integer);`)}
	_, err = migrate.Up(ctx, ro, files, pgOpts)
	if err == nil || !strings.Contains(err.Error(), "0002_b.sql") || strings.Contains(err.Error(), "0001_a.sql") {
		t.Errorf("Up on a read-only database = %v; want an error naming 0002_b.sql alone", err)
	}
	if v, err := migrate.Postgres.Version(ctx, rw); err != nil || v != 1 {
		t.Errorf("Version after = %d, %v; want 1", v, err)
	}
}
