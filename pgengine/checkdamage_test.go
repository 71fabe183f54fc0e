package pgengine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/pgengine"
)

// TestCheckFindsPlacementDamage: Check reports what the SQLite engine's
// Check reports of the session row and the entries' placement columns,
// which the writes read back (the leaf's placement is the next append's
// parent; an entry's depth and parent key are its walks') and which a
// replay of the log does not show: the first user text, the leaf's key
// and depth, the boundary, the last change (the last entry's
// timestamp, which the session list sorts by) and the tree's counts
// (info's branches, roots, compactions, labels) on the session row, and an entry off the
// active path with a wrong depth, parent key or parent id, or a gap in
// the seqs.
func TestCheckFindsPlacementDamage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := openDB(t)
	st := newSession(t, db)
	a, err := st.Append(ctx, userDraft("a"), sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, userDraft("b"), sessiontree.AppendOptions{}); err != nil { // seq 2, off the path below
		t.Fatal(err)
	}
	if _, err := st.SetLeaf(ctx, a.ID, sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, userDraft("c"), sessiontree.AppendOptions{}); err != nil { // under a
		t.Fatal(err)
	}
	checkFindsEach(t, db, damageConn(t, db, url, st.ID()), st.ID(), []damage{
		{"first user text", `UPDATE sessions SET first_user_text = 'x' || first_user_text`, `UPDATE sessions SET first_user_text = substr(first_user_text, 2)`},
		{"leaf key", `UPDATE sessions SET leaf_seq = leaf_seq - 1`, `UPDATE sessions SET leaf_seq = leaf_seq + 1`},
		{"leaf depth", `UPDATE sessions SET leaf_depth = leaf_depth + 1`, `UPDATE sessions SET leaf_depth = leaf_depth - 1`},
		{"boundary depth", `UPDATE sessions SET boundary_depth = boundary_depth + 1`, `UPDATE sessions SET boundary_depth = boundary_depth - 1`},
		{"depth off the path", `UPDATE entries SET depth = depth + 5 WHERE seq = 2`, `UPDATE entries SET depth = depth - 5 WHERE seq = 2`},
		{"start depth off the path", `UPDATE entries SET start_depth = start_depth + 1 WHERE seq = 2`, `UPDATE entries SET start_depth = start_depth - 1 WHERE seq = 2`},
		{"parent key off the path", `UPDATE entries SET parent_seq = parent_seq + 2 WHERE seq = 2`, `UPDATE entries SET parent_seq = parent_seq - 2 WHERE seq = 2`},
		{"parent id column off the path", `UPDATE entries SET parent_id = parent_id || 'x' WHERE seq = 2`, `UPDATE entries SET parent_id = left(parent_id, -1) WHERE seq = 2`},
		{"last change", `UPDATE sessions SET updated_at = '2001-01-01T00:00:00.000Z' || updated_at`, `UPDATE sessions SET updated_at = substr(updated_at, 25)`},
		{"seq gap", `UPDATE entries SET seq = seq + 10 WHERE seq = 2`, `UPDATE entries SET seq = seq - 10 WHERE seq = 12`},
		{"branch count", `UPDATE sessions SET branch_count = branch_count + 1`, `UPDATE sessions SET branch_count = branch_count - 1`},
		{"root count", `UPDATE sessions SET root_count = root_count - 1`, `UPDATE sessions SET root_count = root_count + 1`},
		{"compaction count", `UPDATE sessions SET compaction_count = compaction_count + 1`, `UPDATE sessions SET compaction_count = compaction_count - 1`},
		{"label count", `UPDATE sessions SET label_count = label_count + 1`, `UPDATE sessions SET label_count = label_count - 1`},
	})
}

// damageConn checks that session id is sound and returns a connection
// of the test's own whose writes go behind the append-only trigger's
// back, as a disk's or a restore's damage would.
func damageConn(t *testing.T, db *pgengine.DB, url, id string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	if err := db.Check(ctx, id); err != nil {
		t.Fatalf("Check of a sound session: %v", err)
	}
	conn := connect(t, url)
	if _, err := conn.Exec(ctx, `SET session_replication_role = replica`); err != nil {
		t.Fatal(err)
	}
	return conn
}

