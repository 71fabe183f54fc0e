package pgengine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
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
			if err := write(); !errors.Is(err, sessiontree.ErrLocked) || errors.Is(err, sessiontree.ErrStorage) {
				t.Errorf("%s: %s = %v; want ErrLocked, not ErrStorage", bound, what, err)
			}
		}
	}
}
