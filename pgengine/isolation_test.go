package pgengine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/pgtest"
)

// TestWritersUnderRepeatableReadDefault: writers of two processes (two
// DBs) appending to one session all get their entries, in one chain,
// when the database's transactions default to REPEATABLE READ. The
// writes lock the session's row and wait for it, which is READ
// COMMITTED's way: under a transaction snapshot a wait for another
// writer ends in a serialization failure, and after the bounded retries
// the append failed with ErrConflict.
func TestWritersUnderRepeatableReadDefault(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.Migrated.Database(t)
	admin := connect(t, url)
	if _, err := admin.Exec(ctx, `DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET default_transaction_isolation = %L', current_database(), 'repeatable read'); END $$`); err != nil {
		t.Fatal(err)
	}
	a, b := openURL(t, url), openURL(t, url)
	first := newSession(t, a)
	const writers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		db := a
		if w%2 == 1 {
			db = b
		}
		st, err := db.OpenSession(ctx, first.ID())
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for j := range each {
				if _, err := st.Append(ctx, userDraft(fmt.Sprintf("w%d e%d", w, j)), sessiontree.AppendOptions{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	leaf, _ := first.Leaf(ctx)
	path, err := first.FullPath(ctx, leaf)
	if err != nil || len(path) != writers*each {
		t.Errorf("FullPath = %d entries, %v; want one chain of %d", len(path), err, writers*each)
	}
}
