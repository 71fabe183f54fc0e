package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestCheckListsEveryDamagedSession: a check of the whole database reports
// each damaged session, not only the first.
func TestCheckListsEveryDamagedSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDamaged(t)
	var ids []string
	for range 3 {
		st := newSession(t, db)
		if _, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).AppendMessage(ctx, userMsg("x")); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, st.ID())
	}
	if _, err := rawDB(t, db.Path()).ExecContext(ctx, `UPDATE sessions SET message_count = 7 WHERE id <> ?`, ids[1]); err != nil {
		t.Fatal(err)
	}
	err := db.Check(ctx, "")
	if !errors.Is(err, sessiontree.ErrCorrupt) {
		t.Fatalf("Check(all) = %v; want ErrCorrupt", err)
	}
	for i, id := range ids {
		if got, want := strings.Contains(err.Error(), id), i != 1; got != want {
			t.Errorf("Check(all) mentions session %d: %v; want %v (error: %v)", i, got, want, err)
		}
	}
}
