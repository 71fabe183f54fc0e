package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree/internal/testdb"
)

// TestCheckScopes damages one index entry of one session's row in the
// file: check of that session names the index, check of another session
// reads only its own rows and passes, and --deep adds the database-wide
// integrity check, which finds the damage.
func TestCheckScopes(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "s.db")
	ok(t, "--db", db, "import", "../../testdata/pi/session-002.jsonl", "../../testdata/pi/session-003.jsonl")
	var ids []string
	if err := testdb.View(ctx, db, func(tx *sqlx.Tx) error {
		return tx.SelectContext(ctx, &ids, `SELECT id FROM sessions ORDER BY pk`)
	}); err != nil || len(ids) != 2 {
		t.Fatalf("sessions %q, %v; want two", ids, err)
	}
	damaged, other := ids[0], ids[1]
	if out := ok(t, "--db", db, "check", other, "--deep"); !strings.HasPrefix(out, "ok:") {
		t.Fatalf("check --deep before the damage: %q", out)
	}
	sharedStores.close(t, db) // checkpointed: the file is whole
	defer forgetStore(db)
	var entry string
	err := testdb.View(ctx, db, func(tx *sqlx.Tx) error {
		return tx.GetContext(ctx, &entry, `SELECT e.id FROM entries e JOIN sessions s ON s.pk = e.session WHERE s.id = ? AND e.seq = 1`, damaged)
	})
	if err == nil {
		err = testdb.DamageIndexPage(ctx, db, "sqlite_autoindex_entries_1", entry)
	}
	if err != nil {
		t.Fatal(err)
	}

	if r := runCmd(t, "", "--db", db, "check", damaged); r.code != 1 || !strings.Contains(r.stdout, "sqlite_autoindex_entries_1") {
		t.Errorf("check of the damaged session: exit %d, %q; want 1, naming the index", r.code, r.stdout)
	}
	if out := ok(t, "--db", db, "check", other); !strings.HasPrefix(out, "ok:") {
		t.Errorf("check of the other session: %q; want ok (its rows are whole)", out)
	}
	for _, args := range [][]string{{"check", other, "--deep"}, {"check"}} {
		if r := runCmd(t, "", append([]string{"--db", db}, args...)...); r.code != 1 || !strings.Contains(r.stdout, "integrity_check") {
			t.Errorf("sessiontree %s: exit %d, %q; want 1 and the integrity check's problem", strings.Join(args, " "), r.code, r.stdout)
		}
	}
}

// forgetStore closes the shared store of path without checking it (its
// test damaged it).
func forgetStore(path string) {
	sharedStores.mu.Lock()
	s := sharedStores.m[path]
	delete(sharedStores.m, path)
	sharedStores.mu.Unlock()
	if s != nil {
		s.Close()
	}
}

// TestCheckRepair leaves one session's derived values as an older
// sessiontree wrote them (the tree's counts, the name, the usage) and
// damages an entry of another as well as its counts: check reports both;
// check --repair repairs the first, printing what was wrong, and reports
// the second, which it leaves; check of the first passes after. A file
// is not repaired.
func TestCheckRepair(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "s.db")
	ok(t, "--db", db, "import", "../../testdata/pi/session-002.jsonl", "../../testdata/pi/session-003.jsonl")
	defer forgetStore(db)
	var ids []string
	err := testdb.Update(ctx, db, func(tx *sqlx.Tx) error {
		if err := tx.SelectContext(ctx, &ids, `SELECT id FROM sessions ORDER BY pk`); err != nil {
			return err
		}
		for _, stmt := range []string{
			`UPDATE sessions SET branch_count = branch_count + 1, name = 'by an older rule'`,
			`UPDATE usage_days SET input = input + 1`,
			`DROP TRIGGER entries_no_update`,
			`UPDATE entries SET checksum = checksum + 1 WHERE seq = 2 AND session = (SELECT max(pk) FROM sessions)`,
		} {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || len(ids) != 2 {
		t.Fatalf("sessions %q, %v; want two", ids, err)
	}
	older, broken := ids[0], ids[1]
	if r := runCmd(t, "", "--db", db, "check"); r.code != 1 || !strings.Contains(r.stdout, older) || !strings.Contains(r.stdout, broken) {
		t.Fatalf("check: exit %d, %q; want 1, naming both sessions", r.code, r.stdout)
	}
	r := runCmd(t, "", "--db", db, "check", "--repair")
	if r.code != 1 || !strings.Contains(r.stdout, "repaired session "+older+": it was: ") ||
		strings.Contains(r.stdout, "repaired session "+broken) || !strings.Contains(r.stdout, broken) ||
		!strings.Contains(r.stdout, "check found 1 problem") && !strings.Contains(r.stderr, "check found 1 problem") {
		t.Errorf("check --repair: exit %d, stdout %q, stderr %q; want 1, %s repaired, %s's damage its one problem", r.code, r.stdout, r.stderr, older, broken)
	}
	if out := ok(t, "--db", db, "check", older); !strings.HasPrefix(out, "ok:") {
		t.Errorf("check %s after check --repair: %q; want ok", older, out)
	}
	if r := runCmd(t, "", "--db", db, "check", "--repair", "../../testdata/pi/session-002.jsonl"); r.code != 2 {
		t.Errorf("check --repair FILE: exit %d, %q; want 2, a usage error", r.code, r.stderr)
	}
}
