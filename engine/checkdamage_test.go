package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// TestCheckNamesSessionOffPendingList: a session whose entries the
// search index lags behind, missing from search_pending (so searches
// never read them, nor does a catch-up index them), is reported by the
// whole database's Check naming the session, as its own check does.
func TestCheckNamesSessionOffPendingList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDamaged(t)
	st := newSession(t, db)
	appendUser(t, st, "pending")
	if _, err := rawDB(t, db.Path()).Exec(`DELETE FROM search_pending`); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"", st.ID()} {
		err := engine.NewDatabase(db).Check(ctx, id)
		if !errors.Is(err, sessiontree.ErrCorrupt) || !strings.Contains(err.Error(), st.ID()) {
			t.Errorf("Check(%q) of a session missing from search_pending = %v; want ErrCorrupt naming %s", id, err, st.ID())
		}
	}
}

// appendUser appends a user message to st.
func appendUser(t *testing.T, st *engine.Storage, text string) {
	t.Helper()
	d := sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: []byte(`{"message":` + string(userMsg(text)) + `}`)}
	if _, err := st.Append(context.Background(), d, sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestCheckReportsSessionMarkedDeleting: a session row marked deleting
// whose entries are still there (a delete removes them in the
// transaction that marks it, so only damage leaves one) hides the
// session from every read; Check reports it, naming it, instead of
// checking it as sound.
func TestCheckReportsSessionMarkedDeleting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDamaged(t)
	st := newSession(t, db)
	appendUser(t, st, "kept")
	raw := rawDB(t, db.Path())
	for _, stmt := range []string{`DROP TRIGGER sessions_deleting_is_final`, `UPDATE sessions SET deleting = 1`} {
		if _, err := raw.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"", st.ID()} {
		err := db.Check(ctx, id)
		if !errors.Is(err, sessiontree.ErrCorrupt) || !strings.Contains(err.Error(), st.ID()) {
			t.Errorf("Check(%q) of a session marked deleting with its entries = %v; want ErrCorrupt naming %s", id, err, st.ID())
		}
	}
}

// TestCheckNamesRootWithParentKey: a root entry's row holding a parent
// key (damage: the walks up from it would go on to that row) is
// reported as that entry's damage, not only as an index disagreeing
// with its table.
func TestCheckNamesRootWithParentKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDamaged(t)
	st := newSession(t, db)
	appendUser(t, st, "root")
	appendUser(t, st, "child")
	raw := rawDB(t, db.Path())
	for _, stmt := range []string{`DROP TRIGGER entries_no_update`, `UPDATE entries SET parent_pk = pk + 1 WHERE seq = 1`} {
		if _, err := raw.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	var root string
	if err := raw.QueryRow(`SELECT id FROM entries WHERE seq = 1`).Scan(&root); err != nil {
		t.Fatal(err)
	}
	var ce *sessiontree.CorruptError
	if err := db.Check(ctx, st.ID()); !errors.As(err, &ce) || ce.EntryID != root {
		t.Errorf("Check of a root with a parent key = %v; want a CorruptError naming %s", err, root)
	}
}
