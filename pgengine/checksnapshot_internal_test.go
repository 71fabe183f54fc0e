package pgengine

import (
	"context"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
)

// TestCheckWhileAppending checks a session again and again while another
// connection appends to it: each check reads the session in one
// snapshot, so it never sees an append in one of its reads and not in
// another (the log without the newest entry and the leaf naming it).
func TestCheckWhileAppending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTestDB(t, Options{})
	st := newStorage(t, db)
	const n = 300
	done := make(chan error, 1)
	go func() {
		for i := range n {
			if _, err := st.Append(ctx, customDraft(i), sessiontree.AppendOptions{}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for checks := 1; ; checks++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d checks during %d appends", checks, n)
			return
		default:
		}
		if err := db.Check(ctx, st.meta.ID); err != nil {
			t.Fatalf("check %d, during the appends: %v", checks, err)
		}
	}
}

// TestCheckAllWhileDeleting deletes a session between Check's listing of
// every session and its check of that one: a transaction deletes it and
// holds the labels table, which Check reads in the session before, so
// that Check waits there until the delete commits. A session deleted
// meanwhile is not damage: Check must pass.
func TestCheckAllWhileDeleting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTestDB(t, Options{})
	first, gone := newStorage(t, db), newStorage(t, db)
	for _, st := range []*Storage{first, gone} {
		if _, err := st.Append(ctx, customDraft(0), sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `LOCK TABLE labels IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	if err := deleteSession(ctx, tx, gone.meta.ID, time.Now(), sessiontree.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- db.Check(ctx, "") }()
	for {
		var waiting bool // asked outside tx: a transaction sees pg_stat_activity as it first read it
		err := db.db.GetContext(ctx, &waiting, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%labels%')`)
		if err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("Check returned %v before it met the labels lock", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("Check of every session, one deleted meanwhile = %v; want nil", err)
	}
}
