package pgengine_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/oldbuild"
	"github.com/sessiontree/sessiontree/migrate"
	"github.com/sessiontree/sessiontree/pgengine"
)

// TestSchemaFenceRefusesOlderWriter writes to a database the current
// engine opened as an engine from before the schema fence does, on a
// connection that tells no schema: an append of a session_info entry
// whose name an engine from before migration 16 trimmed by Go's rule
// (" x\u0085 " named "x", where pi's trim keeps the U+0085), a new
// session and a delete. Each is refused whole (SQLSTATE ST003, saying to
// upgrade), so Check stays clean. Before the fence the append committed,
// and every Check after called the session corrupt ('the name is x; a
// replay of the log gives x\u0085'), for good.
func TestSchemaFenceRefusesOlderWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := besideOlder(t, false)
	db, st, old, pk := b.db, b.st, b.old, b.pk
	writes := map[string][]string{
		"append": olderNameAppend(pk, b.first),
		"create": {`INSERT INTO sessions (id, version, created_at, cwd, updated_at) VALUES ('older', 3, '2026-03-01T10:00:00.000Z', '/w', '2026-03-01T10:00:00.000Z')`},
		"delete": {fmt.Sprintf(`UPDATE sessions SET deleting = true WHERE pk = %d`, pk)},
	}
	for name, stmts := range writes {
		err := execTx(ctx, old, stmts)
		var pg *pgconn.PgError
		if !errors.As(err, &pg) || pg.Code != "ST003" || !strings.Contains(pg.Message, "upgrade sessiontree") {
			t.Errorf("an older engine's %s = %v; want the schema fence's refusal (ST003), saying to upgrade", name, err)
		}
	}
	if s, err := st.Stats(ctx); err != nil || s.Entries != 1 {
		t.Errorf("Stats() = %+v, %v; want 1 entry, none of the older engine's", s, err)
	}
	if _, err := db.OpenStorage(ctx, "older"); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("OpenStorage(the older engine's session) = %v; want ErrNotFound", err)
	}
	if err := db.Check(ctx, ""); err != nil {
		t.Errorf("Check() after the older engine's writes = %v", err)
	}
}

// olderNameAppend is an older engine's append, to session pk under entry
// parent (its first), of a session_info entry naming it " x\u0085 ": its
// entry, its branch row and its sessions row with the name as an engine
// from before migration 16 derived it, trimmed by Go's rule ("x", where
// pi's trim keeps the U+0085).
func olderNameAppend(pk int64, parent string) []string {
	raw := fmt.Sprintf(`{"type":"session_info","id":"b2","parentId":%q,"timestamp":"2026-03-01T10:00:00.000Z","name":" x\u0085 "}`, parent)
	return []string{
		fmt.Sprintf(`INSERT INTO entries (session, seq, id, parent_id, parent_seq, type, timestamp, depth, start_depth, raw, checksum)
			VALUES (%d, 2, 'b2', '%s', 1, 'session_info', '2026-03-01T10:00:00.000Z', 2, 1, '%s', %d)`,
			pk, parent, raw, sessiontree.EntryChecksum([]byte(raw))),
		fmt.Sprintf(`INSERT INTO branch (session, depth, seq) VALUES (%d, 2, 2)`, pk),
		fmt.Sprintf(`UPDATE sessions SET entry_count = 2, leaf_seq = 2, leaf_id = 'b2', leaf_depth = 2, name = 'x',
			updated_at = '2026-03-01T10:00:00.000Z' WHERE pk = %d`, pk),
	}
}

// TestSchemaFenceRepairsOlderWrites: an older engine's append that went in
// before the fence, by a rule since changed (olderNameAppend: a name
// trimmed by Go's rule, after migration 16 had computed the names again),
// which Check calls corrupt, is computed again by the Open that applies
// migration 20, and Check passes. Before, nothing listed the session
// again, and every Check called it corrupt, for good.
func TestSchemaFenceRepairsOlderWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := besideOlder(t, true)
	db, st, url := b.db, b.st, b.url
	if err := execTx(ctx, b.old, olderNameAppend(b.pk, b.first)); err != nil {
		t.Fatal(err)
	}
	if err := db.Check(ctx, st.ID()); !errors.Is(err, sessiontree.ErrCorrupt) || !strings.Contains(err.Error(), "the name is x;") {
		t.Fatalf("Check() of the older engine's append = %v; want ErrCorrupt, the name", err)
	}
	newer := openURL(t, url)
	if err := newer.Check(ctx, ""); err != nil {
		t.Errorf("Check() after the Open that applied migration 20 = %v", err)
	}
	again, err := newer.OpenStorage(ctx, st.ID())
	if err != nil {
		t.Fatal(err)
	}
	if name, err := again.Name(ctx); err != nil || name != "x\u0085" {
		t.Errorf("Name() = %q, %v; want %q, by pi's trim", name, err, "x\u0085")
	}
}

