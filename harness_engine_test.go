package sessiontree_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/internal/testdb"
	"github.com/sessiontree/sessiontree/storetest"
)

var _ = register(backend{name: "engine", harness: engineHarness, openPi: loadEngine})

// openEngine opens a database for a test. Its cleanup checks the database
// (PRAGMA integrity_check and every session replayed against the
// materialized branch, counters and labels) unless check is false, then
// closes it. A database the test closed itself is left alone.
func openEngine(t testing.TB, path string, check bool) *engine.DB {
	t.Helper()
	db, err := engine.Open(context.Background(), path, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if check {
			if err := db.Check(context.Background(), ""); err != nil && !errors.Is(err, sessiontree.ErrClosed) {
				t.Errorf("integrity check: %v", err)
			}
		}
		if err := db.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return db
}

// newEngine opens a new database in a temporary directory, a copy of
// one made once (emptyEngine), as openEngine does.
func newEngine(t testing.TB, name string, check bool) *engine.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	emptyEngine.CopyTo(t, path)
	return openEngine(t, path, check)
}

// emptyEngine is a new database, made once per test binary.
var emptyEngine = testdb.New(func(ctx context.Context, path string) error {
	db, err := engine.Open(ctx, path, engine.Options{})
	if err != nil {
		return err
	}
	return db.Close()
})

func engineHarness() storetest.Harness {
	return storetest.Harness{
		New: func(t testing.TB) sessiontree.Storage {
			db := newEngine(t, "sessions.db", true)
			st, err := db.CreateSession(context.Background(), sessiontree.SessionMeta{Cwd: "/tmp/project"})
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
		Reopen: func(t testing.TB, s sessiontree.Storage) sessiontree.Storage {
			t.Helper()
			st := s.(*engine.Storage)
			path, id := st.DB().Path(), st.ID()
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			if err := st.DB().Close(); err != nil {
				t.Fatal(err)
			}
			db := openEngine(t, path, true)
			reopened, err := db.OpenSession(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			return reopened
		},
		LoadUnchecked: loadEngineUnchecked,
	}
}

// loadEngineUnchecked writes entries straight into the tables with SQL,
// past every check of the engine, as a damaged database would hold them:
// no depths, no branch rows, the leaf on the last entry. Each row's JSON
// has its checksum, so that what the tests see is the tree's damage.
func loadEngineUnchecked(t testing.TB, meta sessiontree.SessionMeta, entries []sessiontree.Entry) (sessiontree.Storage, error) {
	t.Helper()
	ctx := context.Background()
	db := newEngine(t, "broken.db", false)
	st, err := db.CreateSession(ctx, meta)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open(testdb.EngineDriver(), "file:"+db.Path()+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var session int64
	if err := raw.QueryRowContext(ctx, `SELECT pk FROM sessions WHERE id = ?`, st.ID()).Scan(&session); err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		seq := int64(i + 1)
		var parent any
		if e.ParentID != "" {
			parent = e.ParentID
		}
		if _, err := raw.ExecContext(ctx, `INSERT INTO entries (pk, session, seq, id, parent_id, type, timestamp,
			depth, start_depth, raw, checksum) VALUES (?, ?, ?, ?, ?, ?, ?, 1, 1, ?, ?)`,
			session<<32|seq, session, seq, e.ID, parent, string(e.Type), e.Timestamp, string(e.Raw),
			sessiontree.EntryChecksum(e.Raw)); err != nil {
			t.Fatal(err)
		}
	}
	last := entries[len(entries)-1]
	if _, err := raw.ExecContext(ctx, `UPDATE sessions SET entry_count = ?, leaf_pk = ?, leaf_id = ?, leaf_depth = 1,
		boundary_depth = 1 WHERE pk = ?`, len(entries), session<<32|int64(len(entries)), last.ID, session); err != nil {
		t.Fatal(err)
	}
	return st, nil
}

// loadEngine imports a pi file (any version, through the JSONL reader's
// migration) into a fresh database with one AppendBatch.
func loadEngine(t testing.TB, fx storetest.PiFixture) sessiontree.Storage {
	t.Helper()
	ctx := context.Background()
	db := newEngine(t, "sessions.db", true)
	meta, entries := storetest.ReadSessionFile(t, fx.Path)
	st, err := db.CreateSession(ctx, meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AppendBatch(ctx, entries); err != nil {
		t.Fatal(err)
	}
	return st
}
