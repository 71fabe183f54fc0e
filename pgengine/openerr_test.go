package pgengine_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/pgengine"
)

// TestOpenMigrationLockTimeout: a migration step whose DDL waits for a
// table lock longer than the server's lock_timeout (another transaction,
// here a writer's, holds the table) fails the Open with an error that
// says so, matching sessiontree.ErrLocked (try again once the lock is
// free), not with ErrLocked's own words, which speak of a session held
// by another writer.
func TestOpenMigrationLockTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := openDB(t)
	newSession(t, db)
	execAll(t, url, append(beforeHeaderChecksum[:2:2], `DELETE FROM schema_migrations WHERE version = 19`)...)
	holder := connect(t, url)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // only ends the lock
	if _, err := tx.Exec(ctx, `LOCK TABLE sessions IN ROW EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	_, err = pgengine.Open(ctx, url+"&lock_timeout=100", pgengine.Options{})
	msg := fmt.Sprint(err)
	if !errors.Is(err, sessiontree.ErrLocked) || strings.Contains(msg, sessiontree.ErrLocked.Error()) ||
		!strings.Contains(msg, "schema migration waited for a lock") || !strings.Contains(msg, "0019_") {
		t.Errorf("Open while a writer holds the table migration 19 changes = %v; want ErrLocked saying the schema migration (0019) waited for a lock", err)
	}
}

// TestOpenUnreachableServer: an Open that cannot connect says it could
// not connect to the server, naming it (host and port, and the URL
// without its password), not that reading the migration records failed.
func TestOpenUnreachableServer(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	url := "postgres://bob:secret@" + addr + "/db?sslmode=disable&connect_timeout=5"
	_, err = pgengine.Open(context.Background(), url, pgengine.Options{Attempts: 2})
	msg := fmt.Sprint(err)
	if !errors.Is(err, sessiontree.ErrStorage) || strings.Contains(msg, "migration") || strings.Contains(msg, "secret") ||
		!strings.Contains(msg, "connect to the server at "+addr) || !strings.Contains(msg, "bob:xxxxx@"+addr) {
		t.Errorf("Open of a server that is not there = %v; want ErrStorage saying it could not connect to the server at %s", err, addr)
	}
}
