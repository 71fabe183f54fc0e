package pgengine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/pgengine"
)

// TestRepairOlderWrites: an older engine's append that went in before
// the fence by a rule since changed (olderNameAppend: its name by Go's
// trim), on a session no migration lists again, is reported by Check
// and mended by Repair, after which Check passes. Another session, its
// name wrong too but an entry's depth damaged, is reported and left as
// it is: its name stays, its check fails as before.
func TestRepairOlderWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := besideOlder(t, true)
	if err := execTx(ctx, b.old, olderNameAppend(b.pk, b.first)); err != nil {
		t.Fatal(err)
	}
	broken := newSession(t, b.db)
	for _, text := range []string{"one", "two"} {
		if _, err := broken.Append(ctx, userDraft(text), sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	where := fmt.Sprintf(`(SELECT pk FROM sessions WHERE id = '%s')`, broken.ID())
	damage := damageConn(t, b.db, b.url, broken.ID())
	damageAll := func(stmts ...string) {
		t.Helper()
		for _, stmt := range stmts {
			if _, err := damage.Exec(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
	}
	damageAll(`UPDATE entries SET depth = depth + 5 WHERE seq = 2 AND session = `+where,
		`UPDATE sessions SET name = 'wrong' WHERE pk = `+where)
	before := b.db.Check(ctx, broken.ID())
	if err := b.db.Check(ctx, b.st.ID()); !errors.Is(err, sessiontree.ErrCorrupt) || !errors.Is(before, sessiontree.ErrCorrupt) {
		t.Fatalf("Check() of the older engine's append = %v, of the damaged session %v; want ErrCorrupt", err, before)
	}

	repaired, err := b.db.Repair(ctx, "")
	if len(repaired) != 1 || repaired[0].ID != b.st.ID() || !errors.Is(repaired[0].Was, sessiontree.ErrCorrupt) {
		t.Errorf("Repair() repaired %+v; want %s alone", repaired, b.st.ID())
	}
	if !errors.Is(err, sessiontree.ErrCorrupt) || !strings.Contains(err.Error(), broken.ID()) {
		t.Errorf("Repair() = %v; want ErrCorrupt naming %s", err, broken.ID())
	}
	if err := b.db.Check(ctx, b.st.ID()); err != nil {
		t.Errorf("Check() after Repair = %v", err)
	}
	if name, err := b.st.Name(ctx); err != nil || name != "x\u0085" {
		t.Errorf("Name() = %q, %v; want %q, by pi's trim", name, err, "x\u0085")
	}
	if name, err := broken.Name(ctx); err != nil || name != "wrong" {
		t.Errorf("Name() of the damaged session = %q, %v; want it left as it was", name, err)
	}
	if err := b.db.Check(ctx, broken.ID()); err == nil || err.Error() != before.Error() {
		t.Errorf("Check() of the damaged session after Repair = %v; want %v, as before", err, before)
	}
	if _, err := b.db.Repair(ctx, "no-such-session"); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("Repair() of a session that does not exist = %v; want ErrNotFound", err)
	}
	damageAll(`UPDATE entries SET depth = depth - 5 WHERE seq = 2 AND session = `+where,
		`UPDATE sessions SET name = NULL WHERE pk = `+where) // for openDB's check
}

// TestRepairLeafBranchFirstUser damages, one at a time and then all
// together, what Check compares on the session row and the branch table
// (the leaf's id, key, depth and boundary, the materialized branch a row
// short, a row wrong or a row too many, the first user text changed or
// gone, the last change, the tree's and the labels' counts) of a session
// with branches, a leaf move and a compaction, and of one whose leaf is
// null. Repair mends each: Check
// passes and every row of the session (its entries byte for byte
// included) is what the writes wrote. A session whose entry is damaged
// as well as its leaf is reported and left as it is.
func TestRepairLeafBranchFirstUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := openDB(t)
	none := sessiontree.AppendOptions{}
	st, before, broken := newSession(t, db), newSession(t, db), newSession(t, db)
	a, err := st.Append(ctx, userDraft("a"), none)
	if err != nil {
		t.Fatal(err)
	}
	steps := []func() error{
		func() error { _, err := st.Append(ctx, userDraft("b"), none); return err },
		func() error { _, err := st.SetLeaf(ctx, a.ID, none); return err },
		func() error { _, err := st.Append(ctx, userDraft("c"), none); return err },
		func() error {
			c, err := st.Leaf(ctx)
			if err != nil {
				return err
			}
			_, err = st.Append(ctx, sessiontree.Draft{Type: sessiontree.TypeCompaction, Fields: mustFields(t,
				"summary", "s", "firstKeptEntryId", c, "tokensBefore", 10)}, none)
			return err
		},
		func() error { _, err := st.Append(ctx, userDraft("d"), none); return err },
		func() error { _, err := before.Append(ctx, userDraft("x"), none); return err },
		func() error { _, err := before.SetLeaf(ctx, "", none); return err },
		func() error { _, err := broken.Append(ctx, userDraft("y"), none); return err },
		func() error { _, err := broken.Append(ctx, userDraft("z"), none); return err },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	conn := damageConn(t, db, url, st.ID())
	pk := func(s *pgengine.Storage) string {
		return fmt.Sprintf(`(SELECT pk FROM sessions WHERE id = '%s')`, s.ID())
	}
	exec := func(stmt string) {
		t.Helper()
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	for _, s := range []*pgengine.Storage{st, before} {
		written := pgRows(t, conn, s.ID())
		where := ` WHERE pk = ` + pk(s)
		inBranch := ` WHERE session = ` + pk(s)
		damages := []damage{
			{name: "leaf id", stmt: `UPDATE sessions SET leaf_id = 'elsewhere'` + where},
			{name: "leaf key", stmt: `UPDATE sessions SET leaf_seq = 1` + where},
			{name: "leaf depth", stmt: `UPDATE sessions SET leaf_depth = leaf_depth + 1` + where},
			{name: "boundary", stmt: `UPDATE sessions SET boundary_depth = boundary_depth + 1` + where},
			{name: "branch row too many", stmt: `INSERT INTO branch (session, depth, seq) VALUES (` + pk(s) + `, 40, 1)`},
			{name: "first user text", stmt: `UPDATE sessions SET first_user_text = 'x' || first_user_text` + where},
			{name: "first user text gone", stmt: `UPDATE sessions SET first_user_text = NULL` + where},
			{name: "last change", stmt: `UPDATE sessions SET updated_at = '2001-01-01T00:00:00.000Z'` + where},
			{name: "tree counts", stmt: `UPDATE sessions SET branch_count = 7, root_count = 0, compaction_count = 3` + where},
			{name: "label count", stmt: `UPDATE sessions SET label_count = label_count + 2` + where},
		}
		if s == st { // the other's branch is empty
			damages = append(damages,
				damage{name: "branch row short", stmt: `DELETE FROM branch` + inBranch + ` AND depth = (SELECT max(depth) FROM branch` + inBranch + `)`},
				damage{name: "branch row wrong", stmt: `UPDATE branch SET seq = 2` + inBranch + ` AND depth = 2`})
		}
		var all []string
		for _, d := range damages {
			all = append(all, d.stmt)
		}
		damages = append(damages, damage{name: "everything", stmt: strings.Join(all, "; ")})
		for _, d := range damages {
			exec(d.stmt)
			if err := db.Check(ctx, s.ID()); !errors.Is(err, sessiontree.ErrCorrupt) {
				t.Fatalf("Check(%s) with a damaged %s = %v; want ErrCorrupt", s.ID(), d.name, err)
			}
			repaired, err := db.Repair(ctx, s.ID())
			if err != nil || len(repaired) != 1 || repaired[0].ID != s.ID() || !errors.Is(repaired[0].Was, sessiontree.ErrCorrupt) {
				t.Errorf("Repair(%s) of a damaged %s = %+v, %v; want it repaired", s.ID(), d.name, repaired, err)
			}
			if err := db.Check(ctx, s.ID()); err != nil {
				t.Errorf("Check(%s) after the repair of a damaged %s = %v", s.ID(), d.name, err)
			}
			if diff := cmp.Diff(written, pgRows(t, conn, s.ID())); diff != "" {
				t.Errorf("rows of %s after the repair of a damaged %s (-written +repaired):\n%s", s.ID(), d.name, diff)
			}
		}
	}

	// An entry's checksum damaged with the leaf: reported, nothing
	// changed.
	exec(`UPDATE entries SET checksum = checksum + 1 WHERE seq = 1 AND session = ` + pk(broken))
	exec(`UPDATE sessions SET leaf_seq = 1, first_user_text = NULL WHERE pk = ` + pk(broken))
	damaged := pgRows(t, conn, broken.ID())
	repaired, err := db.Repair(ctx, "")
	if len(repaired) != 0 || !errors.Is(err, sessiontree.ErrCorrupt) || !strings.Contains(err.Error(), broken.ID()) {
		t.Errorf("Repair() with %s's entry damaged = %+v, %v; want ErrCorrupt naming it, nothing repaired", broken.ID(), repaired, err)
	}
	if diff := cmp.Diff(damaged, pgRows(t, conn, broken.ID())); diff != "" {
		t.Errorf("rows of the damaged session after Repair (-before +after):\n%s", diff)
	}
	exec(`UPDATE entries SET checksum = checksum - 1 WHERE seq = 1 AND session = ` + pk(broken))
	exec(`UPDATE sessions SET leaf_seq = 2, first_user_text = 'y' WHERE pk = ` + pk(broken)) // for openDB's check
}

// pgRows reads every row session id has in the tables a repair may
// write and in entries, each row as PostgreSQL writes it as text.
func pgRows(t *testing.T, conn *pgx.Conn, id string) map[string][]string {
	t.Helper()
	ctx := context.Background()
	out := map[string][]string{}
	for table, order := range map[string]string{"sessions": "pk", "entries": "seq", "branch": "depth",
		"labels": "target_id", "usage_days": "day, bucket", "search_text": "seq"} {
		col := "session"
		if table == "sessions" {
			col = "pk"
		}
		rows, err := conn.Query(ctx, `SELECT t::text FROM `+table+` t WHERE `+col+` = (SELECT pk FROM sessions WHERE id = $1) ORDER BY `+order, id)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		out[table] = lines
	}
	return out
}
