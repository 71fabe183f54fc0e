package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/testdb"
	"github.com/sessiontree/sessiontree/migrate"
	"github.com/sessiontree/sessiontree/store"
)

// TestLiteralSearchWithNUL: a NUL byte in a literal query is a word
// break, not the end of the query: SQLite reads FTS5 queries as C
// strings, and a quoted word cut at the NUL was "unterminated string"
// (issue 8, found by the reliability package's hostile strings).
//
// A NUL in the first user message, the name and a label is stored: the
// entries keep it, escaped in their JSON, and the texts derived from them
// have a space for it (sessiontree.DerivedText), the same on both engines
// (PostgreSQL's text refuses a NUL byte); the cleanup's Check agrees.
func TestLiteralSearchWithNUL(t *testing.T) {
	t.Parallel()
	onEngines(t, testLiteralSearchWithNUL)
}

func testLiteralSearchWithNUL(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	st, err := s.Create(ctx, store.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sess := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	msg, _ := json.Marshal(map[string]any{"role": "user", "content": "alpha\x00bravo charlie"})
	e, err := sess.AppendMessage(ctx, msg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.SetName(ctx, "\x00name\x00"); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.SetLabel(ctx, e.ID, "la\x00bel"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"alpha\x00bravo", "charlie\x00", "\x00alpha"} {
		res, err := s.Search(ctx, q, store.SearchOptions{Literal: true})
		if err != nil || len(res.Hits) != 1 || res.Hits[0].Role != "user" {
			t.Errorf("Search(%q, literal) = %+v, %v; want the entry, role user", q, res.Hits, err)
		}
	}
	list, err := s.ListN(ctx, store.ListOptions{}, 0)
	if err != nil || len(list) != 1 || list[0].FirstUserMessage != "alpha bravo charlie" || list[0].Name != " name " {
		t.Errorf("ListN = %+v, %v; want the session, first message %q, name %q", list, err, "alpha bravo charlie", " name ")
	}
	if found, err := s.ListN(ctx, store.ListOptions{Name: "\x00name"}, 0); err != nil || len(found) != 1 {
		t.Errorf("ListN(name filter with a NUL) = %d sessions, %v; want the session", len(found), err)
	}
	if label, err := sess.Label(ctx, e.ID); err != nil || label != "la bel" {
		t.Errorf("Label = %q, %v; want %q", label, err, "la bel")
	}
	got, err := st.Entry(ctx, e.ID)
	if err != nil || string(got.Raw) != string(e.Raw) {
		t.Errorf("Entry = %s, %v; want the JSON as appended, %s", got.Raw, err, e.Raw)
	}
}

// TestSearchHitWithLoneSurrogate: a hit on an entry whose JSON holds a
// lone surrogate's escape (\ud800: what JSON.stringify writes of a
// string cut inside a surrogate pair, as a tool's output cut to length
// may be) is shown with its role, on every engine. Before the fix the
// PostgreSQL engine read the role with its json type, which refuses
// such an escape, so every search hitting the entry failed, a storage
// failure (TestSearchDifferential).
func TestSearchHitWithLoneSurrogate(t *testing.T) {
	t.Parallel()
	onEngines(t, testSearchHitWithLoneSurrogate)
}

func testSearchHitWithLoneSurrogate(t *testing.T, open opener) {
	s := open(t)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s"}))
	b.add(sessiontree.TypeMessage, "cut", `"message":{"role":"toolResult","content":[{"type":"text","text":"output cut \ud83d"}],"timestamp":1}`)
	b.add(sessiontree.TypeMessage, "low", `"message":{"role":"user","content":"output \udc00 low, \\ud800 not one","timestamp":1}`)
	hits := search(t, s, "output", store.SearchOptions{})
	got := map[string]string{}
	for _, h := range hits {
		got[h.EntryID] = h.Role
	}
	if want := map[string]string{"cut": "toolResult", "low": "user"}; !maps.Equal(got, want) {
		t.Errorf("Search(output) = roles by entry %v; want %v", got, want)
	}
}

// TestSearchTextAsIndexed: search finds, ranks and cuts snippets from an
// entry's text as every engine indexes it (sessiontree.IndexedText): a
// NUL a space, as the README says of every text derived from an entry,
// and bytes that are not UTF-8 (a lone surrogate's escape decodes to
// such bytes) left out. Before the fix the SQLite engine's index kept
// both, where PostgreSQL's cannot: "a b" missed "a\u0000b" there (and
// "é Å" found "é\u0000 Å"), a snippet held the NUL byte, and texts
// holding such bytes ranked otherwise (TestSearchDifferential).
func TestSearchTextAsIndexed(t *testing.T) {
	t.Parallel()
	onEngines(t, testSearchTextAsIndexed)
}

func testSearchTextAsIndexed(t *testing.T, open opener) {
	s := open(t)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s"}))
	b.add(sessiontree.TypeMessage, "nul", `"message":{"role":"user","content":"alpha\u0000bravo é\u0000 Å","timestamp":1}`)
	b.add(sessiontree.TypeMessage, "cut", `"message":{"role":"user","content":"kilo\ud800lima","timestamp":1}`)
	for _, tc := range []struct{ q, want string }{
		{`"alpha bravo"`, "[alpha bravo] é  Å"}, {`"é Å"`, ""}, {`"é  Å"`, "alpha bravo [é  Å]"}, {"kilolima", "[kilolima]"},
	} {
		hits := search(t, s, tc.q, store.SearchOptions{})
		var got string
		if len(hits) == 1 {
			got = hits[0].Snippet
		}
		if got != tc.want || len(hits) > 1 {
			t.Errorf("Search(%s) = %d hits, snippet %q; want snippet %q", tc.q, len(hits), got, tc.want)
		}
	}
}

// TestSearchTextAsIndexedMigration: migration 23 takes the entries the
// index holds with a NUL or bytes that are not UTF-8 out of it with the
// text they went in with and puts them back as they are indexed now, so
// that a database indexed before finds them as a new one does, and no
// longer by the text they went in with, and its Check stays clean.
func TestSearchTextAsIndexedMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, path := openToRewrite(t)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s"}))
	b.add(sessiontree.TypeMessage, "nul", `"message":{"role":"user","content":"alpha\u0000bravo","timestamp":1}`)
	b.add(sessiontree.TypeMessage, "cut", `"message":{"role":"user","content":"kilo\ud800lima","timestamp":1}`)
	b.user("plain", "alpha plain")
	if _, err := s.Index(ctx, store.IndexOptions{}); err != nil {
		t.Fatal(err)
	}
	b.add(sessiontree.TypeMessage, "late", `"message":{"role":"user","content":"alpha\u0000bravo late","timestamp":1}`)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The database as migration 22 left it: migration 13's view, and the
	// index holding what it gave.
	mig13, err := fs.ReadFile(migrate.Files, "0013_search_text_walk.sql")
	if err != nil {
		t.Fatal(err)
	}
	view := string(mig13[bytes.Index(mig13, []byte("CREATE VIEW")):])
	err = testdb.Update(ctx, path, func(tx *sqlx.Tx) error {
		for _, q := range []string{
			`INSERT INTO entries_fts (entries_fts, rowid, body) SELECT 'delete', t.pk, t.body FROM search_text t
			 JOIN entries e ON e.pk = t.pk JOIN sessions s ON s.pk = e.session WHERE e.seq <= s.indexed_count`,
			`DROP VIEW search_text`, view,
			`INSERT INTO entries_fts (rowid, body) SELECT t.pk, t.body FROM search_text t
			 JOIN entries e ON e.pk = t.pk JOIN sessions s ON s.pk = e.session WHERE e.seq <= s.indexed_count`,
			`DELETE FROM schema_migrations WHERE version = 23`, `PRAGMA user_version = 22`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%.50s: %w", q, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s = openStoreAt(t, path) // migrates; its cleanup checks the index
	// "o\ufffdl" is in the text the index held of cut, which must be gone.
	for q, want := range map[string][]string{`"alpha bravo"`: {"s/late", "s/nul"}, "kilolima": {"s/cut"}, "alpha": {"s/late", "s/nul", "s/plain"},
		"o\ufffdl": {}} {
		if got := hitKeys(search(t, s, q, store.SearchOptions{})); !slices.Equal(got, want) {
			t.Errorf("Search(%s) after migration 23 = %v; want %v", q, got, want)
		}
	}
	if err := s.Check(ctx, ""); err != nil {
		t.Errorf("Check after migration 23: %v", err)
	}
}

// TestSearchNotUTF8: a query holding bytes that are not UTF-8 is refused
// with a QueryError on every engine, in both languages. SQLite's FTS5
// found "\xe3\x89CO" in "ÉCOLE" (it decodes E3 89, a sequence cut
// short, as É) where the PostgreSQL engine, folding each such byte to
// U+FFFD, found nothing (FuzzSearchQuery,
// testdata/fuzz/FuzzSearchQuery/9b5360bbf66d7d99).
func TestSearchNotUTF8(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, open opener) {
		s := open(t)
		b := newBuilder(t, mustCreate(t, s, store.CreateOptions{}))
		b.user("a", "ÉCOLE straße")
		for _, q := range []string{"\xe3\x89CO", "\xe3\x89co", "stra\xc3"} {
			for _, literal := range []bool{false, true} {
				res, err := s.Search(context.Background(), q, store.SearchOptions{Literal: literal})
				if !errors.Is(err, store.ErrBadQuery) {
					t.Errorf("Search(%q, literal %v) = %d hits, %v; want ErrBadQuery", q, literal, len(res.Hits), err)
				}
			}
		}
		if res, err := s.Search(context.Background(), "éco", store.SearchOptions{}); err != nil || len(res.Hits) != 1 {
			t.Errorf(`Search("éco") = %+v, %v; want the entry`, res.Hits, err)
		}
	})
}
