package engine

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
)

// TestPackedReadOfBigTexts: a packed read leaves texts over packedMaxRaw
// out of its blob and reads them as rows of their own, in their places;
// the chunk is still read packed, and a damaged big text still sends it
// to the row read, which reports it.
func TestPackedReadOfBigTexts(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "p.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := groupSession(t, db)
	var drafts []sessiontree.Draft
	for i := range 40 {
		text := "small"
		if i%7 == 3 || i == 39 {
			text = strings.Repeat(string(rune('a'+i%26)), packedMaxRaw+i)
		}
		drafts = append(drafts, userDraft(text))
	}
	if _, err = st.AppendAll(ctx, drafts, sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	packed := func() (got []sessiontree.Entry, ok bool) {
		t.Helper()
		err := db.view(ctx, func(r q) (err error) {
			got, ok, err = r.packedBranch(nil, st.pk, 1, int64(len(drafts)))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return got, ok
	}
	got, ok := packed()
	if !ok {
		t.Fatal("a chunk with big texts was not read packed")
	}
	if diff := cmp.Diff(log, got); diff != "" {
		t.Errorf("packed read differs from the log (-log +packed):\n%s", diff)
	}

	err = db.update(ctx, false, func(w q) error {
		if _, err := w.exec(`DROP TRIGGER entries_no_update`); err != nil {
			return err
		}
		_, err := w.exec(`UPDATE entries SET raw = replace(raw, 'ddd', 'ddD') WHERE session = ? AND seq = 4`, st.pk)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := packed(); ok {
		t.Error("a damaged big text was read packed")
	}
}
