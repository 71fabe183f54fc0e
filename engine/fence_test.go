package engine_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/internal/oldbuild"
	"github.com/sessiontree/sessiontree/migrate"
)

// TestSchemaFenceRefusesOlderWriter writes to a database the current
// engine opened the way an engine from before migration 19 did, on a
// connection of modernc's own driver (no sessiontree_upgrade_needed, as
// no engine before migration 28 has): an append (its entry, its branch
// row, its sessions row with the counters it kept, the tree's counts left
// to a trigger migration 19 dropped), a new session and a delete. Each is
// refused whole, so the tree's counts stay right and Check stays clean.
// Before the fence the append committed, and every Check after called the
// session corrupt ('stored tree counts ...'), for good.
func TestSchemaFenceRefusesOlderWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	db := openDB(t, path, engine.Options{})
	st := newSession(t, db)
	first, err := st.Append(ctx, userDraft("one"), sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	var pk int64
	if err := old.QueryRowContext(ctx, `SELECT pk FROM sessions WHERE id = ?`, st.ID()).Scan(&pk); err != nil {
		t.Fatal(err) // an older engine's reads go on
	}
	raw := fmt.Sprintf(`{"type":"message","id":"b2","parentId":%q,"timestamp":"2026-03-01T10:00:00.000Z","message":{"role":"user","content":"two"}}`, first.ID)
	writes := map[string][]string{
		"append": {
			fmt.Sprintf(`INSERT INTO entries (pk, session, seq, id, parent_id, parent_pk, type, timestamp, depth, start_depth, raw, checksum)
				VALUES (%d, %d, 2, 'b2', %q, %d, 'message', '2026-03-01T10:00:00.000Z', 2, 1, '%s', %d)`,
				pk<<32|2, pk, first.ID, pk<<32|1, raw, sessiontree.EntryChecksum([]byte(raw))),
			fmt.Sprintf(`INSERT INTO branch (session, depth, entry) VALUES (%d, 2, %d)`, pk, pk<<32|2),
			fmt.Sprintf(`UPDATE sessions SET entry_count = 2, message_count = 2, user_messages = 2, leaf_pk = %d, leaf_id = 'b2', leaf_depth = 2 WHERE pk = %d`, pk<<32|2, pk),
		},
		"create": {`INSERT INTO sessions (id, version, created_at, cwd, updated_at) VALUES ('older', 3, '2026-03-01T10:00:00.000Z', '/w', '2026-03-01T10:00:00.000Z')`},
		"delete": {`UPDATE sessions SET deleting = 1 WHERE pk = ` + fmt.Sprint(pk), `DELETE FROM sessions WHERE pk = ` + fmt.Sprint(pk)},
	}
	for name, stmts := range writes {
		err := execTx(ctx, old, stmts)
		if err == nil || !strings.Contains(err.Error(), "no such function: sessiontree_upgrade_needed") {
			t.Errorf("an older engine's %s = %v; want it refused: no such function: sessiontree_upgrade_needed", name, err)
		}
	}
	if n := entryCount(t, st); n != 1 {
		t.Errorf("entries after the older engine's writes = %d; want 1, none of its", n)
	}
	var sessions int
	if err := old.QueryRowContext(ctx, `SELECT count(*) FROM sessions`).Scan(&sessions); err != nil || sessions != 1 {
		t.Errorf("sessions = %d, %v; want the one, no other made or deleted", sessions, err)
	}
	if err := db.Check(ctx, ""); err != nil {
		t.Errorf("Check() after the older engine's writes = %v", err)
	}
}

func userDraft(text string) sessiontree.Draft {
	return sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":` + string(userMsg(text)) + `}`)}
}

