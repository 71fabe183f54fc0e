package pgengine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestFillHeaderChecksumsInBatches: five listed sessions without a sum,
// two per transaction, all get theirs and leave the list, and a listed
// key whose session is gone is dropped; a session without a sum that is
// not listed keeps none, which Check reports (only damage leaves one).
func TestFillHeaderChecksumsInBatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTestDB(t, Options{})
	var sts []*Storage
	for range 6 {
		sts = append(sts, newStorage(t, db))
	}
	for _, stmt := range []string{
		`UPDATE sessions SET header_checksum = NULL`,
		`INSERT INTO header_checksum_fill (session) SELECT pk FROM sessions WHERE pk <> $1`,
		`INSERT INTO header_checksum_fill (session) VALUES (999999)`,
	} {
		args := []any{}
		if strings.Contains(stmt, "$1") {
			args = append(args, sts[5].pk)
		}
		if _, err := db.db.ExecContext(ctx, stmt, args...); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := db.fillHeaderChecksums(ctx, 2); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := db.db.GetContext(ctx, &left, `SELECT count(*) FROM header_checksum_fill`); err != nil || left != 0 {
		t.Errorf("sessions left to fill = %d, %v; want 0", left, err)
	}
	for _, st := range sts[:5] {
		if err := db.Check(ctx, st.ID()); err != nil {
			t.Errorf("Check(%s) after the fill = %v", st.ID(), err)
		}
	}
	err := db.Check(ctx, sts[5].ID())
	var ce *sessiontree.CorruptError
	if !errors.As(err, &ce) || !strings.Contains(ce.Reason, "no checksum") {
		t.Errorf("Check(unlisted session without a sum) = %v; want a CorruptError: no checksum", err)
	}
}
