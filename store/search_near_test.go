package store_test

import (
	"testing"

	"github.com/sessiontree/sessiontree/store"
)

// TestSearchNotNear: NOT NEAR(...) keeps the entries holding the
// group's phrases far apart, which the group does not match. Before
// the fix the PostgreSQL engine's SQL, which reads a NEAR group as the
// AND of its phrases and leaves the distance to a check of the rows it
// finds, read NOT NEAR as NOT of that AND, and so dropped those entries
// before the check: "lock NOT NEAR(lock wait)" found none of them there
// and all of them on SQLite (TestSearchDifferential, seed 127).
func TestSearchNotNear(t *testing.T) {
	t.Parallel()
	onEngines(t, testSearchNotNear)
}

func testSearchNotNear(t *testing.T, open opener) {
	s := open(t)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s"}))
	b.user("near", "lock wait")
	b.user("far", "lock and then, some forty characters later, wait")
	b.user("lock", "lock alone")
	checkHits(t, s, map[string][]string{
		"NEAR(lock wait)":                     {"s/near"},
		"lock NOT NEAR(lock wait)":            {"s/far", "s/lock"},
		"lock NOT (alone OR NEAR(lock wait))": {"s/far"},
		"lock NOT (lock NOT NEAR(lock wait))": {"s/near"},
	})
}
