package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/migrate"
)

// rowChecksums returns every entries row's key, id, JSON and checksum.
type checksumRow struct {
	pk  int64
	id  string
	raw []byte
	sum sql.NullInt64
}

func rowChecksums(t *testing.T, path string) []checksumRow {
	t.Helper()
	rows, err := rawDB(t, path).Query(`SELECT pk, id, CAST(raw AS BLOB), checksum FROM entries ORDER BY pk`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []checksumRow
	for rows.Next() {
		var r checksumRow
		if err := rows.Scan(&r.pk, &r.id, &r.raw, &r.sum); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestChecksumsOnEveryWrite writes entries by every write path (append,
// SetLeaf, a batch of one chunk and of many, a batch in a caller's
// transaction) and finds each row's checksum to be its JSON's.
func TestChecksumsOnEveryWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	db := openDB(t, path, engine.Options{})
	st := newSession(t, db)
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	first, err := s.AppendMessage(ctx, userMsg("first"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendModelChange(ctx, "anthropic", "claude"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetLabel(ctx, first.ID, "start"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetLeaf(ctx, first.ID, sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendBatch(ctx, batchChain(t, "a", first.ID, 3)); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendBatch(ctx, batchChain(t, "b", "a0002", 700)); err != nil {
		t.Fatal(err)
	}
	err = db.Update(ctx, func(tx *engine.Tx) error {
		other, err := tx.CreateSession(sessiontree.SessionMeta{Cwd: "/work/other"})
		if err != nil {
			return err
		}
		return tx.AppendBatch(other, batchChain(t, "c", "", 300))
	})
	if err != nil {
		t.Fatal(err)
	}
	rows := rowChecksums(t, path)
	if len(rows) != 4+3+700+300 {
		t.Fatalf("%d entries rows; want %d", len(rows), 4+3+700+300)
	}
	for _, r := range rows {
		if want := sessiontree.EntryChecksum(r.raw); !r.sum.Valid || r.sum.Int64 != want {
			t.Errorf("entry %s: checksum %v; want %d", r.id, r.sum, want)
		}
	}
}

// damageEntry changes entry id's row behind the engine's back with
// statement set, a SET clause for entries.
func damageEntry(t *testing.T, path, id, set string) {
	t.Helper()
	raw := rawDB(t, path)
	for _, stmt := range []string{
		`DROP TRIGGER entries_no_update`,
		`UPDATE entries SET ` + set + ` WHERE id = '` + id + `'`,
		`CREATE TRIGGER entries_no_update BEFORE UPDATE ON entries
BEGIN
    SELECT RAISE(ABORT, 'entries are append-only: UPDATE refused');
END`,
	} {
		if _, err := raw.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
}

// TestReadsVerifyChecksums damages one entry's JSON (a letter changed,
// JSON cut short) or its checksum (lost) behind the engine's back: every
// read that hands the entry out fails with a CorruptError naming it, the
// packed read of the active path and the row-by-row read, the walk off
// the branch, the log, one entry, entries by type and the state; reads
// that do not meet it still work; Check names it.
func TestReadsVerifyChecksums(t *testing.T) {
	t.Parallel()
	damages := map[string]string{
		"a letter changed":  `raw = substr(raw, 1, length(raw) - 3) || 'X' || substr(raw, length(raw) - 1)`,
		"JSON cut short":    `raw = substr(raw, 1, length(raw) - 5)`,
		"checksum lost":     `checksum = NULL`,
		"checksum replaced": `checksum = (checksum + 1) % 4294967296`,
	}
	// One session of 600 messages, made once (601 appends, each its own
	// transaction, took most of the test's time under the race detector
	// when each case made its own), copied for each damage.
	ctx := context.Background()
	template := filepath.Join(t.TempDir(), "template.db")
	tdb, err := engine.Open(ctx, template, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tst := newSession(t, tdb)
	s := sessiontree.NewSession(tst, sessiontree.SessionOptions{})
	var ids []string
	var model sessiontree.Entry
	for i := range 600 {
		if i == 450 {
			if model, err = s.AppendModelChange(ctx, "anthropic", "claude"); err != nil {
				t.Fatal(err)
			}
		}
		e, err := s.AppendMessage(ctx, userMsg(fmt.Sprintf("text of %d", i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	// The leaf moves back, so that the entries after the 400th message,
	// the model change among them, are off the active branch (read by
	// walking parent ids).
	if _, err := tst.SetLeaf(ctx, ids[399], sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := tdb.Close(); err != nil { // checkpointed: the file is whole
		t.Fatal(err)
	}
	for name, set := range damages {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.db")
			copyFile(t, template, path)
			db, err := engine.Open(ctx, path, engine.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			st, err := db.OpenSession(ctx, tst.ID())
			if err != nil {
				t.Fatal(err)
			}
			onBranch, offBranch := ids[299], ids[499]
			for _, id := range []string{onBranch, offBranch, model.ID} {
				damageEntry(t, path, id, set)
			}

			wantCorrupt := func(what string, err error, id string) {
				t.Helper()
				var ce *sessiontree.CorruptError
				if !errors.Is(err, sessiontree.ErrCorrupt) || !errors.As(err, &ce) || ce.EntryID != id {
					t.Errorf("%s = %v; want a CorruptError naming entry %s", what, err, id)
				}
			}
			_, err = st.Path(ctx, ids[399])
			wantCorrupt("Path(leaf)", err, onBranch) // the packed read
			_, err = st.FullPath(ctx, ids[350])
			wantCorrupt("FullPath(on the branch)", err, onBranch)
			_, err = st.Path(ctx, ids[599])
			wantCorrupt("Path(off the branch)", err, offBranch) // the walk
			_, err = st.Entry(ctx, offBranch)
			wantCorrupt("Entry(damaged)", err, offBranch)
			_, err = st.Log(ctx, 0, 0)
			wantCorrupt("Log()", err, onBranch)
			_, err = st.Log(ctx, 400, 0)
			wantCorrupt("Log(400)", err, model.ID)
			_, err = st.EntriesByType(ctx, sessiontree.TypeMessage)
			wantCorrupt("EntriesByType(message)", err, onBranch)
			_, err = st.EntriesByType(ctx, sessiontree.TypeModelChange)
			wantCorrupt("EntriesByType(model_change)", err, model.ID)
			_, err = st.State(ctx, ids[599])
			wantCorrupt("State(after the model change)", err, model.ID)

			// Reads that do not meet a damaged entry work.
			if path, err := st.Path(ctx, ids[200]); err != nil || len(path) != 201 {
				t.Errorf("Path(before the damage) = %d entries, %v; want 201", len(path), err)
			}
			if log, err := st.Log(ctx, 300, 100); err != nil || len(log) != 100 {
				t.Errorf("Log(300, 100) = %d entries, %v; want 100", len(log), err)
			}
			if _, err := st.State(ctx, ids[399]); err != nil {
				t.Errorf("State(leaf) = %v; want nil: no damaged entry sets its state", err)
			}

			err = db.Check(ctx, "")
			wantCorrupt("Check()", err, onBranch)
			if !strings.Contains(fmt.Sprint(err), st.ID()) {
				t.Errorf("Check() = %v; want it to name session %s", err, st.ID())
			}
		})
	}
}

// TestChecksumMigration upgrades a database from before migration 11 and
// finds every row's checksum filled, but for a row whose JSON was already
// damaged, which gets none and is reported as corrupt; the append-only
// trigger is back.
func TestChecksumMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	current := openDB(t, filepath.Join(dir, "current.db"), engine.Options{})
	st := newSession(t, current)
	if err := st.AppendBatch(ctx, batchChain(t, "a", "", 20)); err != nil {
		t.Fatal(err)
	}
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	if _, err := s.AppendModelChange(ctx, "anthropic", "claude"); err != nil {
		t.Fatal(err)
	}
	damaged := newSession(t, current)
	if err := damaged.AppendBatch(ctx, batchChain(t, "d", "", 5)); err != nil {
		t.Fatal(err)
	}

	oldPath := filepath.Join(dir, "old.db")
	old := migrationsUpTo(t, 10)
	odb, err := sqlx.Open("sqlite", "file:"+oldPath+"?_txlock=immediate&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer odb.Close()
	odb.SetMaxOpenConns(1)
	if _, err := migrate.Up(ctx, odb, old, migrate.Options{ApplicationID: engine.ApplicationID}); err != nil {
		t.Fatal(err)
	}
	const cols = `pk, session, seq, id, parent_id, parent_pk, type, timestamp, depth, start_depth,
		thinking_pk, model_pk, tools_pk, target_id, custom_type, role, raw, canonical`
	// The columns sessions had at version 10: later migrations add some.
	var sessionCols string
	if err := odb.GetContext(ctx, &sessionCols, `SELECT group_concat(name, ', ') FROM pragma_table_info('sessions')`); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`ATTACH DATABASE '` + current.Path() + `' AS cur`,
		`INSERT INTO sessions (` + sessionCols + `) SELECT ` + sessionCols + ` FROM cur.sessions`,
		// The damaged session's third entry is cut short.
		`INSERT INTO entries (` + cols + `) SELECT ` + strings.Replace(cols, "raw,", "CASE WHEN id = 'd0002' THEN substr(raw, 1, 40) ELSE raw END,", 1) + ` FROM cur.entries`,
		`INSERT INTO branch SELECT * FROM cur.branch`,
		`DETACH DATABASE cur`,
	} {
		if _, err := odb.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	odb.Close()

	db, err := engine.Open(ctx, oldPath, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	migs, err := migrate.Load(migrate.Files)
	if err != nil {
		t.Fatal(err)
	}
	var version int64
	if err := db.QueryPragma(ctx, "user_version", &version); err != nil || version != migrate.Latest(migs) {
		t.Errorf("user_version = %d, %v; want %d", version, err, migrate.Latest(migs))
	}
	rows := rowChecksums(t, oldPath)
	if len(rows) != 26 {
		t.Fatalf("%d rows after the upgrade; want 26", len(rows))
	}
	for _, r := range rows {
		switch {
		case r.id == "d0002" && r.sum.Valid:
			t.Errorf("damaged entry d0002 got checksum %d; want none", r.sum.Int64)
		case r.id != "d0002" && (!r.sum.Valid || r.sum.Int64 != sessiontree.EntryChecksum(r.raw)):
			t.Errorf("entry %s: checksum %v after the upgrade; want %d", r.id, r.sum, sessiontree.EntryChecksum(r.raw))
		}
	}
	if err := db.Check(ctx, st.ID()); err != nil {
		t.Errorf("Check(intact session) = %v", err)
	}
	err = db.Check(ctx, damaged.ID())
	var ce *sessiontree.CorruptError
	if !errors.As(err, &ce) || ce.EntryID != "d0002" || !strings.Contains(ce.Reason, "no checksum") {
		t.Errorf("Check(damaged session) = %v; want a CorruptError: entry d0002 has no checksum", err)
	}
	up, err := db.OpenSession(ctx, st.ID())
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := up.Leaf(ctx)
	if path, err := up.Path(ctx, leaf); err != nil || len(path) != 21 {
		t.Errorf("Path(leaf) after the upgrade = %d entries, %v; want 21", len(path), err)
	}
	if _, err := rawDB(t, oldPath).Exec(`UPDATE entries SET raw = '{}' WHERE id = 'a0001'`); err == nil {
		t.Errorf("UPDATE of an entry after migration 11 succeeded; want the append-only trigger to refuse it")
	}
}
