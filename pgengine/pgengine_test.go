package pgengine_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/pgengine"
	"github.com/sessiontree/sessiontree/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.MainWaiting(m)) }

// openDB opens a fresh database for t; its cleanup checks every session
// (pgengine.DB.Check) and closes it.
func openDB(t testing.TB) (*pgengine.DB, string) {
	t.Helper()
	return openDBWith(t, pgengine.Options{})
}

// openDBWith is openDB opening the database with opts.
func openDBWith(t testing.TB, opts pgengine.Options) (*pgengine.DB, string) {
	t.Helper()
	url := pgtest.Migrated.Database(t)
	return openURLWith(t, url, opts), url
}

func openURL(t testing.TB, url string) *pgengine.DB {
	t.Helper()
	return openURLWith(t, url, pgengine.Options{})
}

// openURLWith is openURL opening the database with opts.
func openURLWith(t testing.TB, url string, opts pgengine.Options) *pgengine.DB {
	t.Helper()
	db, err := pgengine.Open(context.Background(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Check(context.Background(), ""); err != nil {
			t.Errorf("integrity check: %v", err)
		}
		if err := db.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return db
}

func harness() storetest.Harness {
	return storetest.Harness{
		New: func(t testing.TB) sessiontree.Storage {
			db, _ := openDB(t)
			st, err := db.CreateSession(context.Background(), sessiontree.SessionMeta{Cwd: "/tmp/project"})
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
		Reopen: func(t testing.TB, s sessiontree.Storage) sessiontree.Storage {
			t.Helper()
			st := s.(*pgengine.Storage)
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			db := openURL(t, st.DB().URL())
			reopened, err := db.OpenSession(context.Background(), st.ID())
			if err != nil {
				t.Fatal(err)
			}
			return reopened
		},
		LoadUnchecked: loadUnchecked,
	}
}

// loadUnchecked writes entries straight into the tables, past every check
// of the engine, as a damaged database would hold them: depth 1 for all,
// no branch rows, the leaf on the last entry.
func loadUnchecked(t testing.TB, meta sessiontree.SessionMeta, entries []sessiontree.Entry) (sessiontree.Storage, error) {
	t.Helper()
	ctx := context.Background()
	url := pgtest.Migrated.Database(t)
	db, err := pgengine.Open(ctx, url, pgengine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st, err := db.CreateSession(ctx, meta)
	if err != nil {
		t.Fatal(err)
	}
	conn := connect(t, url)
	var session int64
	if err := conn.QueryRow(ctx, `SELECT pk FROM sessions WHERE id = $1`, st.ID()).Scan(&session); err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		var parent any
		if e.ParentID != "" {
			parent = e.ParentID
		}
		if _, err := conn.Exec(ctx, `INSERT INTO entries (session, seq, id, parent_id, type, timestamp, depth, start_depth, raw)
			VALUES ($1, $2, $3, $4, $5, $6, 1, 1, $7)`, session, i+1, e.ID, parent, string(e.Type), e.Timestamp, string(e.Raw)); err != nil {
			t.Fatal(err)
		}
	}
	last := entries[len(entries)-1]
	if _, err := conn.Exec(ctx, `UPDATE sessions SET entry_count = $2, leaf_seq = $2, leaf_id = $3, leaf_depth = 1,
		boundary_depth = 1 WHERE pk = $1`, session, len(entries), last.ID); err != nil {
		t.Fatal(err)
	}
	return st, nil
}

func TestConformance(t *testing.T) {
	t.Parallel()
	h := harness()
	h.Parallel = true // each case has a database of its own
	storetest.Run(t, h)
}

// TestPiFixtures checks the engine against pi's own answers, each file
// imported with one AppendBatch; under -short one file of each kind (the
// root package checks every file on the SQLite engine).
func TestPiFixtures(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"../testdata/pi", "../testdata/pi1"} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			storetest.RunPiFixtureKinds(t, dir, openPi)
		})
	}
}

// openPi imports a pi file into a fresh database with one AppendBatch.
func openPi(t testing.TB, fx storetest.PiFixture) sessiontree.Storage {
	db, _ := openDB(t)
	meta, entries := storetest.ReadSessionFile(t, fx.Path)
	st, err := db.CreateSession(context.Background(), meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AppendBatch(context.Background(), entries); err != nil {
		t.Fatal(err)
	}
	return st
}
