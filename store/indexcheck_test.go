package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/store"
)

// TestCheckComparesIndexWithText damages the search index behind the
// store's back, one way per case, while the entries stay intact: Check,
// of the store and of the session, reports each as a CorruptError naming
// the entry (or, for a document of no entry, its key).
func TestCheckComparesIndexWithText(t *testing.T) {
	// Each damage is SQL run with the keys of the entries bound: ?1 u2's,
	// ?2 the label's (no text), ?3 the pending u4's, ?4 a key with no
	// entry.
	cases := []struct {
		name   string
		damage []string
		entry  string // the entry named, "" for none
	}{
		{name: "a document lost", entry: "u2", damage: []string{
			`INSERT INTO entries_fts (entries_fts, rowid, body) SELECT 'delete', pk, body FROM search_text WHERE pk = ?1`}},
		{name: "a document for an entry without text", entry: "l1", damage: []string{
			`INSERT INTO entries_fts (rowid, body) VALUES (?2, 'stray text')`}},
		{name: "a pending entry indexed", entry: "u4", damage: []string{
			`INSERT INTO entries_fts (rowid, body) SELECT pk, body FROM search_text WHERE pk = ?3`}},
		{name: "a document of no entry", damage: []string{
			`INSERT INTO entries_fts (rowid, body) VALUES (?4, 'ghost')`}},
		{name: "another text of another length", entry: "u2", damage: []string{
			`INSERT INTO entries_fts (entries_fts, rowid, body) SELECT 'delete', pk, body FROM search_text WHERE pk = ?1`,
			`INSERT INTO entries_fts (rowid, body) VALUES (?1, 'jade river flowed' || char(10) || char(10))`}},
		{name: "another text of the same length", entry: "u2", damage: []string{
			`INSERT INTO entries_fts (entries_fts, rowid, body) SELECT 'delete', pk, body FROM search_text WHERE pk = ?1`,
			`INSERT INTO entries_fts (rowid, body) VALUES (?1, 'jade rover flows' || char(10) || char(10))`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s, err := store.Open(ctx, filepath.Join(t.TempDir(), "sessions.db"), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			st := mustCreate(t, s, store.CreateOptions{ID: "s1"})
			b := newBuilder(t, st)
			b.user("u1", "amber lantern glows")
			u2 := b.user("u2", "jade river flows")
			l1 := b.label("l1", "u1", "start")
			b.user("u3", "copper kettle sings")
			mustIndex(t, s)
			u4 := b.user("u4", "pending text")
			mustCheck(t, s, "")
			pk := sessionKey(t, s, "s1") // damage is written by hand, in the engine's key layout
			key := func(e sessiontree.Entry) int64 { return pk<<32 | e.Seq }
			err = s.DB().Update(ctx, func(tx *engine.Tx) error {
				for _, stmt := range tc.damage {
					if _, err := tx.SQL().ExecContext(ctx, stmt, key(u2), key(l1), key(u4), pk<<32|99); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{"", "s1"} {
				err := s.Check(ctx, id)
				var ce *sessiontree.CorruptError
				if !errors.Is(err, sessiontree.ErrCorrupt) || !errors.As(err, &ce) || ce.EntryID != tc.entry {
					t.Errorf("Check(%q) = %v; want a CorruptError naming entry %q", id, err, tc.entry)
				}
			}
		})
	}
}

// sessionKey returns session id's key, as the contract's session list
// gives it.
func sessionKey(t testing.TB, s *store.Store, id string) int64 {
	t.Helper()
	var page []sessiontree.ListedSession
	err := s.Database().View(context.Background(), func(tx sessiontree.DatabaseTx) (err error) {
		page, err = tx.ListSessions(sessiontree.ListQuery{Limit: 1000})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, ls := range page {
		if ls.Info.ID == id {
			return ls.Key
		}
	}
	t.Fatalf("session %s not listed", id)
	return 0
}
