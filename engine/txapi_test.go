package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// TestUpdateIsAtomic creates a session and imports into it in one
// transaction; an error from the function undoes both, and the caller's
// own error comes back as it is.
func TestUpdateIsAtomic(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: sessiontree.TypeCustom,
		Fields: []byte(`{"customType":"x"}`)}, "aaaaaaaa", "", "2026-03-01T10:00:00.000Z")
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err = db.Update(ctx, func(tx *engine.Tx) error {
		st, err := tx.CreateSession(sessiontree.SessionMeta{ID: "s1", Cwd: "/w"})
		if err != nil {
			return err
		}
		if err := tx.AppendBatch(st, []sessiontree.Entry{e}); err != nil {
			return err
		}
		if _, err := tx.OpenSession("s1"); err != nil {
			return err
		}
		return boom
	})
	if err != boom {
		t.Fatalf("Update() = %v; want the function's own error", err)
	}
	if _, err := db.OpenSession(ctx, "s1"); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("session of a rolled-back Update: %v; want ErrNotFound", err)
	}
	err = db.Update(ctx, func(tx *engine.Tx) error {
		st, err := tx.CreateSession(sessiontree.SessionMeta{ID: "s1", Cwd: "/w"})
		if err != nil {
			return err
		}
		if _, err := tx.SQL().ExecContext(tx.Context(), `UPDATE sessions SET name = 'x' WHERE id = ?`, st.ID()); err != nil {
			return err
		}
		return tx.AppendBatch(st, []sessiontree.Entry{e})
	})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	err = db.View(ctx, func(tx *sqlx.Tx) error {
		return tx.GetContext(ctx, &n, `SELECT entry_count FROM sessions WHERE id = 's1'`)
	})
	if err != nil || n != 1 {
		t.Errorf("entry_count after Update = %d, %v; want 1", n, err)
	}
	err = db.Update(ctx, func(tx *engine.Tx) error { return tx.DeleteSession("s1") })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.OpenSession(ctx, "s1"); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("OpenSession after Tx.DeleteSession = %v; want ErrNotFound", err)
	}
}