// execTx runs stmts in one transaction, rolled back at the first error.
func execTx(ctx context.Context, db *sql.DB, stmts []string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

func entryCount(t testing.TB, st *engine.Storage) int64 {
	t.Helper()
	s, err := st.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s.Entries
}

// TestSchemaFenceNewerSchema moves the fence past this engine, as a
// later migration changing a rule of derived values will (migration 28's
// triggers, made again with the next version, and that version), while
// the engine has the database open: its writes, through a session and
// through Update, fail with ErrNewer, storing nothing, and its reads go on.
func TestSchemaFenceNewerSchema(t *testing.T) {
	ctx := context.Background()
	db := openDamaged(t)
	path := db.Path()
	st := newSession(t, db)
	if _, err := st.Append(ctx, userDraft("one"), sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	fence, err := fs.ReadFile(migrate.Files, "0028_schema_fence.sql")
	if err != nil {
		t.Fatal(err)
	}
	migs, err := migrate.Names(migrate.Files)
	if err != nil {
		t.Fatal(err)
	}
	next := fmt.Sprint(migrate.Latest(migs) + 1)
	later := strings.ReplaceAll(strings.ReplaceAll(string(fence), "(28)", "("+next+")"), "schema 28", "schema "+next)
	raw := rawDB(t, path)
	if err := execTx(ctx, raw, []string{`DROP TRIGGER sessions_fence_insert`, `DROP TRIGGER sessions_fence_update`,
		`DROP TRIGGER sessions_fence_delete`, later, `PRAGMA user_version = ` + next}); err != nil {
		t.Fatal(err)
	}

	_, err = st.Append(ctx, userDraft("two"), sessiontree.AppendOptions{})
	if !errors.Is(err, engine.ErrNewer) || !strings.Contains(err.Error(), "upgrade sessiontree") {
		t.Errorf("Append() after a newer migration = %v; want ErrNewer, saying to upgrade", err)
	}
	if _, err := db.CreateSession(ctx, sessiontree.SessionMeta{ID: "later"}); !errors.Is(err, engine.ErrNewer) {
		t.Errorf("CreateSession() after a newer migration = %v; want ErrNewer", err)
	}
	err = db.Update(ctx, func(tx *engine.Tx) error { return tx.DeleteSession(st.ID(), sessiontree.DeleteOptions{}) })
	if !errors.Is(err, engine.ErrNewer) {
		t.Errorf("Update(DeleteSession) after a newer migration = %v; want ErrNewer", err)
	}
	if n := entryCount(t, st); n != 1 {
		t.Errorf("entries = %d; want 1, the refused append's not stored", n)
	}
}

// TestSchemaFenceStopsOlderBuild runs a real engine from before migration
// 19 (oldbuild.BeforeShapeInGo, schema 18) beside this one on one file:
// it opens the file first and writes, this engine migrates it and
// writes, then the older one writes again. Its append and its new
// session are refused ('no such function: sessiontree_upgrade_needed'),
// and Check is clean. Before the fence they committed, with the tree's
// counts (the trigger that kept them was gone) and the usage by day
// (kept on the day an older time rule gave) wrong, and every Check after
// called the session corrupt.
func TestSchemaFenceStopsOlderBuild(t *testing.T) {
	old, path := olderOnFile(t)
	ctx := context.Background()
	old.Must("write older")

	db := openDB(t, path, engine.Options{}) // migrates; its cleanup checks every session
	st := newSession(t, db)
	if _, err := st.Append(ctx, userDraft("newer"), sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"write older", "create older2"} {
		if got := old.Do(cmd); !strings.Contains(got, "no such function: sessiontree_upgrade_needed") {
			t.Errorf("older engine: %s = %s; want it refused: no such function: sessiontree_upgrade_needed", cmd, got)
		}
	}
	// The older process, still running, holds no lock its refused
	// writes took.
	if _, err := st.Append(ctx, userDraft("after"), sessiontree.AppendOptions{}); err != nil {
		t.Errorf("Append() beside the refused older engine = %v", err)
	}
	if err := db.Check(ctx, ""); err != nil {
		t.Errorf("Check() after the older engine's writes = %v", err)
	}
}

// TestRepairOlderBuildsWrites lets a real engine from before migration
// 19 (oldbuild.BeforeShapeInGo) write beside this one on a file this one
// migrated, with the fence taken away, as it wrote before the fence was
// there: its append commits with the tree's counts, the usage by day and
// the name by its older rules, and Check calls the session corrupt.
// Repair computes them again, and Check is clean (openDB's cleanup checks
// the whole database too).
func TestRepairOlderBuildsWrites(t *testing.T) {
	old, path := olderOnFile(t)
	ctx := context.Background()
	db := openDB(t, path, engine.Options{}) // migrates
	fence, err := fs.ReadFile(migrate.Files, "0028_schema_fence.sql")
	if err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, path)
	mustExec(t, raw, `DROP TRIGGER sessions_fence_insert`, `DROP TRIGGER sessions_fence_update`, `DROP TRIGGER sessions_fence_delete`)
	old.Must("write older")
	mustExec(t, raw, string(fence))
	if err := db.Check(ctx, "older"); !errors.Is(err, sessiontree.ErrCorrupt) {
		t.Fatalf("Check() after the older engine's write before the fence = %v; want ErrCorrupt", err)
	}
	repaired, err := db.Repair(ctx, "")
	if err != nil || len(repaired) != 1 || repaired[0].ID != "older" {
		t.Fatalf("Repair() = %+v, %v; want the older engine's session repaired", repaired, err)
	}
	t.Logf("repaired: it was %v", repaired[0].Was)
	if err := db.Check(ctx, ""); err != nil {
		t.Errorf("Check() after Repair = %v", err)
	}
}

// olderOnFile runs, in parallel with other tests, a real engine from
// before migration 19 (oldbuild.BeforeShapeInGo) that opens a new file,
// which it returns, and creates session "older" in it. Skipped with
// -short.
func olderOnFile(t *testing.T) (*oldbuild.Writer, string) {
	if testing.Short() {
		t.Skip("builds an older engine")
	}
	t.Parallel()
	old := oldbuild.Start(t, oldbuild.Build(t, oldbuild.BeforeShapeInGo))
	path := filepath.Join(t.TempDir(), "s.db")
	old.Must("open sqlite " + path)
	old.Must("create older")
	return old, path
}
