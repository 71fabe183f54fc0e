package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// TestUpdateIsAtomic creates a session and imports into it in one
// transaction; an error from the function undoes both, and the caller's
// own error comes back as it is.
func TestUpdateIsAtomic(t *testing.T) {
	t.Parallel()
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
		st, err := tx.NewSession(sessiontree.SessionMeta{ID: "s1", Cwd: "/w"}, json.RawMessage(`{"k":1}`))
		if err != nil {
			return err
		}
		return tx.AppendEntries(st, []sessiontree.Entry{e})
	})
	if err != nil {
		t.Fatal(err)
	}
	var in sessiontree.SessionInfo
	err = engine.NewDatabase(db).View(ctx, func(tx sessiontree.DatabaseTx) (err error) {
		in, err = tx.SessionInfo("s1")
		return err
	})
	if err != nil || in.Entries != 1 || string(in.Metadata) != `{"k":1}` {
		t.Errorf("SessionInfo after Update = %+v, %v; want 1 entry, metadata {\"k\":1}", in, err)
	}
	err = db.Update(ctx, func(tx *engine.Tx) error { return tx.DeleteSession("s1", sessiontree.DeleteOptions{}) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.OpenSession(ctx, "s1"); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("OpenSession after Tx.DeleteSession = %v; want ErrNotFound", err)
	}
}