// damage is a statement damaging a database and the one undoing it.
type damage struct{ name, stmt, undo string }

// checkFindsEach makes each damage on conn in turn and checks that
// Check of session id reports it, and undoes it.
func checkFindsEach(t *testing.T, db *pgengine.DB, conn *pgx.Conn, id string, damages []damage) {
	t.Helper()
	ctx := context.Background()
	for _, d := range damages {
		if _, err := conn.Exec(ctx, d.stmt); err != nil {
			t.Fatalf("%s: %v", d.name, err)
		}
		if err := db.Check(ctx, id); !errors.Is(err, sessiontree.ErrCorrupt) {
			t.Errorf("Check with a damaged %s = %v; want ErrCorrupt", d.name, err)
		}
		if _, err := conn.Exec(ctx, d.undo); err != nil {
			t.Fatalf("undo %s: %v", d.name, err)
		}
	}
}

// TestStateRefusesDamagedPointers damages the pointer an entry holds to
// the latest thinking-level entry on its path: to a seq with no entry,
// to an entry that sets no thinking level (itself), to a later entry.
// The state at it must be reported corrupt, not read from whatever the
// pointer names (the default level, or a later entry's).
func TestStateRefusesDamagedPointers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := openDB(t)
	st := newSession(t, db)
	thinking := func(level string) sessiontree.Draft {
		f, err := sessiontree.Fields("thinkingLevel", level)
		if err != nil {
			t.Fatal(err)
		}
		return sessiontree.Draft{Type: sessiontree.TypeThinkingLevelChange, Fields: f}
	}
	var b2 sessiontree.Entry
	for i, d := range []sessiontree.Draft{thinking("low"), userDraft("x"), thinking("high")} {
		e, err := st.Append(ctx, d, sessiontree.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			b2 = e
		}
	}
	if got, err := st.State(ctx, b2.ID); err != nil || got.ThinkingLevel != "low" {
		t.Fatalf("before the damage, State(b2) = %+v, %v; want low", got, err)
	}
	conn := connect(t, url)
	if _, err := conn.Exec(ctx, `SET session_replication_role = replica`); err != nil {
		t.Fatal(err)
	}
	for _, ptr := range []string{`seq + 1000`, `seq`, `seq + 1`} {
		if _, err := conn.Exec(ctx, `UPDATE entries SET thinking_seq = `+ptr+` WHERE seq = 2`); err != nil {
			t.Fatal(err)
		}
		if got, err := st.State(ctx, b2.ID); !errors.Is(err, sessiontree.ErrCorrupt) {
			t.Errorf("thinking_seq = %s: State(b2) = %+v, %v; want %v", ptr, got, err, sessiontree.ErrCorrupt)
		}
		if _, err := conn.Exec(ctx, `UPDATE entries SET thinking_seq = 1 WHERE seq = 2`); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAppendRefusesDamagedEntryCount damages the sessions row's entry
// count, which an append takes its seq from: far past the log (2^50),
// one past it, one short of it. Every way of appending must refuse the
// session as corrupt and write nothing, not store the entry at a seq
// far from the log (or fail on the seq taken as a storage failure).
func TestAppendRefusesDamagedEntryCount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := openDB(t)
	conn := connect(t, url)
	if _, err := conn.Exec(ctx, `SET session_replication_role = replica`); err != nil {
		t.Fatal(err)
	}
	appends := []struct {
		name string
		run  func(st *pgengine.Storage, first string) error
	}{
		{"Append", func(st *pgengine.Storage, _ string) error {
			_, err := st.Append(ctx, userDraft("c"), sessiontree.AppendOptions{})
			return err
		}},
		{"AppendAll", func(st *pgengine.Storage, _ string) error {
			_, err := st.AppendAll(ctx, []sessiontree.Draft{userDraft("c")}, sessiontree.AppendOptions{})
			return err
		}},
		{"SetLeaf", func(st *pgengine.Storage, first string) error {
			_, err := st.SetLeaf(ctx, first, sessiontree.AppendOptions{})
			return err
		}},
		{"AppendEntries", func(st *pgengine.Storage, _ string) error {
			return db.Update(ctx, func(tx sessiontree.DatabaseTx) error {
				return tx.AppendEntries(st, []sessiontree.Entry{userEntry(t, "e1", "")})
			})
		}},
	}
	for _, count := range []string{`1125899906842624`, `3`, `1`} {
		st := newSession(t, db)
		first, err := st.Append(ctx, userDraft("a"), sessiontree.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Append(ctx, userDraft("b"), sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `UPDATE sessions SET entry_count = `+count+` WHERE id = $1`, st.ID()); err != nil {
			t.Fatal(err)
		}
		for _, a := range appends {
			if err := a.run(st, first.ID); !errors.Is(err, sessiontree.ErrCorrupt) {
				t.Errorf("entry_count = %s: %s = %v; want %v", count, a.name, err, sessiontree.ErrCorrupt)
			}
		}
		var n, last int64
		err = conn.QueryRow(ctx, `SELECT count(*), max(seq) FROM entries WHERE session = (SELECT pk FROM sessions WHERE id = $1)`, st.ID()).Scan(&n, &last)
		if err != nil || n != 2 || last != 2 {
			t.Errorf("entry_count = %s: entries hold %d, the last at seq %d (%v); want 2, the last at 2", count, n, last, err)
		}
		if _, err := conn.Exec(ctx, `UPDATE sessions SET entry_count = 2 WHERE id = $1`, st.ID()); err != nil {
			t.Fatal(err)
		}
		if e, err := st.Append(ctx, userDraft("c"), sessiontree.AppendOptions{}); err != nil || e.Seq != 3 {
			t.Errorf("entry_count = %s: Append after the repair = seq %d, %v; want seq 3", count, e.Seq, err)
		}
	}
}

// TestAppendAfterWaitingIsNotDamage: an append through the general path
// (AppendAll, SetLeaf) whose row lock waits for another writer's
// transaction reads the row as that writer committed it; the entry
// count's check against the log must see the writer's entries too, not
// report the session corrupt.
func TestAppendAfterWaitingIsNotDamage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := openDB(t)
	st := newSession(t, db)
	first, err := st.Append(ctx, userDraft("a"), sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, later := range []struct {
		name string
		run  func() error
	}{
		{"AppendAll", func() error {
			_, err := st.AppendAll(ctx, []sessiontree.Draft{userDraft("c")}, sessiontree.AppendOptions{})
			return err
		}},
		{"SetLeaf", func() error { _, err := st.SetLeaf(ctx, first.ID, sessiontree.AppendOptions{}); return err }},
	} {
		release := holdAppend(t, db, st.ID(), "w"+later.name)
		waited := make(chan error, 1)
		go func() { waited <- later.run() }()
		waitForLockWait(t, url)
		release()
		if err := <-waited; err != nil {
			t.Errorf("%s after waiting for a writer = %v; want nil", later.name, err)
		}
	}
}

// TestCheckFindsEntryColumnDamage: the columns of an entries row that
// the reads take instead of its JSON (the id and timestamp of a search
// hit or a walk, the type the outline finds entries by, a label's target)
// must agree with the JSON; a damaged one is a corrupt entry, not a walk
// failing with an entry not found, nor a search hit with another time.
func TestCheckFindsEntryColumnDamage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := openDB(t)
	st := newSession(t, db)
	a, err := st.Append(ctx, userDraft("a"), sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	label, err := sessiontree.Fields("targetId", a.ID, "label", "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, sessiontree.Draft{Type: sessiontree.TypeLabel, Fields: label}, sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	checkFindsEach(t, db, damageConn(t, db, url, st.ID()), st.ID(), []damage{
		{"leaf's id", `UPDATE entries SET id = id || 'x' WHERE seq = 2`, `UPDATE entries SET id = left(id, -1) WHERE seq = 2`},
		{"timestamp", `UPDATE entries SET timestamp = 'x' || timestamp WHERE seq = 1`, `UPDATE entries SET timestamp = substr(timestamp, 2) WHERE seq = 1`},
		{"type", `UPDATE entries SET type = 'x' || type WHERE seq = 2`, `UPDATE entries SET type = substr(type, 2) WHERE seq = 2`},
		{"label's target", `UPDATE entries SET target_id = target_id || 'x' WHERE seq = 2`, `UPDATE entries SET target_id = left(target_id, -1) WHERE seq = 2`},
	})
}

