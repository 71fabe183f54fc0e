package pgengine_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/pgtest"
)

// TestOpenUpkeepThroughUnknownCommit: the work Open does after the
// migrations (here the header sums migration 18 left to fill) is tried
// again when its COMMIT goes unanswered, since each round reads again
// what is left to do. The server stopping the backend right after that
// COMMIT failed the Open with "commit outcome unknown" (TestFleet's
// faulty client met it now and then), although the migrations' own
// steps, as safe to run again, were tried again.
func TestOpenUpkeepThroughUnknownCommit(t *testing.T) {
	t.Parallel()
	db, url := openDB(t)
	if _, err := db.CreateSession(context.Background(), sessiontree.SessionMeta{ID: "upkeep", Cwd: "/upkeep"}); err != nil {
		t.Fatal(err)
	}
	execAll(t, url, beforeHeaderChecksum...)
	p := pgtest.NewProxy(t, url)
	var mu sync.Mutex
	filling, terminated := map[int]bool{}, false
	p.SetFault(func(conn int, m pgtest.Message) pgtest.Action {
		mu.Lock()
		defer mu.Unlock()
		if m.FromClient && strings.Contains(m.SQL, "DELETE FROM header_checksum_fill") {
			filling[conn] = true
		}
		if !m.FromClient && m.Tag == "COMMIT" && filling[conn] && !terminated {
			terminated = true
			return pgtest.Terminate
		}
		return pgtest.Pass
	})
	openURL(t, p.URL(url)) // its cleanup checks every header sum
	mu.Lock()
	defer mu.Unlock()
	if !terminated {
		t.Fatal("the fill's COMMIT never came back: the test did not cut it")
	}
	var left int
	if err := connect(t, url).QueryRow(context.Background(), `SELECT count(*) FROM header_checksum_fill`).Scan(&left); err != nil || left != 0 {
		t.Errorf("sessions left to fill = %d, %v; want 0", left, err)
	}
}
