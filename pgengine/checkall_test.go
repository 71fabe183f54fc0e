package pgengine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestCheckReportsEveryDamagedSession: the whole database's Check names
// every damaged session, as the SQLite engine's does (one error each,
// joined), not only the first: with two sessions damaged (an older
// engine of the fleet beside a newer one damaged both, measured), it
// reported one and stopped, and the command said 'check found 1
// problem in the database'.
func TestCheckReportsEveryDamagedSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := openDB(t)
	var ids []string
	for range 3 {
		st := newSession(t, db)
		if _, err := st.Append(ctx, userDraft("one"), sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, st.ID())
	}
	execAll(t, url, `UPDATE sessions SET message_count = 7 WHERE id IN ('`+ids[0]+`', '`+ids[2]+`')`)
	err := db.Check(ctx, "")
	var joined interface{ Unwrap() []error }
	if !errors.Is(err, sessiontree.ErrCorrupt) || !errors.As(err, &joined) || len(joined.Unwrap()) != 2 {
		t.Fatalf("Check() = %v; want ErrCorrupt, two problems joined", err)
	}
	for i, want := range []bool{true, false, true} {
		if got := strings.Contains(err.Error(), "session "+ids[i]+":"); got != want {
			t.Errorf("Check() names session %d: %v; want %v (%v)", i, got, want, err)
		}
	}
	execAll(t, url, `UPDATE sessions SET message_count = 1`) // the cleanup's check
}