// TestCheckFindsSessionMarkedDeleting: a session row marked deleting
// with its entries still there (a delete removes the row in the
// transaction that marks it, so only damage leaves one) hides the
// session from every read and from DeleteSession; Check of it, and of
// the whole database, reports it naming it instead of skipping it.
func TestCheckFindsSessionMarkedDeleting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := openDB(t)
	st := newSession(t, db)
	if _, err := st.Append(ctx, userDraft("kept"), sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, url)
	if _, err := conn.Exec(ctx, `UPDATE sessions SET deleting = true`); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"", st.ID()} {
		err := db.Check(ctx, id)
		if !errors.Is(err, sessiontree.ErrCorrupt) || !strings.Contains(err.Error(), st.ID()) {
			t.Errorf("Check(%q) of a session marked deleting with its entries = %v; want ErrCorrupt naming %s", id, err, st.ID())
		}
	}
	execAll(t, url, `SET session_replication_role = replica`, `UPDATE sessions SET deleting = false`)
}

// TestCheckFindsRowsOfMissingSession: rows of a session whose sessions
// row is gone (entries, whose foreign key migration 3 dropped, and the
// usage a report adds up) are reported by the whole database's check:
// the entries are committed and no read finds them; the usage rows make
// every usage report wrong.
func TestCheckFindsRowsOfMissingSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, stmt := range []string{
		`DELETE FROM sessions`,
		`INSERT INTO usage_days SELECT day, 999999, bucket, input, output, cache_read, cache_write, cost FROM usage_days`,
	} {
		db, url := openDamagedDB(t)
		st := newSession(t, db)
		if _, err := st.Append(ctx, usageAtDraft(t, 5), sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		execAll(t, url, `SET session_replication_role = replica`, stmt)
		if err := db.Check(ctx, ""); !errors.Is(err, sessiontree.ErrCorrupt) {
			t.Errorf("after %s, Check() = %v; want ErrCorrupt", stmt, err)
		}
	}
}

