package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// An import record is saved, read back as it was, replaced, found by its
// session and deleted, in write and read transactions alike.
func TestImportRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	st := newSession(t, db)
	rec := sessiontree.ImportRecord{Path: "/home/dev/a.jsonl", SessionID: st.ID(), Size: 120, ModTime: time.Unix(0, 1700000000123456789),
		ImportedBytes: 100, PrefixSHA256: "ab12", Resume: `{"offset":100}`, SessionEntries: 3,
		ImportedAt: time.Date(2026, 12, 3, 19, 0, 0, 0, time.UTC)}
	if err := db.Update(ctx, func(tx *engine.Tx) error { return tx.PutImportRecord(rec) }); err != nil {
		t.Fatal(err)
	}
	read := func() (sessiontree.ImportRecord, bool) {
		t.Helper()
		var got sessiontree.ImportRecord
		var found bool
		if err := engine.NewDatabase(db).View(ctx, func(tx sessiontree.DatabaseTx) (err error) {
			got, found, err = tx.ImportRecord(rec.Path)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return got, found
	}
	got, found := read()
	if !found || !got.ModTime.Equal(rec.ModTime) || !got.ImportedAt.Equal(rec.ImportedAt) {
		t.Fatalf("ImportRecord(%q) = %+v, %v; want %+v", rec.Path, got, found, rec)
	}
	got.ModTime, got.ImportedAt = rec.ModTime, rec.ImportedAt
	if diff := cmp.Diff(rec, got); diff != "" {
		t.Errorf("ImportRecord(%q) (-saved +read):\n%s", rec.Path, diff)
	}

	rec.ImportedBytes, rec.Size = 120, 120
	err := db.Update(ctx, func(tx *engine.Tx) error {
		if err := tx.PutImportRecord(rec); err != nil {
			return err
		}
		if p, ok, err := tx.ImportPathOf(st.ID()); err != nil || !ok || p != rec.Path {
			t.Errorf("ImportPathOf(%s) = %q, %v, %v; want %q", st.ID(), p, ok, err, rec.Path)
		}
		if p, ok, err := tx.ImportPathOf("no-such-session"); err != nil || ok {
			t.Errorf("ImportPathOf(no-such-session) = %q, %v, %v; want none", p, ok, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := read(); got.ImportedBytes != 120 || got.Size != 120 {
		t.Errorf("after the second save: %+v; want 120 bytes imported", got)
	}
	if err := db.Update(ctx, func(tx *engine.Tx) error { return tx.DeleteImportRecord(rec.Path) }); err != nil {
		t.Fatal(err)
	}
	if got, found := read(); found {
		t.Errorf("ImportRecord after delete = %+v; want none", got)
	}
}

// The lookups an import makes: whether a session exists, its entry count
// and ids, an entry's JSON; a missing session or entry matches
// sessiontree.ErrNotFound. A read transaction refuses to write.
func TestImportLookups(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	st := newSession(t, db)
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	var want []string
	for _, text := range []string{"one", "two"} {
		e, err := s.AppendMessage(ctx, userMsg(text))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, e.ID)
	}
	err := engine.NewDatabase(db).View(ctx, func(tx sessiontree.DatabaseTx) error {
		if ok, err := tx.SessionExists(st.ID()); err != nil || !ok {
			t.Errorf("SessionExists(%s) = %v, %v; want true", st.ID(), ok, err)
		}
		if ok, err := tx.SessionExists("nope"); err != nil || ok {
			t.Errorf("SessionExists(nope) = %v, %v; want false", ok, err)
		}
		if n, err := tx.SessionEntryCount(st.ID()); err != nil || n != 2 {
			t.Errorf("SessionEntryCount(%s) = %d, %v; want 2", st.ID(), n, err)
		}
		if _, err := tx.SessionEntryCount("nope"); !errors.Is(err, sessiontree.ErrNotFound) {
			t.Errorf("SessionEntryCount(nope) = %v; want ErrNotFound", err)
		}
		ids, err := tx.SessionEntryIDs(st.ID())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, ids); diff != "" {
			t.Errorf("SessionEntryIDs(%s) (-want +got):\n%s", st.ID(), diff)
		}
		if _, err := tx.SessionEntryIDs("nope"); !errors.Is(err, sessiontree.ErrNotFound) {
			t.Errorf("SessionEntryIDs(nope) = %v; want ErrNotFound", err)
		}
		if raw, err := tx.EntryRaw(st.ID(), want[1]); err != nil || !strings.Contains(raw, `"two"`) {
			t.Errorf("EntryRaw(%s) = %s, %v; want the second message", want[1], raw, err)
		}
		if _, err := tx.EntryRaw(st.ID(), "nope"); !errors.Is(err, sessiontree.ErrNotFound) {
			t.Errorf("EntryRaw(nope) = %v; want ErrNotFound", err)
		}
		if _, err := tx.NewSession(sessiontree.SessionMeta{}, nil); err == nil {
			t.Error("NewSession in a read transaction succeeded; want an error")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
