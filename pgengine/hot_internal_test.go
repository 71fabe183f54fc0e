package pgengine

import (
	"context"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestAppendsUpdateTheRowHOT: an append's update of its sessions row
// changes no indexed column, so the server makes it a HOT update (no
// index entries): after the first append, which puts the session behind
// the search index, every update counted on the table is HOT
// (pg_stat_user_tables, flushed by the one connection that wrote).
func TestAppendsUpdateTheRowHOT(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStorage(t, openTestDB(t, Options{MaxConns: 1}))
	if _, err := st.Append(ctx, customDraft(0), sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	before := rowUpdates(t, st.db)
	const n = 20
	for i := range n {
		if _, err := st.Append(ctx, customDraft(i+1), sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	after := rowUpdates(t, st.db)
	if upd, hot := after.Updates-before.Updates, after.HOT-before.HOT; upd < n || hot != upd {
		t.Errorf("%d appends: %d updates of sessions rows, %d of them HOT; want every one HOT", n, upd, hot)
	}
}

// customDraft is a custom entry carrying i.
func customDraft(i int) sessiontree.Draft {
	f, _ := sessiontree.Fields("customType", "step", "data", i)
	return sessiontree.Draft{Type: sessiontree.TypeCustom, Fields: f}
}

type updateCounts struct {
	Updates int64 `db:"n_tup_upd"`
	HOT     int64 `db:"n_tup_hot_upd"`
}

// rowUpdates reads the sessions table's update counts, after making the
// pool's one connection flush its own.
func rowUpdates(t *testing.T, db *DB) updateCounts {
	t.Helper()
	ctx := context.Background()
	if _, err := db.db.ExecContext(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
		t.Fatal(err)
	}
	var c updateCounts
	if err := db.db.GetContext(ctx, &c, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'sessions'`); err != nil {
		t.Fatal(err)
	}
	return c
}
