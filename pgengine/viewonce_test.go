package pgengine_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/pgengine"
	"github.com/sessiontree/sessiontree/store"
)

// TestExportConnectionLost: an export (store.Export, a DB.View whose
// function writes the file as it reads) whose connection is lost, at
// the COMMIT ending its snapshot (every line read and written) or at
// its read of the entries (the header written). View ran the function
// again on a new connection, which wrote the file a second time after
// what the first run had written: the export succeeded with two session
// headers (and every entry twice), which pi and this project's reader
// refuse. Now the function runs once: a snapshot whose COMMIT was lost
// read all it read, and the export is whole; a read lost midway fails
// the export (ErrStorage) and the caller may run it again from the
// start.
func TestExportConnectionLost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p, st := proxiedSession(t)
	for _, text := range []string{"a", "b"} {
		if _, err := st.Append(ctx, userDraft(text), sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s := store.New(db)
	for _, c := range []struct {
		name  string
		fault func(m pgtest.Message) bool
		fails bool
	}{
		{"commit reply", func(m pgtest.Message) bool { return !m.FromClient && m.Tag == "COMMIT" }, false},
		{"entries read", func(m pgtest.Message) bool {
			return m.FromClient && strings.Contains(m.SQL, "FROM entries WHERE session = $1 ORDER BY seq")
		}, true},
	} {
		var done atomic.Bool
		p.SetFault(func(_ int, m pgtest.Message) pgtest.Action {
			if c.fault(m) && done.CompareAndSwap(false, true) {
				return pgtest.Cut
			}
			return pgtest.Pass
		})
		var buf bytes.Buffer
		err := s.Export(ctx, st.ID(), &buf, store.ExportOptions{})
		p.SetFault(nil)
		if !done.Load() {
			t.Fatalf("%s: the fault never met its message", c.name)
		}
		lines := strings.Count(buf.String(), "\n")
		switch {
		case c.fails && (!errors.Is(err, sessiontree.ErrStorage) || errors.Is(err, sessiontree.ErrCommitUnknown)):
			t.Errorf("%s: export = %v; want a storage failure", c.name, err)
		case !c.fails && (err != nil || lines != 3):
			t.Errorf("%s: export = %v, %d lines:\n%s\nwant nil, the header and 2 entries", c.name, err, lines, buf.String())
		}
	}
}

// TestViewFunctionRunsOnce: DB.View runs its function once, whatever
// the connection does: a function with effects outside the transaction
// (an export writing its file) cannot be run twice.
func TestViewFunctionRunsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p, st := proxiedSession(t)
	var runs atomic.Int32
	p.SetFault(func(_ int, m pgtest.Message) pgtest.Action {
		if !m.FromClient && m.Tag == "COMMIT" && runs.Load() == 1 {
			return pgtest.Terminate
		}
		return pgtest.Pass
	})
	err := db.View(ctx, func(tx sessiontree.DatabaseTx) error {
		runs.Add(1)
		_, err := tx.SessionInfo(st.ID())
		return err
	})
	p.SetFault(nil)
	if err != nil || runs.Load() != 1 {
		t.Errorf("View with its COMMIT's reply followed by a FATAL = %v, its function run %d times; want nil, once", err, runs.Load())
	}
}

// proxiedSession opens a database of t's own through a proxy, and
// creates a session in it.
func proxiedSession(t *testing.T) (*pgengine.DB, *pgtest.Proxy, *pgengine.Storage) {
	t.Helper()
	url := pgtest.Migrated.Database(t)
	p := pgtest.NewProxy(t, url)
	db := openURL(t, p.URL(url))
	return db, p, newSession(t, db)
}
