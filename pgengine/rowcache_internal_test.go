package pgengine

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestKeptRowFollowsOtherWrites: a Storage writes from the row it kept
// while the locked row is the version its last write committed (a name
// planted in the kept row is written back), and reads the row again
// once anything else wrote it: another DB's append, a write through the
// general path, or a watch's registration; each append then goes under
// the true leaf, with the true count. A refused append keeps nothing.
func TestKeptRowFollowsOtherWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTestDB(t, Options{})
	st := newStorage(t, db)
	other, err := openOther(t, db).OpenStorage(ctx, st.ID())
	if err != nil {
		t.Fatal(err)
	}
	none := sessiontree.AppendOptions{}
	step := 0
	appendTo := func(s *Storage, parent string) sessiontree.Entry {
		t.Helper()
		step++
		e, err := s.appendPiped(ctx, customDraft(step), none)
		if err != nil || e.ParentID != parent || e.Seq != int64(step) {
			t.Fatalf("append %d = parent %q seq %d, %v; want parent %q seq %d", step, e.ParentID, e.Seq, err, parent, step)
		}
		return e
	}
	plant := func(name string) {
		st.rows.mu.Lock()
		st.rows.row.name = sql.NullString{String: name, Valid: true}
		st.rows.mu.Unlock()
	}
	wantName := func(want string) {
		t.Helper()
		if got, err := st.Name(ctx); err != nil || got != want {
			t.Fatalf("Name after append %d = %q, %v; want %q", step, got, err, want)
		}
	}
	leaf := appendTo(st, "")
	plant("kept")
	leaf = appendTo(st, leaf.ID)
	wantName("kept") // written from the kept row

	leaf = appendTo(other, leaf.ID)
	plant("stale")
	leaf = appendTo(st, leaf.ID)
	wantName("kept") // read again: another DB wrote the row

	es, err := st.AppendAll(ctx, []sessiontree.Draft{customDraft(100)}, none)
	if err != nil {
		t.Fatal(err)
	}
	step++
	plant("stale")
	leaf = appendTo(st, es[0].ID)
	wantName("kept") // read again: the general path wrote the row

	w, err := other.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	plant("stale")
	leaf = appendTo(st, leaf.ID)
	wantName("kept") // read again: a watch's registration wrote the row
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	leaf = appendTo(st, leaf.ID) // read again: the watch's Close wrote the row

	plant("kept through refusals")
	stale := "00000000"
	if _, err := st.appendPiped(ctx, customDraft(200), sessiontree.AppendOptions{IfLeaf: &stale}); !errors.Is(err, sessiontree.ErrConflict) {
		t.Fatalf("append guarded by a stale leaf = %v; want ErrConflict", err)
	}
	taken := customDraft(201)
	taken.ID = leaf.ID
	if _, err := st.appendPiped(ctx, taken, none); !errors.Is(err, sessiontree.ErrConflict) {
		t.Fatalf("append of a taken id = %v; want ErrConflict", err)
	}
	appendTo(st, leaf.ID)
	wantName("kept through refusals") // the refusals kept nothing and wrote nothing

	// The planted names are not the log's: a named entry makes them
	// agree again, and the counters and leaf must then be the log's.
	f, err := sessiontree.Fields("name", "named")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AppendAll(ctx, []sessiontree.Draft{{Type: sessiontree.TypeSessionInfo, Fields: f}}, none); err != nil {
		t.Fatal(err)
	}
	if err := db.Check(ctx, st.ID()); err != nil {
		t.Error(err)
	}
}

// TestAppendFromAKeptRow: a lone append from the row its Storage kept is
// one round trip (counted kept); one whose row another DB wrote since,
// or another transaction holds, is refused there without waiting and
// runs again from the row locked, under the true leaf.
func TestAppendFromAKeptRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTestDB(t, Options{})
	st := newStorage(t, db)
	none := sessiontree.AppendOptions{}
	first, err := st.Append(ctx, customDraft(0), none)
	if err != nil {
		t.Fatal(err)
	}
	second, err := st.Append(ctx, customDraft(1), none)
	if err != nil || second.ParentID != first.ID {
		t.Fatalf("append = %+v, %v; want it under %s", second, err, first.ID)
	}
	last, err := st.Append(ctx, customDraft(1), none)
	if err != nil || last.ParentID != second.ID {
		t.Fatalf("append = %+v, %v; want it under %s", last, err, second.ID)
	}
	if k, s := db.group.kept.Load(), db.group.stale.Load(); k != 2 || s != 0 {
		t.Errorf("%d appends from the kept row, %d refused; want 2 (the first had none kept) and none", k, s)
	}

	other, err := openOther(t, db).OpenStorage(ctx, st.ID())
	if err != nil {
		t.Fatal(err)
	}
	between, err := other.Append(ctx, customDraft(2), none)
	if err != nil {
		t.Fatal(err)
	}
	third, err := st.Append(ctx, customDraft(3), none)
	if err != nil || third.ParentID != between.ID || third.Seq != 5 {
		t.Errorf("append after another DB's = %+v, %v; want seq 5 under %s", third, err, between.ID)
	}
	if k, s := db.group.kept.Load(), db.group.stale.Load(); k != 2 || s != 1 {
		t.Errorf("%d appends from the kept row, %d refused; want 2 and 1", k, s)
	}

	release := holdRow(t, db, st.pk)
	var fourth sessiontree.Entry
	done := make(chan error)
	go func() {
		var err error
		fourth, err = st.Append(ctx, customDraft(4), none)
		done <- err
	}()
	// Refused twice while the row is held: by the lead (which waits for no
	// row), then run again alone, where it waits at the row's lock. The
	// count passes 2 on its way to 3, too fast for a poll to see.
	waitFor(t, "the append from the kept row to be refused", func() bool { return db.group.stale.Load() == 3 })
	release()
	if err := <-done; err != nil || fourth.ParentID != third.ID {
		t.Errorf("append past a lock = %+v, %v; want it under %s", fourth, err, third.ID)
	}
	if err := db.Check(ctx, st.ID()); err != nil {
		t.Error(err)
	}
}