// openDamagedDB opens a fresh database for a test that leaves it
// damaged: unlike openDB, closing it checks nothing.
func openDamagedDB(t *testing.T) (*pgengine.DB, string) {
	t.Helper()
	url := pgtest.Migrated.Database(t)
	db, err := pgengine.Open(context.Background(), url, pgengine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, url
}

// TestCheckNamesEntryWithTornJSON: an entry whose stored JSON is cut
// short, its checksum matching (as a writer that stored a torn line
// would leave it), is a CorruptError naming the entry by its id, as every
// entry's damage is (sessiontree.Database.Check), not by its seq alone.
func TestCheckNamesEntryWithTornJSON(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := openDamagedDB(t)
	st := newSession(t, db)
	var last sessiontree.Entry
	for _, text := range []string{"a", "b"} {
		e, err := st.Append(ctx, userDraft(text), sessiontree.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		last = e
	}
	torn := string(last.Raw[:len(last.Raw)/2])
	execAll(t, url, `SET session_replication_role = replica`,
		fmt.Sprintf(`UPDATE entries SET raw = '%s', checksum = %d WHERE seq = 2`, strings.ReplaceAll(torn, "'", "''"), sessiontree.EntryChecksum([]byte(torn))))
	var ce *sessiontree.CorruptError
	if err := db.Check(ctx, st.ID()); !errors.As(err, &ce) || ce.EntryID != last.ID {
		t.Errorf("Check of an entry with torn JSON = %v; want a CorruptError naming %s", err, last.ID)
	}
}
