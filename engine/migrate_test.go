package engine_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/internal/testdb"
	"github.com/sessiontree/sessiontree/migrate"
)

// TestUpgradeFromFirstMigration makes a database with migration 1 alone,
// writes a session into it as that version's engine would have, and opens
// it with the current engine: the later migrations apply, the data is
// kept and passes Check, and migration 2 backfills the session list's
// first user message.
func TestUpgradeFromFirstMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	first, err := fs.ReadFile(migrate.Files, "0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := sqlx.Open("sqlite", "file:"+path+"?_txlock=immediate&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	res, err := migrate.Up(ctx, old, fstest.MapFS{"0001_init.sql": {Data: first}}, migrate.Options{ApplicationID: engine.ApplicationID})
	if err != nil || res.To != 1 {
		t.Fatalf("migration 1 alone: %+v, %v", res, err)
	}
	const ts = "2026-03-01T10:00:00.000Z"
	stmts := []string{
		`INSERT INTO sessions (pk, id, version, created_at, cwd, updated_at, leaf_pk, leaf_id, leaf_depth,
			boundary_depth, entry_count, message_count)
		 VALUES (1, 'old-session', 3, '` + ts + `', '/old', '` + ts + `', 4294967299, 'cccccccc', 3, 1, 3, 3)`,
		`INSERT INTO entries (pk, session, seq, id, parent_id, parent_pk, type, timestamp, depth, start_depth, role, raw)
		 VALUES (4294967297, 1, 1, 'aaaaaaaa', NULL, NULL, 'message', '` + ts + `', 1, 1, 'user',
		  '{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"` + ts + `","message":{"role":"user","content":[{"type":"image","data":"x"},{"type":"text","text":"hello from v1"}]}}')`,
		`INSERT INTO entries (pk, session, seq, id, parent_id, parent_pk, type, timestamp, depth, start_depth, role, raw)
		 VALUES (4294967298, 1, 2, 'bbbbbbbb', 'aaaaaaaa', 4294967297, 'message', '` + ts + `', 2, 1, 'user',
		  '{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"` + ts + `","message":{"role":"user","content":"second"}}')`,
		`INSERT INTO entries (pk, session, seq, id, parent_id, parent_pk, type, timestamp, depth, start_depth, role, raw)
		 VALUES (4294967299, 1, 3, 'cccccccc', 'bbbbbbbb', 4294967298, 'message', '` + ts + `', 3, 1, 'user',
		  '{"type":"message","id":"cccccccc","parentId":"bbbbbbbb","timestamp":"` + ts + `","message":{"role":"user","content":"third"}}')`,
		`INSERT INTO branch VALUES (1, 1, 4294967297), (1, 2, 4294967298), (1, 3, 4294967299)`,
	}
	for _, s := range stmts {
		if _, err := old.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()

	db := openDB(t, path, engine.Options{})
	migs, err := migrate.Load(migrate.Files)
	if err != nil {
		t.Fatal(err)
	}
	var version int64
	if err := db.QueryPragma(ctx, "user_version", &version); err != nil || version != migrate.Latest(migs) {
		t.Errorf("user_version after upgrade = %d, %v; want %d", version, err, migrate.Latest(migs))
	}
	st, err := db.OpenSession(ctx, "old-session")
	if err != nil {
		t.Fatal(err)
	}
	c, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).Context(ctx, sessiontree.ContextOptions{})
	if err != nil || len(c.Messages) != 3 {
		t.Fatalf("Context() after upgrade = %d messages, %v; want 3", len(c.Messages), err)
	}
	raw := rawDB(t, path)
	var text string
	if err := raw.QueryRowContext(ctx, `SELECT first_user_text FROM sessions WHERE id = 'old-session'`).Scan(&text); err != nil || text != "hello from v1" {
		t.Errorf("first_user_text after upgrade = %q, %v; want the backfilled first text block", text, err)
	}
	// And the upgraded database keeps working.
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	if _, err := s.AppendMessage(ctx, userMsg("fourth")); err != nil {
		t.Fatal(err)
	}
}

