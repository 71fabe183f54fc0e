package pgengine_test

import (
	"context"
	"testing"

	"github.com/sessiontree/sessiontree/storetest"
)

// TestDerivedRedoOfEverySession lists every session of the pi fixtures
// for Open to compute its derived values again (derived_redo, migrations
// 14 and 16), as an older database lists those an older engine may have
// derived otherwise: the values Open computes from each log (deriveLog)
// are the ones the writes gave, so Check stays clean and every read
// answers as before.
func TestDerivedRedoOfEverySession(t *testing.T) {
	if testing.Short() {
		t.Skip("imports every pi fixture")
	}
	t.Parallel()
	ctx := context.Background()
	db, url := openDB(t)
	files := storetest.FixtureFiles(t, "../testdata")
	var ids []string
	for _, f := range files {
		if id := storetest.ImportLenient(t, db, f); id != "" {
			ids = append(ids, id)
		}
	}
	want := storetest.ReadAnswers(t, db, ids)
	execAll(t, url, `INSERT INTO derived_redo SELECT pk FROM sessions`)
	redone := openURL(t, url) // Check clean at its cleanup
	var left int
	if err := connect(t, url).QueryRow(ctx, `SELECT count(*) FROM derived_redo`).Scan(&left); err != nil || left != 0 {
		t.Errorf("sessions left to compute again: %d, %v; want 0", left, err)
	}
	if diff := storetest.AnswersDiff(want, storetest.ReadAnswers(t, redone, ids)); diff != "" {
		t.Errorf("answers after computing every session again (-as written +computed again):\n%s", diff)
	}
}
