package pgengine_test

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/pgengine"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/storetest"
)

// TestHeaderChecksumMigration: migration 18 lists every session stored
// before it, and Open gives each the checksum of its header columns as
// they are (storetest.RunHeaderChecksumUpgrade), leaving the list empty.
func TestHeaderChecksumMigration(t *testing.T) {
	t.Parallel()
	db, url := openDB(t)
	conn := connect(t, url)
	storetest.RunHeaderChecksumUpgrade(t, storetest.HeaderUpgradeHarness{
		DB:    db,
		Query: func(query string) ([]string, error) { return pgQueryColumn(conn, query) },
		Upgrade: func(stmts ...string) sessiontree.Database {
			execAll(t, url, append(stmts, beforeHeaderChecksum...)...)
			return openURL(t, url) // Check clean at its cleanup
		},
		Testdata: filepath.Join("..", "testdata"),
	})
	var left int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM header_checksum_fill`).Scan(&left); err != nil || left != 0 {
		t.Errorf("sessions left to fill = %d, %v; want 0", left, err)
	}
}

// beforeHeaderChecksum takes a database back to before migration 18 (and
// 19, which lists the sessions an older engine creates).
var beforeHeaderChecksum = []string{`DROP TRIGGER sessions_header_unsummed ON sessions`, `DROP FUNCTION list_unsummed_header()`,
	`DROP TRIGGER sessions_schema_fence ON sessions`, `DROP FUNCTION schema_fence()`,
	`ALTER TABLE sessions DROP COLUMN header_checksum`, `DROP TABLE header_checksum_fill`,
	`DELETE FROM schema_migrations WHERE version IN (18, 19, 20)`}

// oldInsert creates a session as the engine did before migration 18,
// which knows no header checksum: what a process of the fleet not yet
// upgraded still does while newer ones open the database.
const oldInsert = `INSERT INTO sessions (id, version, created_at, cwd, parent_session, updated_at, metadata)
	VALUES ($1, 3, '2026-12-07T08:00:00.000Z', '/old', NULL, '2026-12-07T08:00:00.000Z', NULL)`

// TestUpgradeBesideOldClient: a database at migration 17, and a process
// of the older engine still connected, mid-write (a session row locked,
// a session created, not committed). Three newer processes open it at
// once: none returns before the older write is done (migration 18 waits
// for it, the others for the migrations' lock), then all do, with every
// session's header summed, the older write's new session included. The
// older process's write went in before the migrations: its session is
// summed and reads sound (Check, an export). Then the older process
// tries to create another session: since the schema fence (migration
// 20) that is refused (SQLSTATE ST003), nothing stored. Before migration
// 19 the newer processes' Check called each session such a process
// created corrupt ('the header has no checksum') and refused to export
// it, for good; migration 19 listed them for the next Open to sum.
func TestUpgradeBesideOldClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := openDB(t)
	for range 3 {
		st := newSession(t, db)
		if _, err := st.Append(ctx, userDraft("before"), sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	execAll(t, url, beforeHeaderChecksum...)
	old := connectOlder(t, url)
	tx, err := old.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{`SELECT pk FROM sessions ORDER BY pk LIMIT 1 FOR UPDATE`, oldInsert} {
		args := []any{}
		if stmt == oldInsert {
			args = append(args, "old-during")
		}
		if _, err := tx.Exec(ctx, stmt, args...); err != nil {
			t.Fatal(err)
		}
	}
	opened := make(chan error, 3)
	for range 3 {
		go func() {
			db, err := pgengine.Open(ctx, url, pgengine.Options{})
			if err == nil {
				err = db.Close()
			}
			opened <- err
		}()
	}
	select {
	case err := <-opened:
		t.Fatalf("Open returned (%v) while an older write held the sessions table", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := <-opened; err != nil {
			t.Fatalf("Open beside an older process: %v", err)
		}
	}
	var pg *pgconn.PgError
	if _, err := old.Exec(ctx, oldInsert, "old-after"); !errors.As(err, &pg) || pg.Code != "ST003" {
		t.Errorf("an older process's new session after the migrations: %v; want the schema fence's refusal (ST003)", err)
	}
	newer := openURL(t, url) // its cleanup checks every session
	if err := newer.Check(ctx, ""); err != nil {
		t.Errorf("Check with an older process's session = %v", err)
	}
	s := store.New(newer)
	if err := s.Export(ctx, "old-during", io.Discard, store.ExportOptions{}); err != nil {
		t.Errorf("export of an older process's session = %v", err)
	}
	if _, err := newer.OpenStorage(ctx, "old-after"); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("OpenStorage(the refused session) = %v; want ErrNotFound", err)
	}
	openURL(t, url)
	var unsummed int
	if err := old.QueryRow(ctx, `SELECT (SELECT count(*) FROM sessions WHERE header_checksum IS NULL) +
		(SELECT count(*) FROM header_checksum_fill)`).Scan(&unsummed); err != nil || unsummed != 0 {
		t.Errorf("after another Open: %d sessions without a sum or listed (%v); want 0", unsummed, err)
	}
}
