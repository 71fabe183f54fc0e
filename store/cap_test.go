package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/testdb"
	"github.com/sessiontree/sessiontree/migrate"
	"github.com/sessiontree/sessiontree/store"
)

// filler is n bytes of text with no word of the tests' in it.
func filler(n int) string { return strings.Repeat("lorem ipsum ", n/12+1)[:n] }

// TestIndexedTextCap: the index takes the first IndexedTextLimit bytes of
// each part of an entry's text and of the whole; the entry is stored
// whole. A NUL byte inside a huge text does not cut it short.
func TestIndexedTextCap(t *testing.T) {
	if testing.Short() {
		// The cap is migration 10's SQL: no smaller run takes its paths.
		t.Skip("seven entries of 1 MiB (IndexedTextLimit) indexed, some 2 s of CPU: the index's cap on each part of an entry's text, without -short")
	}
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "big"}))
	big := filler(store.IndexedTextLimit)
	edge := filler(store.IndexedTextLimit - len("quokka")) // ends where the cap does
	b.user("u1", "wombat "+big+" platypus")
	b.assistant("a1", "nul\x00 dingo "+big+" bilby")
	b.add(sessiontree.TypeMessage, "a2", `"message":{"role":"assistant","content":[{"type":"thinking","thinking":`+jsonString("emu "+big+" kiwi")+
		`},{"type":"text","text":"koala"}],"timestamp":2}`)
	b.add(sessiontree.TypeMessage, "a3", `"message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":`+
		jsonString("numbat "+big+" quoll")+`}}],"timestamp":2}`)
	b.add(sessiontree.TypeCompaction, "c1", `"summary":`+jsonString("wallaby "+big+" bandicoot")+`,"firstKeptEntryId":"u1","tokensBefore":1`)
	b.add(sessiontree.TypeCustomMessage, "m1", `"customType":"x","content":`+jsonString("possum "+big+" echidna")+`,"display":true`)
	b.user("u2", edge+"quokka"+" galah")
	for _, q := range []string{"wombat", "dingo", "emu", "numbat", "wallaby", "possum", "quokka"} {
		if got := hitKeys(search(t, s, q, store.SearchOptions{})); len(got) != 1 {
			t.Errorf("Search(%q) before the cap = %v; want one hit", q, got)
		}
	}
	// koala: the block after one that fills the cap.
	for _, q := range []string{"platypus", "bilby", "kiwi", "koala", "quoll", "bandicoot", "echidna", "galah"} {
		if got := hitKeys(search(t, s, q, store.SearchOptions{})); len(got) != 0 {
			t.Errorf("Search(%q) beyond the cap = %v; want none", q, got)
		}
	}
	for _, body := range indexedText(t, s) {
		if len(body) > store.IndexedTextLimit+2 {
			t.Errorf("an indexed text of %d bytes; want at most %d and two newlines", len(body), store.IndexedTextLimit)
		}
	}
	st, err := s.OpenSession(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	if e, err := st.Entry(ctx, "u1"); err != nil || !strings.Contains(string(e.Raw), "platypus") {
		t.Errorf("Entry(u1) = %d bytes, %v; want it whole", len(e.Raw), err)
	}
}

// oldSearchText is migration 4's search_text, which migration 10 caps.
func oldSearchText(t *testing.T) string {
	t.Helper()
	b, err := fs.ReadFile(migrate.Files, "0004_search.sql")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "CREATE VIEW search_text")
	end := strings.Index(text, "WHERE body <> '';")
	if start < 0 || end < start {
		t.Fatal("migration 4 has no search_text view")
	}
	return text[start : end+len("WHERE body <> ''")]
}

// TestSearchTextBelowCap: below the cap the capped view gives every
// entry of the pi fixtures exactly the text migration 4's view gave (but
// for a NUL, a space since migration 23, which re-indexes those), so
// the entries indexed before migration 10 are removed from the index with
// the text they went in with.
func TestSearchTextBelowCap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	s := openStoreAt(t, path)
	mustImport(t, s, fixturePaths(piFixtures(t)), store.ImportOptions{Mode: 0})
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "odd"}))
	b.add(sessiontree.TypeSessionInfo, "n1", `"name":123`)
	b.add(sessiontree.TypeMessage, "m1", `"message":{"role":"user","content":[{"type":"text","text":1.5},"plain",{"type":"toolCall","arguments":{"a":["x",{"b":"y"}],"n":2}}],"timestamp":1}`)
	b.add(sessiontree.TypeMessage, "m2", `"message":{"role":"user","content":{"k":{"type":"text","text":"in an object"}},"timestamp":1}`)
	b.user("m3", "nul \x00 inside")

	raw, err := sql.Open(testdb.EngineDriver(), "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	if _, err := raw.ExecContext(ctx, strings.Replace(oldSearchText(t), "CREATE VIEW search_text", "CREATE TEMP VIEW old_search_text", 1)); err != nil {
		t.Fatal(err)
	}
	var n, differ int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM old_search_text`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	err = raw.QueryRowContext(ctx, `SELECT count(*) FROM entries e
