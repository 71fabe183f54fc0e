package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/internal/testdb"
	"github.com/sessiontree/sessiontree/store"
)

// TestCheckComparesIndexWithText damages the search index behind the
// store's back, one way per case, while the entries stay intact: Check,
// of the store and of the session, reports each as a CorruptError naming
// the entry (or, for a document of no entry, its key).
func TestCheckComparesIndexWithText(t *testing.T) {
	t.Parallel()
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
			b.user("u2", "jade river flows")
			b.label("l1", "u1", "start")
			b.user("u3", "copper kettle sings")
			mustIndex(t, s)
			b.user("u4", "pending text")
			mustCheck(t, s, "")
			err = testdb.Update(ctx, s.Path(), func(tx *sqlx.Tx) error {
				// The keys are looked up, not computed: their layout is the engine's.
				keys := make([]any, 4)
				for i, q := range []string{"u2", "l1", "u4"} {
					if err := tx.GetContext(ctx, &keys[i], `SELECT pk FROM entries WHERE id = ?`, q); err != nil {
						return err
					}
				}
				if err := tx.GetContext(ctx, &keys[3], `SELECT max(pk) + 99 FROM entries`); err != nil {
					return err
				}
				for _, stmt := range tc.damage {
					if _, err := tx.ExecContext(ctx, stmt, keys...); err != nil {
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

// TestCheckLookupsBoundTheComparison changes the last word of the only
// text in the index: a check of the default bound finds it, one bounded
// to a single lookup (Options.CheckLookups) compares the text's first
// trigram alone and passes.
func TestCheckLookupsBoundTheComparison(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	open := func(lookups int) *store.Store {
		s, err := store.Open(ctx, path, store.Options{Engine: engine.Options{CheckLookups: lookups}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	full, bounded := open(0), open(1)
	newBuilder(t, mustCreate(t, full, store.CreateOptions{ID: "s1"})).user("u1", "amber lantern by the jade river")
	mustIndex(t, full)
	err := testdb.Update(ctx, path, func(tx *sqlx.Tx) error {
		for _, stmt := range []string{
			`INSERT INTO entries_fts (entries_fts, rowid, body) SELECT 'delete', pk, body FROM search_text`,
			`INSERT INTO entries_fts (rowid, body) SELECT pk, replace(body, 'river', 'rivet') FROM search_text`,
		} {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"", "s1"} {
		if err := full.Check(ctx, id); !errors.Is(err, sessiontree.ErrCorrupt) {
			t.Errorf("Check(%q) with the default bound = %v; want ErrCorrupt", id, err)
		}
		if err := bounded.Check(ctx, id); err != nil {
			t.Errorf("Check(%q) bounded to one lookup = %v; want nil (the first trigram is intact)", id, err)
		}
	}
}
