package pgengine

import (
	"context"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestCheckWhileAppending checks a session again and again while another
// connection appends to it: each check reads the session in one
// snapshot, so it never sees an append in one of its reads and not in
// another (the log without the newest entry and the leaf naming it).
func TestCheckWhileAppending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTestDB(t, Options{})
	st := newStorage(t, db)
	const n = 300
	done := make(chan error, 1)
	go func() {
		for i := range n {
			if _, err := st.Append(ctx, customDraft(i), sessiontree.AppendOptions{}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for checks := 1; ; checks++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d checks during %d appends", checks, n)
			return
		default:
		}
		if err := db.Check(ctx, st.meta.ID); err != nil {
			t.Fatalf("check %d, during the appends: %v", checks, err)
		}
	}
}