// beside is a database with a session of one entry, and a connection
// to it as an engine from before the schema fence has.
type beside struct {
	db    *pgengine.DB // the current engine's; its cleanup checks every session
	url   string
	st    *pgengine.Storage
	first string    // the id of the session's entry
	old   *pgx.Conn // the older engine's connection
	pk    int64     // the session's key, as the older engine reads it
}

// besideOlder makes a beside; with unfenced, the database as before
// migration 20 (its trigger and record taken back), where an older
// engine's writes went in.
func besideOlder(t *testing.T, unfenced bool) beside {
	t.Helper()
	ctx := context.Background()
	b := beside{}
	b.db, b.url = openDB(t)
	b.st = newSession(t, b.db)
	e, err := b.st.Append(ctx, userDraft("one"), sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b.first = e.ID
	if unfenced {
		execAll(t, b.url, `DROP TRIGGER sessions_schema_fence ON sessions`, `DROP FUNCTION schema_fence()`,
			`DELETE FROM schema_migrations WHERE version = 20`)
	}
	b.old = connectOlder(t, b.url)
	if err := b.old.QueryRow(ctx, `SELECT pk FROM sessions WHERE id = $1`, b.st.ID()).Scan(&b.pk); err != nil {
		t.Fatal(err) // an older engine's reads go on
	}
	return b
}

// execTx runs stmts on conn in one transaction, rolled back at the
// first error.
func execTx(ctx context.Context, conn *pgx.Conn, stmts []string) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// TestSchemaFenceNewerSchema moves the fence past this engine, as a
// later migration changing a rule of derived values will (migration
// 20's trigger, made again with the next version), while the engine has
// the database open: its writes fail with migrate.ErrNewer, storing
// nothing, and its reads go on.
func TestSchemaFenceNewerSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := openDB(t)
	st := newSession(t, db)
	if _, err := st.Append(ctx, userDraft("one"), sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	fence, err := fs.ReadFile(migrate.PostgresFiles, "0020_schema_fence.sql")
	if err != nil {
		t.Fatal(err)
	}
	next := fmt.Sprint(latestSchema(t) + 1)
	_, trigger, _ := strings.Cut(string(fence), "CREATE TRIGGER")
	later := strings.Replace(trigger, "('20')", "('"+next+"')", 1)
	execAll(t, url, `DROP TRIGGER sessions_schema_fence ON sessions`, "CREATE TRIGGER"+later)
	_, err = st.Append(ctx, userDraft("two"), sessiontree.AppendOptions{})
	if !errors.Is(err, migrate.ErrNewer) || !strings.Contains(err.Error(), "upgrade sessiontree") {
		t.Errorf("Append() after a newer migration = %v; want migrate.ErrNewer, saying to upgrade", err)
	}
	if _, err := db.CreateSession(ctx, sessiontree.SessionMeta{ID: "later"}); !errors.Is(err, migrate.ErrNewer) {
		t.Errorf("CreateSession() after a newer migration = %v; want migrate.ErrNewer", err)
	}
	if err := db.DeleteSession(ctx, st.ID(), sessiontree.DeleteOptions{}); !errors.Is(err, migrate.ErrNewer) {
		t.Errorf("DeleteSession() after a newer migration = %v; want migrate.ErrNewer", err)
	}
	if s, err := st.Stats(ctx); err != nil || s.Entries != 1 {
		t.Errorf("Stats() = %+v, %v; want 1 entry, the refused append's not stored", s, err)
	}
}

// TestSchemaFenceStopsOlderBuild runs a real engine of an older commit
// (oldbuild.BeforeShapeInGo, PostgreSQL schema 6) beside this one on one
// database: it connects first and writes, this engine migrates the
// database and writes, then the older one writes again. Its append and
// its new session are refused (ST003, saying to upgrade), and Check is
// clean. Before the fence they committed, with the name trimmed by Go's
// rule and the usage kept on the day an older time rule gave, and every
// Check after called the session corrupt.
func TestSchemaFenceStopsOlderBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an older engine")
	}
	t.Parallel()
	ctx := context.Background()
	old := oldbuild.Start(t, oldbuild.Build(t, oldbuild.BeforeShapeInGo))
	url := emptyDatabase.Database(t)
	old.Must("open pg " + url)
	old.Must("create older")
	old.Must("write older")

	db := openURL(t, url) // migrates; its cleanup checks every session
	st := newSession(t, db)
	if _, err := st.Append(ctx, userDraft("newer"), sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"write older", "create older2"} {
		if got := old.Do(cmd); !strings.Contains(got, "upgrade sessiontree to write to it (SQLSTATE ST003)") {
			t.Errorf("older engine: %s = %s; want the schema fence's refusal (ST003)", cmd, got)
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
