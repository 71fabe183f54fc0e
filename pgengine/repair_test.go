package pgengine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
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
