package pgengine_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/migrate"
	"github.com/sessiontree/sessiontree/pgengine"
)

// TestLockWaitTimeoutIsErrLocked: a write waiting for a session's row
// lock, which another writer holds (here a transaction of the test's
// own), past the server's bound on the wait matches ErrLocked, as a wait
// past SQLite's busy timeout does: both bounds a server may set on its
// roles or databases, lock_timeout (55P03) and statement_timeout (57014),
// for every write that waits for the lock (an append, one through the
// general path, a claim, a delete, a transaction's locked read). Before,
// a statement timeout was a storage failure ('append: storage failure:
// ERROR: canceling statement due to statement timeout'), which the watch
// takes for the server being away.
func TestLockWaitTimeoutIsErrLocked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := openDB(t)
	st := newSession(t, db)
	holder := connect(t, url)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM sessions FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup // the writes wait at once
	for _, bound := range []string{"statement_timeout=100", "lock_timeout=100"} {
		other := openWith(t, url+"&"+bound, pgengine.Options{})
		s, err := other.OpenStorage(ctx, st.ID())
		if err != nil {
			t.Fatal(err)
		}
		for what, write := range map[string]func() error{
			"Append": func() error { _, err := s.Append(ctx, userDraft("a"), sessiontree.AppendOptions{}); return err },
			"AppendAll": func() error {
				_, err := s.AppendAll(ctx, []sessiontree.Draft{userDraft("b")}, sessiontree.AppendOptions{})
				return err
			},
			"Claim":         func() error { _, err := s.Claim(ctx, "h", time.Minute); return err },
			"DeleteSession": func() error { return other.DeleteSession(ctx, st.ID(), sessiontree.DeleteOptions{}) },
			"SessionInfo in Update": func() error {
				return other.Update(ctx, func(tx sessiontree.DatabaseTx) error { _, err := tx.SessionInfo(st.ID()); return err })
			},
		} {
			wg.Go(func() {
				if err := write(); !errors.Is(err, sessiontree.ErrLocked) || errors.Is(err, sessiontree.ErrStorage) {
					t.Errorf("%s: %s = %v; want ErrLocked, not ErrStorage", bound, what, err)
				}
			})
		}
	}
	wg.Wait()
}

// TestOpenWaitsForMigrationsUnderTimeouts: Open waits for another
// process's migration (its advisory lock, here held by a transaction of
// the test's own) as long as its context allows, whatever bound the
// server's lock_timeout or statement_timeout sets on the role's
// statements, as the SQLite engine waits for another process's
// migration past its busy timeout: a migration of a large database takes
// minutes, and every other machine of the fleet failed to open meanwhile
// ('migration 0019_...: lock: ... canceling statement due to lock
// timeout'). So does the header sums' fill after the migrations, which
// takes the same lock. A migration's own statements are not bounded by
// statement_timeout either: they run once, as long as they need (under
// load, migration 19's statements took longer than the bound here).
func TestOpenWaitsForMigrationsUnderTimeouts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := openDB(t)
	newSession(t, db)
	for _, pending := range []struct {
		name  string
		stmts []string
	}{
		{"migration 19", append(beforeHeaderChecksum[:2:2], `DELETE FROM schema_migrations WHERE version = 19`)},
		{"header sums", []string{`UPDATE sessions SET header_checksum = NULL`, `INSERT INTO header_checksum_fill SELECT pk FROM sessions`}},
	} {
		execAll(t, url, pending.stmts...)
		holder := connect(t, url)
		tx, err := holder.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrate.AdvisoryLockKey); err != nil {
			t.Fatal(err)
		}
		opened := make(chan error, 2)
		for _, bound := range []string{"statement_timeout=300", "lock_timeout=300"} {
			go func() {
				db, err := pgengine.Open(ctx, url+"&"+bound, pgengine.Options{})
				if err == nil {
					err = db.Close()
				}
				opened <- err
			}()
		}
		select {
		case err := <-opened:
			t.Fatalf("%s: Open returned (%v) while another process held the migrations' lock", pending.name, err)
		case <-time.After(500 * time.Millisecond):
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := <-opened; err != nil {
				t.Errorf("%s: Open once the lock was free = %v", pending.name, err)
			}
		}
	}
}
