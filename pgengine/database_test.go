package pgengine_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/pgengine"
)

// TestTryUpdateLocksPerSession holds one session's row in an Update:
// TryUpdate on that session fails at once with ErrLocked and changes
// nothing, on another session it goes through, and WaitForLock returns
// once the holder commits.
func TestTryUpdateLocksPerSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openDB(t)
	busy, err := db.CreateSession(ctx, sessiontree.SessionMeta{ID: "busy"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateSession(ctx, sessiontree.SessionMeta{ID: "free"}); err != nil {
		t.Fatal(err)
	}
	appendUser := func(tx sessiontree.DatabaseTx, id, entryID string) error {
		s, err := tx.Session(id)
		if err != nil {
			return err
		}
		return tx.AppendEntries(s, []sessiontree.Entry{userEntry(t, entryID, "")})
	}
	held, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- db.Update(ctx, func(tx sessiontree.DatabaseTx) error {
			if err := appendUser(tx, "busy", "h1"); err != nil {
				return err
			}
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	err = db.TryUpdate(ctx, func(tx sessiontree.DatabaseTx) error { return appendUser(tx, "busy", "t1") })
	if !errors.Is(err, sessiontree.ErrLocked) {
		t.Errorf("TryUpdate on a session another transaction writes = %v; want ErrLocked", err)
	}
	if err := db.TryUpdate(ctx, func(tx sessiontree.DatabaseTx) error { return appendUser(tx, "free", "f1") }); err != nil {
		t.Errorf("TryUpdate on another session = %v; want nil (writes serialize per session)", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- db.WaitForLock(ctx) }()
	select {
	case err := <-waited:
		t.Fatalf("WaitForLock returned %v while the session was held", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Errorf("WaitForLock after the holder committed = %v", err)
	}
	log, err := busy.Log(ctx, 0, 0)
	if err != nil || len(log) != 1 || log[0].ID != "h1" {
		t.Errorf("busy's log = %v, %v; want h1 alone (the refused TryUpdate wrote nothing)", log, err)
	}
}

// userEntry is a user message with its own id, under parent ("": a root).
func userEntry(t testing.TB, id, parent string) sessiontree.Entry {
	t.Helper()
	raw := `{"type":"message","id":"` + id + `","parentId":null,"timestamp":"2026-03-01T10:00:00.000Z","message":{"role":"user","content":"hi"}}`
	if parent != "" {
		raw = `{"type":"message","id":"` + id + `","parentId":"` + parent + `","timestamp":"2026-03-01T10:00:00.000Z","message":{"role":"user","content":"hi"}}`
	}
	e, err := sessiontree.DecodeEntry([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestChecksumAndUsageDamage changes an entry's JSON and a usage row
// behind the engine's back (as the superuser, with the append-only
// trigger off): Check and RawEntries report the entry, Check the usage.
func TestChecksumAndUsageDamage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.Migrated.Database(t)
	db, err := pgengine.Open(ctx, url, pgengine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := db.CreateSession(ctx, sessiontree.SessionMeta{ID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	u, err := sessiontree.Fields("message", map[string]any{"role": "user", "content": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := sessiontree.Fields("message", map[string]any{"role": "assistant", "content": []any{},
		"provider": "p", "model": "m", "usage": map[string]any{"input": 3, "output": 4, "cost": map[string]any{"total": 0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AppendAll(ctx, []sessiontree.Draft{{Type: sessiontree.TypeMessage, ID: "u1", Fields: u},
		{Type: sessiontree.TypeMessage, ID: "a1", Fields: a}}, sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := db.Check(ctx, "s"); err != nil {
		t.Fatalf("Check before damage = %v", err)
	}
	rep, err := db.Usage(ctx, sessiontree.UsageQuery{By: sessiontree.UsageByModel})
	if err != nil || len(rep.Rows) != 1 || rep.Rows[0].Key != "p/m" || rep.Rows[0].Tokens.Total != 7 || rep.Rows[0].Cost != 0.5 {
		t.Errorf("Usage(by model) = %+v, %v; want one row p/m, 7 tokens, cost 0.5", rep, err)
	}
	raw, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	exec(`UPDATE usage_days SET input = input + 1`)
	if err := db.Check(ctx, "s"); !errors.Is(err, sessiontree.ErrCorrupt) {
		t.Errorf("Check after a usage row changed = %v; want ErrCorrupt", err)
	}
	exec(`UPDATE usage_days SET input = input - 1`)
	exec(`ALTER TABLE entries DISABLE TRIGGER entries_no_update`)
	exec(`UPDATE entries SET raw = replace(raw, '"hi"', '"ho"') WHERE id = 'u1'`)
	exec(`ALTER TABLE entries ENABLE TRIGGER entries_no_update`)
	var ce *sessiontree.CorruptError
	if err := db.Check(ctx, "s"); !errors.As(err, &ce) || ce.EntryID != "u1" {
		t.Errorf("Check after u1's JSON changed = %v; want a CorruptError naming u1", err)
	}
	err = db.View(ctx, func(tx sessiontree.DatabaseTx) error {
		return tx.RawEntries("s", func(sessiontree.RawEntry) error { return nil })
	})
	if !errors.As(err, &ce) || ce.EntryID != "u1" {
		t.Errorf("RawEntries after u1's JSON changed = %v; want a CorruptError naming u1", err)
	}
}