// TestMigrateOnFullDisk opens a new database bounded so that the disk
// fills during each of the first migrations: Open fails with an error
// that matches sessiontree.ErrDiskFull and says disk full, as every other
// write on a full disk does, and leaves the file at the clean version of
// the steps that fit (records and user_version agree, nothing of the step
// that failed). With room again it opens at the latest version and checks
// clean.
func TestMigrateOnFullDisk(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, pages := range []int64{1, 2, 8, 16} {
		path := filepath.Join(t.TempDir(), "s.db")
		db, err := engine.Open(ctx, path, engine.Options{MaxSize: pages * 4096})
		if err == nil {
			db.Close()
			t.Fatalf("Open bounded to %d pages = nil; want the disk full", pages)
		}
		if !errors.Is(err, sessiontree.ErrDiskFull) || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("Open bounded to %d pages = %v; want ErrDiskFull, saying disk full", pages, err)
		}
		raw := rawDB(t, path)
		var version, records, fts int64
		if err := raw.QueryRowContext(ctx, `SELECT (SELECT user_version FROM pragma_user_version),
			(SELECT count(*) FROM sqlite_master WHERE name = 'schema_migrations'),
			(SELECT count(*) FROM sqlite_master WHERE name = 'entries_fts')`).Scan(&version, &records, &fts); err != nil {
			t.Fatal(err)
		}
		if records == 1 {
			var n, max int64
			if err := raw.QueryRowContext(ctx, `SELECT count(*), coalesce(max(version), 0) FROM schema_migrations`).Scan(&n, &max); err != nil {
				t.Fatal(err)
			}
			if n != max || max != version {
				t.Errorf("bounded to %d pages: %d records up to %d, user_version %d; want one version", pages, n, max, version)
			}
		}
		if (fts == 1) != (version >= 4) {
			t.Errorf("bounded to %d pages: version %d with the search index %v; want it from migration 4 on", pages, version, fts == 1)
		}
		raw.Close()
		t.Logf("bounded to %d pages: version %d: %v", pages, version, err)
		openDB(t, path, engine.Options{}) // checks clean
	}
}

// TestOpenWaitsForAnotherMigration opens a database whose last migration
// another process is applying, holding the write lock for longer than
// the busy timeout, as a migration of a large database does: Open waits
// for it, as on PostgreSQL (the advisory lock), and returns on the new
// schema with the migration applied once; it failed with ErrLocked once
// the busy timeout passed, so of two processes opening an old database at
// once, one failed.
func TestOpenWaitsForAnotherMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	migs, err := migrate.Load(migrate.Files)
	if err != nil {
		t.Fatal(err)
	}
	last := migs[len(migs)-1]
	// The database before the last migration (the last may not run
	// twice: migration 25 adds a column).
	old, err := sqlx.Open(testdb.EngineDriver(), "file:"+path+"?_txlock=immediate&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	_, err = migrate.Up(ctx, old, migrationsUpTo(t, last.Version-1), migrate.Options{ApplicationID: engine.ApplicationID})
	old.Close()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := rawDB(t, path).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, stmt := range []string{"BEGIN IMMEDIATE", last.SQL,
		fmt.Sprintf(`INSERT INTO schema_migrations VALUES (%d, '%s', '%s', 'now')`, last.Version, last.Name, last.Checksum),
		fmt.Sprintf(`PRAGMA user_version = %d`, last.Version)} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() {
		time.Sleep(400 * time.Millisecond)
		_, err := conn.ExecContext(ctx, "COMMIT")
		done <- err
	}()
	db, err := engine.Open(ctx, path, engine.Options{BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open during another process's migration = %v; want it to wait", err)
	}
	defer db.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var version int64
	if err := db.QueryPragma(ctx, "user_version", &version); err != nil || version != last.Version {
		t.Errorf("user_version = %d, %v; want %d", version, err, last.Version)
	}
	if err := db.Check(ctx, ""); err != nil {
		t.Error(err)
	}
}
