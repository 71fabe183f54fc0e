package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
)

// AppendStep appends a custom entry numbered i to s, as a writer of a
// followed session does, and returns it.
func AppendStep(t testing.TB, s sessiontree.Storage, i int) sessiontree.Entry {
	t.Helper()
	fields, err := sessiontree.Fields("customType", "step", "data", map[string]int{"i": i})
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.Append(context.Background(), sessiontree.Draft{Type: sessiontree.TypeCustom, Fields: fields}, sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// RunFollow checks [sessiontree.Follow] on reader while writer (the same
// session, through another handle when the backend has one: another
// connection pool or process) appends: before entries are there first,
// Follow starts after the first of them, sees the rest, then each of
// three more appends as it is committed, in order, each with its Seq,
// and ends with context.Canceled when its context is.
func RunFollow(t *testing.T, before int, reader, writer sessiontree.Storage) {
	var want []string
	for i := range before {
		want = append(want, AppendStep(t, writer, i).ID)
	}
	want = want[1:] // Follow starts after the first
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan sessiontree.Entry)
	done := make(chan error, 1)
	go func() {
		done <- sessiontree.Follow(ctx, reader, 1, func(e sessiontree.Entry) error {
			got <- e
			return nil
		})
	}()
	next := func() sessiontree.Entry {
		t.Helper()
		select {
		case e := <-got:
			return e
		case err := <-done:
			t.Fatalf("Follow returned %v before the entries came", err)
		case <-time.After(10 * time.Second):
			t.Fatal("no entry within 10 s")
		}
		return sessiontree.Entry{}
	}
	check := func(i int, e sessiontree.Entry) {
		t.Helper()
		if e.ID != want[i] || e.Seq != int64(i+2) {
			t.Fatalf("entry %d followed = %s (seq %d); want %s (seq %d)", i, e.ID, e.Seq, want[i], i+2)
		}
	}
	for i := range want {
		check(i, next())
	}
	for i := range 3 {
		want = append(want, AppendStep(t, writer, before+i).ID)
		check(len(want)-1, next())
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Follow after cancel = %v; want context.Canceled", err)
	}
}
