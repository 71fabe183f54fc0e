package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/migrate"
)

// TestOpenCurrentOpensOneReader checks what opening a database whose
// schema is current costs (fastOpen): one statement on one read
// connection, and neither the write connection nor the checkpointer until
// the first write, which opens both. A new database takes the full path: its write connection
// makes the schema.
func TestOpenCurrentOpensOneReader(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	db := openPath(t, path)
	if db.current || db.w.Stats().OpenConnections != 1 {
		t.Errorf("new database: current %v, %d write connections; want the full open, 1", db.current, db.w.Stats().OpenConnections)
	}
	st, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/work/open"})
	if err != nil {
		t.Fatal(err)
	}
	id := st.ID()
	db = reopen(t, db)
	conns := func(when string, w, r int, cp bool) {
		t.Helper()
		gw, gr := db.w.Stats().OpenConnections, db.r.Stats().OpenConnections
		if gw != w || gr != r || (db.cp != nil) != cp {
			t.Errorf("%s: %d write and %d read connections, checkpointer %v; want %d, %d, %v", when, gw, gr, db.cp != nil, w, r, cp)
		}
	}
	if !db.current {
		t.Fatal("reopened database: header not current")
	}
	conns("after Open", 0, 1, false)
	if r, w := db.rc.prepared.Load(), db.wc.prepared.Load(); r != 1 || w != 0 {
		t.Errorf("Open compiled %d statements on the readers and %d on the writer; want 1 and 0", r, w)
	}
	st, err = db.OpenSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Log(ctx, 0, 0); err != nil {
		t.Fatal(err)
	}
	conns("after a read", 0, 1, false)
	if _, err := st.Append(ctx, userDraft("hello"), sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	conns("after a write", 1, 1, true)
}

// TestOpenCurrentChecksRecords checks that the fast open trusts the
// header only with the records: a header at the latest version over
// records that lack a migration takes the full open, which applies it.
// The migration left out is 24, which computes usage days again and so
// can run twice (25 adds a column).
func TestOpenCurrentChecksRecords(t *testing.T) {
	ctx := context.Background()
	db := openPath(t, filepath.Join(t.TempDir(), "s.db"))
	const missing = 24
	if err := db.update(ctx, true, func(w q) error {
		_, err := w.exec(`DELETE FROM schema_migrations WHERE version = ?`, missing)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	db = reopen(t, db)
	var n int
	if err := db.r.GetContext(ctx, &n, `SELECT count(*) FROM schema_migrations WHERE version = ?`, missing); err != nil || n != 1 {
		t.Errorf("records of migration %d after Open = %d, %v; want 1 (applied again)", missing, n, err)
	}
}

// TestOpenCurrentChecksChecksums checks that the fast open trusts the
// records only when they are the embedded migrations': a record whose
// checksum differs (the record edited, or the migration of that number
// applied by another build, from another text) is refused by Open with
// ErrChecksum naming the migration, as the full open refuses it.
func TestOpenCurrentChecksChecksums(t *testing.T) {
	ctx := context.Background()
	migs, err := migrate.Load(migrate.Files)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []migrate.Migration{migs[4], migs[len(migs)-1]} {
		t.Run(m.Name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.db")
			db := openPath(t, path)
			other := sha256.Sum256([]byte(m.SQL + "\n-- another build's text\n"))
			if err := db.update(ctx, true, func(w q) error {
				_, err := w.exec(`UPDATE schema_migrations SET checksum = ? WHERE version = ?`, hex.EncodeToString(other[:]), m.Version)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db, err := Open(ctx, path, Options{})
			if err == nil {
				db.Close()
			}
			if !errors.Is(err, migrate.ErrChecksum) || !strings.Contains(err.Error(), m.Name) {
				t.Errorf("Open of a database whose record of %s has another checksum = %v; want ErrChecksum naming it", m.Name, err)
			}
		})
	}
}

// openPath opens the database at path, closed when the test ends.
func openPath(t *testing.T, path string) *DB {
	t.Helper()
	db, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// reopen closes db and opens its file again.
func reopen(t *testing.T, db *DB) *DB {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return openPath(t, db.Path())
}