LEFT JOIN old_search_text o ON o.pk = e.pk LEFT JOIN search_text c ON c.pk = e.pk
WHERE derived_text(CAST(o.body AS BLOB)) IS NOT c.body OR typeof(o.body) <> typeof(c.body)`).Scan(&differ)
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 || differ != 0 {
		t.Errorf("%d of the entries' texts differ from migration 4's view (of %d); want none", differ, n)
	}
}

// openToRewrite opens a store on a new file that the test closes itself,
// to rewrite the database as an older release left it before it opens
// it again (with openStoreAt, whose cleanup checks it).
func openToRewrite(t *testing.T) (*store.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sessions.db")
	s, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s, path
}

// TestIndexedTextCapMigration: migration 10 takes an entry indexed whole
// before it out of the index and puts it back capped, so the index stays
// exactly what the view gives: its check passes, the text beyond the cap
// is no longer found, and deleting the session leaves a sound index.
func TestIndexedTextCapMigration(t *testing.T) {
	if testing.Short() {
		t.Skip("an entry of 1 MiB (IndexedTextLimit) indexed whole then capped, some 1 s of CPU: migration 10 re-indexing it, without -short")
	}
	t.Parallel()
	ctx := context.Background()
	s, path := openToRewrite(t)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "old"}))
	b.user("u1", "wombat "+filler(store.IndexedTextLimit+100)+" platypus")
	keep := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "keep"}))
	keep.user("k1", "wombat kept")
	s.Close()

	// Make it the database migration 9 left: the old view, its whole text
	// indexed, migration 10 not applied.
	raw, err := sql.Open(testdb.EngineDriver(), "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`DROP VIEW search_text`, oldSearchText(t),
		`INSERT INTO entries_fts (rowid, body) SELECT pk, body FROM search_text`,
		`UPDATE sessions SET indexed_count = entry_count`,
		`DELETE FROM schema_migrations WHERE version IN (10, 13)`, `PRAGMA user_version = 9`,
	} {
		if _, err := raw.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%.60s: %v", stmt, err)
		}
	}
	raw.Close()

	s = openStoreAt(t, path)
	mustCheck(t, s, "")
	if got := hitKeys(search(t, s, "wombat", store.SearchOptions{})); len(got) != 2 {
		t.Errorf("Search(wombat) after migration 10 = %v; want old/u1 and keep/k1", got)
	}
	if got := hitKeys(search(t, s, "platypus", store.SearchOptions{})); len(got) != 0 {
		t.Errorf("Search(platypus) after migration 10 = %v; want none: it is beyond the cap", got)
	}
	if _, err := s.Delete(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s, "")
	if got := hitKeys(search(t, s, "wombat", store.SearchOptions{})); len(got) != 1 {
		t.Errorf("Search(wombat) after the delete = %v; want keep/k1", got)
	}
}

// TestIndexChunksByBytes: a backlog of large entries is indexed in chunks
// bounded by their bytes, each its own transaction, even though far
// fewer entries than a chunk's count are pending.
func TestIndexChunksByBytes(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	// Two entries to a chunk, not three: the sizes are the bound's, a
	// tenth of those of 300 KB entries, which cost the trigram tokenizer
	// ten times as much for the same chunks.
	store.SetIndexChunkBytes(s, 70<<10)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s1"}))
	for i := range 6 {
		b.user(fmt.Sprintf("u%d", i), fmt.Sprintf("opal%d %s", i, filler(30<<10)))
	}
	n, seen := mustIndex(t, s)
	var done []int64
	for _, p := range seen {
		done = append(done, p.Done)
	}
	if n != 6 || fmt.Sprint(done) != "[0 2 4 6]" {
		t.Errorf("Index = %d, progress done %v; want 6 in chunks of two entries of 30 KB, [0 2 4 6]", n, done)
	}
	if got := search(t, s, "opal", store.SearchOptions{}); len(got) != 6 {
		t.Errorf("%d hits; want 6", len(got))
	}
}

// TestIndexCanceled: a context canceled while Index runs stops it between
// chunks with the context's error; the chunks committed stay indexed, and
// the next Index does the rest.
func TestIndexCanceled(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	store.SetIndexChunk(s, 2)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s1"}))
	for i := range 6 {
		b.user(fmt.Sprintf("u%d", i), "garnet")
	}
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	n, err := s.Index(ctx, store.IndexOptions{Progress: func(p store.IndexProgress) {
		if calls++; calls == 2 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || n != 2 {
		t.Fatalf("Index canceled after its first chunk = %d, %v; want 2, context.Canceled", n, err)
	}
	mustCheck(t, s, "")
	if n, _ := mustIndex(t, s); n != 4 {
		t.Errorf("the next Index = %d; want the 4 left", n)
	}
}
