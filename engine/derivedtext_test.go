package engine_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/internal/testdb"
	"github.com/sessiontree/sessiontree/migrate"
)

// TestDerivedTextMigration: a database written before the NUL rule
// (sessiontree.DerivedText) holds a NUL in a name, a first user message
// and a label; migration 18 makes each a space, so that they read as a
// replay of the entries does and Check passes again.
func TestDerivedTextMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "nul.db")
	db := openDB(t, path, engine.Options{})
	st := newSession(t, db)
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	msg, _ := json.Marshal(map[string]any{"role": "user", "content": "find a\x00b", "timestamp": 1})
	first, err := s.AppendMessage(ctx, msg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetName(ctx, "name a\x00b"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetLabel(ctx, first.ID, "label a\x00b"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// Back to version 17, with the NULs a program before the rule stored.
	migs, err := migrate.Load(migrate.Files)
	if err != nil {
		t.Fatal(err)
	}
	err = testdb.Update(ctx, path, func(tx *sqlx.Tx) error {
		for _, stmt := range []string{
			`UPDATE sessions SET name = 'name a' || char(0) || 'b', first_user_text = 'find a' || char(0) || 'b'`,
			`UPDATE labels SET label = 'label a' || char(0) || 'b'`,
			`DELETE FROM ` + migrate.Table + ` WHERE version = 18`,
			`PRAGMA user_version = 17`,
		} {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db2, err := engine.Open(ctx, path, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	var version int64
	if err := db2.QueryPragma(ctx, "user_version", &version); err != nil || version != migrate.Latest(migs) {
		t.Errorf("user_version = %d, %v; want %d", version, err, migrate.Latest(migs))
	}
	var name, firstText, label string
	err = testdb.View(ctx, path, func(tx *sqlx.Tx) error {
		if err := tx.QueryRowxContext(ctx, `SELECT name, first_user_text FROM sessions`).Scan(&name, &firstText); err != nil {
			return err
		}
		return tx.GetContext(ctx, &label, `SELECT label FROM labels`)
	})
	if err != nil {
		t.Fatal(err)
	}
	if name != "name a b" || firstText != "find a b" || label != "label a b" {
		t.Errorf("after migration 18: name %q, first message %q, label %q; want the NULs made spaces", name, firstText, label)
	}
	if err := db2.Check(ctx, st.ID()); err != nil {
		t.Errorf("Check after migration 18 = %v; want nil", err)
	}
}
