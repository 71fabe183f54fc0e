package pgengine_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/migrate"
	"github.com/sessiontree/sessiontree/pgengine"
)

// TestWritesLockTheSessionOnly: while another transaction holds one
// session's row, an append to it waits, and one to another session does
// not.
func TestWritesLockTheSessionOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := openDB(t)
	held := newSession(t, db)
	free := newSession(t, db)
	conn := connect(t, url)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE`, held.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := free.Append(ctx, userDraft("other session"), sessiontree.AppendOptions{}); err != nil {
		t.Errorf("append to another session while one is locked: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if _, err := held.Append(short, userDraft("waits"), sessiontree.AppendOptions{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("append to the locked session = %v; want it to wait until the deadline", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := held.Append(ctx, userDraft("after"), sessiontree.AppendOptions{}); err != nil {
		t.Errorf("append once the lock is gone: %v", err)
	}
}

// TestEntriesAreAppendOnly: the database itself refuses to change or
// delete an entry outside a session delete.
func TestEntriesAreAppendOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, conn := oneEntrySession(t)
	for _, stmt := range []string{
		`UPDATE entries SET raw = '{}'`,
		`DELETE FROM entries`,
		`TRUNCATE entries CASCADE`,
	} {
		if _, err := conn.Exec(ctx, stmt); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v; want the append-only refusal", stmt, err)
		}
	}
}

// TestRowsNeedTheirSession: the set-based checks that replace the
// foreign keys of entries and branch (migration 5) refuse rows of a
// session that does not exist, in a multi-row statement too, and the
// deletion of a sessions row that still owns rows.
func TestRowsNeedTheirSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, conn := oneEntrySession(t)
	for _, stmt := range []string{
		`INSERT INTO entries (session, seq, id, type, timestamp, depth, start_depth, raw)
			SELECT s, 2, 'x', 'message', '', 1, 1, '{}' FROM unnest(ARRAY[(SELECT max(pk) FROM sessions), -1]) AS s`,
		`INSERT INTO branch (session, depth, seq) VALUES (-1, 1, 1)`,
		`DELETE FROM sessions`,
	} {
		var pg *pgconn.PgError
		if _, err := conn.Exec(ctx, stmt); !errors.As(err, &pg) || pg.Code != "23503" {
			t.Errorf("%s: %v; want a foreign_key_violation", stmt, err)
		}
	}
	if es, err := st.Log(ctx, 0, 0); err != nil || len(es) != 1 {
		t.Errorf("Log after the refusals = %d entries, %v; want the one appended", len(es), err)
	}
}

// oneEntrySession opens a database holding a session of one entry, and
// a connection of its own to it for statements behind the engine's back.
func oneEntrySession(t *testing.T) (*pgengine.Storage, *pgx.Conn) {
	t.Helper()
	db, url := openDB(t)
	st := newSession(t, db)
	if _, err := st.Append(context.Background(), userDraft("kept"), sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	return st, connect(t, url)
}

// TestDeleteSession removes a session; it is then not found.
func TestDeleteSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openDB(t)
	st := newSession(t, db)
	e, err := st.Append(ctx, userDraft("x"), sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, sessiontree.Draft{Type: sessiontree.TypeLabel, Fields: mustFields(t, "targetId", e.ID, "label", "l")}, sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteSession(ctx, st.ID(), sessiontree.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var nf *pgengine.SessionNotFoundError
	if _, err := db.OpenSession(ctx, st.ID()); !errors.As(err, &nf) || !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("OpenSession after delete = %v; want SessionNotFoundError", err)
	}
	if err := db.DeleteSession(ctx, st.ID(), sessiontree.DeleteOptions{}); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("second DeleteSession = %v; want ErrNotFound", err)
	}
	if _, err := st.Append(ctx, userDraft("y"), sessiontree.AppendOptions{}); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("append to a deleted session = %v; want ErrNotFound", err)
	}
}

func TestCreateSessionTwiceConflicts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openDB(t)
	meta := sessiontree.SessionMeta{ID: "same-id", Cwd: "/w"}
	if _, err := db.CreateSession(ctx, meta); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateSession(ctx, meta); !errors.Is(err, sessiontree.ErrConflict) {
		t.Errorf("second CreateSession(%q) = %v; want ErrConflict", meta.ID, err)
	}
}

// TestOpenRefusesNewerSchema: a database migrated by a newer program.
func TestOpenRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, url := openDB(t)
	conn := connect(t, url)
	if _, err := conn.Exec(ctx, `INSERT INTO schema_migrations VALUES (9999, '9999_future.sql', 'x', 'later')`); err != nil {
		t.Fatal(err)
	}
	if db, err := pgengine.Open(ctx, url, pgengine.Options{}); !errors.Is(err, migrate.ErrNewer) {
		if err == nil {
			db.Close()
		}
		t.Errorf("Open of a newer schema = %v; want migrate.ErrNewer", err)
	}
}

func TestClosedDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openDB(t)
	st := newSession(t, db)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Leaf(ctx); !errors.Is(err, sessiontree.ErrClosed) {
		t.Errorf("Leaf after Close = %v; want ErrClosed", err)
	}
}

func TestOpenBadURL(t *testing.T) {
	t.Parallel()
	if _, err := pgengine.Open(context.Background(), "postgres://u:secret@[bad", pgengine.Options{}); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("Open of a bad URL = %v; want an error that does not show the password", err)
	}
}

func mustFields(t testing.TB, pairs ...any) []byte {
	t.Helper()
	f, err := sessiontree.Fields(pairs...)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// newSession creates a session in db.
func newSession(t testing.TB, db *pgengine.DB) *pgengine.Storage {
	t.Helper()
	st, err := db.CreateSession(context.Background(), sessiontree.SessionMeta{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// connect opens a connection of the test's own, behind the engine's back.
func connect(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	return connectKnowing(t, url, latestSchema(t))
}

// connectOlder opens a connection as an engine from before the schema
// fence (migration 20) did: it tells no schema.
func connectOlder(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	return connectKnowing(t, url, 0)
}

// connectKnowing opens a connection of the test's own that tells the
// schema fence it knows schema known (none when 0), as an engine of that
// version does. connect's know the latest: the tests write through them
// as a tool of this version could.
func connectKnowing(t testing.TB, url string, known int64) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	if known > 0 {
		cfg.RuntimeParams[migrate.SchemaSetting] = strconv.FormatInt(known, 10)
	}
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// latestSchema is the latest PostgreSQL migration.
func latestSchema(t testing.TB) int64 {
	t.Helper()
	migs, err := migrate.Names(migrate.PostgresFiles)
	if err != nil {
		t.Fatal(err)
	}
	return migrate.Latest(migs)
}

// TestCheckFindsDamage: Check compares the stored leaf, branch and
// counters with a replay of the log, and names what differs.
func TestCheckFindsDamage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := openDB(t)
	st := newSession(t, db)
	for _, text := range []string{"a", "b"} {
		if _, err := st.Append(ctx, userDraft(text), sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Check(ctx, st.ID()); err != nil {
		t.Fatalf("Check of a sound session: %v", err)
	}
	conn := connect(t, url)
	checkFindsEach(t, db, conn, st.ID(), []damage{
		{"counter", `UPDATE sessions SET message_count = 7`, `UPDATE sessions SET message_count = 2`},
		{"branch", `DELETE FROM branch WHERE depth = 2`, `INSERT INTO branch SELECT pk, 2, 2 FROM sessions`},
	})
}

// TestAppendAll: drafts chain under each other in one transaction; a
// refused draft leaves none of them, and the guard is checked once.
func TestAppendAll(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openDB(t)
	st := newSession(t, db)
	got, err := st.AppendAll(ctx, []sessiontree.Draft{userDraft("a"), userDraft("b"), userDraft("c")}, sessiontree.IfLeaf(""))
	if err != nil || len(got) != 3 || got[1].ParentID != got[0].ID || got[2].ParentID != got[1].ID {
		t.Fatalf("AppendAll = %v, %v; want a chain of 3", got, err)
	}
	dup := userDraft("dup")
	dup.ID = got[0].ID
	if _, err := st.AppendAll(ctx, []sessiontree.Draft{userDraft("d"), dup}, sessiontree.AppendOptions{}); !errors.Is(err, sessiontree.ErrConflict) {
		t.Errorf("AppendAll with a used id = %v; want ErrConflict", err)
	}
	if _, err := st.AppendAll(ctx, []sessiontree.Draft{userDraft("e")}, sessiontree.IfLeaf(got[0].ID)); !errors.Is(err, sessiontree.ErrConflict) {
		t.Errorf("AppendAll on a moved leaf = %v; want ErrConflict", err)
	}
	if log, _ := st.Log(ctx, 0, 0); len(log) != 3 {
		t.Errorf("log has %d entries after refused AppendAlls; want 3", len(log))
	}
}
