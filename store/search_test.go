package store_test

import (
	"context"
	"database/sql"
	"errors"
	"github.com/sessiontree/sessiontree/internal/testdb"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// indexedText reads every entry's indexed text from the search_text
// view, by session/entry key.
func indexedText(t *testing.T, s *store.Store) map[string]string {
	t.Helper()
	var rows []struct {
		Key  string `db:"k"`
		Body string `db:"body"`
	}
	err := testdb.View(context.Background(), s.Path(), func(tx *sqlx.Tx) error {
		return tx.Select(&rows, `SELECT sess.id || '/' || e.id AS k, t.body AS body FROM search_text t
JOIN entries e ON e.pk = t.pk JOIN sessions sess ON sess.pk = e.session`)
	})
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.Key] = strings.ToLower(r.Body)
	}
	return out
}

// containing returns the keys of the entries whose indexed text contains
// text, ignoring case: what a search for it must find.
func containing(texts map[string]string, text string) []string {
	var out []string
	for k, body := range texts {
		if strings.Contains(body, strings.ToLower(text)) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func search(t *testing.T, s *store.Store, q string, opts store.SearchOptions) []store.Hit {
	t.Helper()
	res, err := s.Search(context.Background(), q, opts)
	if err != nil {
		t.Fatalf("Search(%q): %v", q, err)
	}
	if res.Unsearched != 0 {
		t.Fatalf("Search(%q) left %d pending entries unsearched; want none", q, res.Unsearched)
	}
	return res.Hits
}

func hitKeys(hits []store.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.SessionID + "/" + h.EntryID
	}
	sort.Strings(out)
	return out
}

// TestSearchFixtures searches the pi fixtures in English and Japanese and
// holds each answer to the entries whose text contains the query.
func TestSearchFixtures(t *testing.T) {
	t.Parallel()
	onEngines(t, testSearchFixtures)
}

func testSearchFixtures(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	rep := mustImport(t, s, fixturePaths(piFixtures(t)), store.ImportOptions{})
	// What each entry's text is, read from the SQLite engine's index,
	// the reference for both engines.
	ref := s
	if s.DB() == nil {
		ref = openStore(t)
		mustImport(t, ref, fixturePaths(piFixtures(t)), store.ImportOptions{})
	}
	texts := indexedText(t, ref)
	all := store.SearchOptions{Limit: store.MaxSearchLimit}
	for _, tc := range []struct {
		query, text string
		opts        store.SearchOptions
	}{
		{"sqlite", "sqlite", all},
		{"SQLite", "sqlite", all},
		{"römisch", "römisch", all},
		{"日本語", "日本語", all},
		{"日本", "日本", all}, // two characters: expanded through the vocabulary
		{"語", "語", all},   // one CJK character
		{"本語", "本語", all}, // the end of a word
		{"🙂", "🙂", all},   // one character, not CJK
		{"e", "e", all},   // one ASCII character: scanned
		{`"tab	here"`, "tab\there", all},
		{"sqlite beta", "", all},
		{"emoji🙂", "emoji🙂", all},
		{`quote"d`, `quote"d`, store.SearchOptions{Literal: true, Limit: store.MaxSearchLimit}},
		{`back\slash`, `back\slash`, store.SearchOptions{Literal: true, Limit: store.MaxSearchLimit}},
		{"new\nline", "", store.SearchOptions{Literal: true, Limit: store.MaxSearchLimit}},
	} {
		t.Run(tc.query, func(t *testing.T) {
			hits := search(t, s, tc.query, tc.opts)
			if len(hits) == 0 {
				t.Fatalf("Search(%q) found nothing", tc.query)
			}
			if tc.text != "" {
				want := containing(texts, tc.text)
				got := hitKeys(hits)
				switch {
				case len(want) <= tc.opts.Limit:
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("Search(%q) (-entries containing %q +hits):\n%s", tc.query, tc.text, diff)
					}
				default:
					// The best of the newest matches, up to the limit.
					if len(got) != tc.opts.Limit {
						t.Errorf("Search(%q) gave %d hits of %d matches; want %d", tc.query, len(got), len(want), tc.opts.Limit)
					}
					for _, k := range got {
						if _, ok := slices.BinarySearch(want, k); !ok {
							t.Errorf("Search(%q) hit %s does not contain %q", tc.query, k, tc.text)
						}
					}
				}
			}
			for i, h := range hits {
				if i > 0 && h.Rank < hits[i-1].Rank {
					t.Errorf("hit %d ranks %v after %v: not best first", i, h.Rank, hits[i-1].Rank)
				}
				if h.Snippet == "" || strings.Contains(h.Snippet, "\n") {
					t.Errorf("hit %s/%s snippet %q; want one non-empty line", h.SessionID, h.EntryID, h.Snippet)
				}
			}
		})
	}

	// Both words, anywhere in the entry.
	and := hitKeys(search(t, s, "sqlite beta", all))
	var both []string
	for _, k := range containing(texts, "sqlite") {
		if slices.Contains(containing(texts, "beta"), k) {
			both = append(both, k)
		}
	}
	if len(both) > store.RankWindow {
		t.Fatalf("test data: %d entries with both words; want at most %d", len(both), store.RankWindow)
	}
	if diff := cmp.Diff(both, and); diff != "" {
		t.Errorf("Search(sqlite beta) (-entries with both +hits):\n%s", diff)
	}

	// Ranking: more occurrences in a shorter text first.
	rk := mustCreate(t, s, store.CreateOptions{ID: "rank"})
	rb := newBuilder(t, rk)
	rb.user("once", "quasar and a long tail of other words that dilute the one occurrence of the word")
	rb.user("twice", "quasar quasar and a long tail of other words that dilute the occurrences")
	rb.user("short", "quasar quasar")
	var order []string
	for _, h := range search(t, s, "quasar", store.SearchOptions{}) {
		order = append(order, h.EntryID)
	}
	if !slices.Equal(order, []string{"short", "twice", "once"}) {
		t.Errorf("ranked %v; want short, twice, once", order)
	}

	// Filters.
	one := rep.Files[len(rep.Files)-2].SessionID
	hits := search(t, s, "日本語", store.SearchOptions{SessionID: one, Limit: 1000})
	if len(hits) == 0 {
		t.Fatal("no hits in one session")
	}
	for _, h := range hits {
		if h.SessionID != one {
			t.Errorf("hit in session %s; want only %s", h.SessionID, one)
		}
	}
	cwd := search(t, s, "sqlite", all)[0].Cwd
	hits = search(t, s, "sqlite", store.SearchOptions{Cwd: cwd, Limit: 1000})
	if len(hits) == 0 || len(hits) == len(search(t, s, "sqlite", all)) {
		t.Fatalf("%d hits in one directory", len(hits))
	}
	for _, h := range hits {
		if h.Cwd != cwd {
			t.Errorf("hit in %s; want only %s", h.Cwd, cwd)
		}
	}
	if hits := search(t, s, "sqlite", store.SearchOptions{Limit: 3}); len(hits) != 3 {
		t.Errorf("Search(Limit 3) gave %d hits", len(hits))
	}
	if _, err := s.Search(ctx, "sqlite", store.SearchOptions{SessionID: "nope"}); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("Search(missing session) = %v; want ErrNotFound", err)
	}
	hits = search(t, s, "日本語", store.SearchOptions{Limit: 1, Marks: [2]string{"<b>", "</b>"}})
	if !strings.Contains(hits[0].Snippet, "<b>日本語</b>") {
		t.Errorf("snippet %q; want the match marked <b>日本語</b>", hits[0].Snippet)
	}
	for _, h := range search(t, s, "SQLITE beta", store.SearchOptions{Marks: [2]string{"<", ">"}}) {
		if !strings.Contains(h.Snippet, "<sqlite>") && !strings.Contains(h.Snippet, "<beta>") {
			t.Errorf("snippet %q; want <sqlite> or <beta> marked", h.Snippet)
		}
	}
}

func TestSearchMalformedQuery(t *testing.T) {
	t.Parallel()
	onEngines(t, testSearchMalformedQuery)
}

func testSearchMalformedQuery(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s"})).user("u", "store.go is here")
	// An empty phrase meant nothing on SQLite and everything on
	// PostgreSQL; a NUL byte in a phrase was an FTS5 syntax error on
	// SQLite ("unterminated string") and a storage failure on PostgreSQL;
	// a phrase of one or two characters in NEAR, which has no trigram,
	// matched any text with the others on SQLite and none on PostgreSQL.
	for _, q := range []string{`"unterminated`, `store.go`, `AND`, `(sqlite`, `nosuchcolumn:word`, ``, `   `, `NEAR(a b`,
		`""`, `"" here`, `here OR ""`, `NEAR("" here)`, "\"store\x00go\"", "here \"\x00\"", `NEAR(here xy)`, `NEAR("日本" here)`,
		"  store.go", "\there )"} {
		_, err := s.Search(ctx, q, store.SearchOptions{})
		var qe *store.QueryError
		if !errors.As(err, &qe) || !errors.Is(err, store.ErrBadQuery) || qe.Query != q {
			t.Errorf("Search(%q) = %v; want a QueryError", q, err)
		}
	}
	// The place a reason names is in the query as given, white space
	// included (as QueryError.Query is).
	for q, reason := range map[string]string{"  store.go": `syntax error near "." (at byte 7)`, "\there )": `syntax error near ")" (at byte 6)`} {
		_, err := s.Search(ctx, q, store.SearchOptions{})
		if qe := (*store.QueryError)(nil); !errors.As(err, &qe) || qe.Reason != reason {
			t.Errorf("Search(%q) = %v; want the reason %s", q, err, reason)
		}
	}
	for _, q := range []string{`"store.go"`, `store AND here`, `sto*`, `NEAR(store here)`, `store OR nothing`, `store NOT nothing`,
		`is here`, `here is`, `(is) AND here`, `NEAR (store here)`, "NEAR\n(store here, 20)", `here AND is`, `is*`, `"is" "here"`, `here NOT xy`, `xy OR here`, `is OR xy`} {
		if hits := search(t, s, q, store.SearchOptions{}); len(hits) != 1 {
			t.Errorf("Search(%q) = %d hits; want 1", q, len(hits))
		}
	}
	if hits := search(t, s, `store.go is`, store.SearchOptions{Literal: true}); len(hits) != 1 {
		t.Errorf("literal search = %d hits; want 1", len(hits))
	}
}

// TestSearchIndexedText appends one entry of every kind with a word of
// its own and finds each, while text that is not indexed is not found.
func TestSearchIndexedText(t *testing.T) {
	t.Parallel()
	onEngines(t, testSearchIndexedText)
}

func testSearchIndexedText(t *testing.T, open opener) {
	s := open(t)
	st := mustCreate(t, s, store.CreateOptions{ID: "kinds", Cwd: "/k"})
	b := newBuilder(t, st)
	b.user("user1", "wordusertext")
	b.add(sessiontree.TypeMessage, "user2", `"message":{"role":"user","content":[{"type":"text","text":"worduserblock"},{"type":"image","data":"wordimagedata","mimeType":"image/png"}]}`)
	b.add(sessiontree.TypeMessage, "asst1", `"message":{"role":"assistant","content":[{"type":"thinking","thinking":"wordthinking","thinkingSignature":"wordsignature"},{"type":"text","text":"wordassistant"},{"type":"toolCall","id":"c1","name":"wordtoolname","arguments":{"path":"/src/wordtoolarg.go","opts":{"deep":["wordnestedarg"]},"n":7}}],"provider":"p","model":"m"}`)
	b.add(sessiontree.TypeMessage, "tool1", `"message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"wordtoolresult"}],"details":{"diff":"worddetails"},"isError":false}`)
	b.add(sessiontree.TypeMessage, "bash1", `"message":{"role":"bashExecution","command":"wordcommand --x","output":"wordoutput","exitCode":0}`)
	b.add(sessiontree.TypeCustomMessage, "cm1", `"customType":"note","content":"wordcustommessage","display":true`)
	b.add(sessiontree.TypeCustomMessage, "cm2", `"customType":"note","content":[{"type":"text","text":"wordcustomblock"}],"display":false`)
	b.add(sessiontree.TypeCompaction, "comp1", `"summary":"wordcompaction","firstKeptEntryId":"user1","tokensBefore":5`)
	b.add(sessiontree.TypeBranchSummary, "bs1", `"fromId":"user1","summary":"wordbranchsummary"`)
	b.name("name1", "wordsessionname")
	b.add(sessiontree.TypeCustom, "cust1", `"customType":"wordcustomtype","data":{"x":"wordcustomdata"}`)
	b.add(sessiontree.TypeModelChange, "mc1", `"provider":"wordprovider","modelId":"wordmodel"`)
	b.label("lab1", "user1", "wordlabel")
	for word, entry := range map[string]string{
		"wordusertext": "user1", "worduserblock": "user2", "wordthinking": "asst1", "wordassistant": "asst1",
		"wordtoolarg": "asst1", "wordnestedarg": "asst1", "wordtoolresult": "tool1", "wordcommand": "bash1",
		"wordoutput": "bash1", "wordcustommessage": "cm1", "wordcustomblock": "cm2", "wordcompaction": "comp1",
		"wordbranchsummary": "bs1", "wordsessionname": "name1",
	} {
		hits := search(t, s, word, store.SearchOptions{})
		if len(hits) != 1 || hits[0].EntryID != entry || hits[0].SessionID != "kinds" {
			t.Errorf("Search(%q) = %+v; want entry %s", word, hits, entry)
		}
	}
	for _, word := range []string{"wordimagedata", "wordsignature", "wordtoolname", "worddetails", "wordcustomtype",
		"wordcustomdata", "wordprovider", "wordmodel", "wordlabel"} {
		if hits := search(t, s, word, store.SearchOptions{}); len(hits) != 0 {
			t.Errorf("Search(%q) = %+v; want nothing: not indexed", word, hits)
		}
	}
	h := search(t, s, "wordassistant", store.SearchOptions{})[0]
	if h.Type != "message" || h.Role != "assistant" || h.Cwd != "/k" || h.SessionName != "wordsessionname" || !h.OnActiveBranch {
		t.Errorf("hit = %+v", h)
	}
}

// Every search sees every write before it: appends, a move of the leaf,
// forks, deletes.
func TestSearchKeptCurrent(t *testing.T) {
	t.Parallel()
	onEngines(t, testSearchKeptCurrent)
}

func testSearchKeptCurrent(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "live"}))
	b.user("u1", "common start")
	b.assistant("a1", "shared zebra answer")
	b.user("u2", "old branch zebra")
	b.moveTo("a1")
	b.user("u3", "new branch zebra")
	active := map[string]bool{}
	for _, h := range search(t, s, "zebra", store.SearchOptions{}) {
		active[h.EntryID] = h.OnActiveBranch
	}
	if diff := cmp.Diff(map[string]bool{"a1": true, "u2": false, "u3": true}, active); diff != "" {
		t.Errorf("hits on the active branch (-want +got):\n%s", diff)
	}
	b.moveTo("u2")
	active = map[string]bool{}
	for _, h := range search(t, s, "zebra", store.SearchOptions{}) {
		active[h.EntryID] = h.OnActiveBranch
	}
	if diff := cmp.Diff(map[string]bool{"a1": true, "u2": true, "u3": false}, active); diff != "" {
		t.Errorf("hits after moving the leaf (-want +got):\n%s", diff)
	}
	if _, err := s.Fork(ctx, "live", store.ForkOptions{Tree: true, ID: "copy"}); err != nil {
		t.Fatal(err)
	}
	if got := hitKeys(search(t, s, "zebra", store.SearchOptions{})); len(got) != 6 {
		t.Errorf("hits after a fork = %v; want 6", got)
	}
	if _, err := s.Delete(ctx, "live"); err != nil {
		t.Fatal(err)
	}
	if got := hitKeys(search(t, s, "zebra", store.SearchOptions{})); !slices.Equal(got, []string{"copy/a1", "copy/u2", "copy/u3"}) {
		t.Errorf("hits after a delete = %v; want the copy's only", got)
	}
}

// TestSearchMigrationBackfill opens a database made without the store's
// migrations: they add the tables, index what is already stored, and
// leave the schema a fresh database has.
func TestSearchMigrationBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	s, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Import(ctx, []string{filepath.Join(piDir, "session-003.jsonl"), filepath.Join(piDir, "session-009.jsonl")},
		store.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	want := containing(indexedText(t, s), "日本語")
	s.Close()

	// Take the store's migrations (3 to 5, 7, 8, 10, 13 and 23) out again, leaving the
	// database as the engine alone made it (with its own later
	// migrations, if any: Up then applies the missing ones). The engine's
	// migration 9 adds columns to sessions after the store's, so it goes
	// too: applied again in order, the columns come in a fresh database's
	// order.
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`DROP TRIGGER entries_fts_delete`, `DROP TRIGGER sessions_forget_imports`,
		`DROP TRIGGER sessions_pending_insert`, `DROP TRIGGER sessions_pending_update`,
		`DROP TRIGGER sessions_caught_up`, `DROP TRIGGER sessions_forget_pending`, `DROP TABLE search_pending`,
		`DROP TABLE entries_fts_vocab`, `DROP TABLE entries_fts`, `DROP VIEW search_text`,
		`DROP TABLE imports`, `ALTER TABLE sessions DROP COLUMN metadata`, `ALTER TABLE sessions DROP COLUMN indexed_count`,
		`ALTER TABLE sessions DROP COLUMN user_messages`,
		`ALTER TABLE sessions DROP COLUMN assistant_messages`, `ALTER TABLE sessions DROP COLUMN tool_results`,
		`ALTER TABLE sessions DROP COLUMN tool_calls`, `ALTER TABLE sessions DROP COLUMN usage_buckets`,
		// Migration 15 adds columns to sessions after 9's: it goes too,
		// and 19, which drops its entries_count_shape trigger.
		`DROP TRIGGER labels_count_insert`, `DROP TRIGGER labels_count_delete`, `DROP INDEX entries_roots`,
		`ALTER TABLE sessions DROP COLUMN branch_count`, `ALTER TABLE sessions DROP COLUMN root_count`,
		`ALTER TABLE sessions DROP COLUMN compaction_count`, `ALTER TABLE sessions DROP COLUMN label_count`,
		// And 25's, after 15's (27's trigger first); 26 goes again too,
		// after 4's index.
		`DROP TRIGGER sessions_header_unsummed`, `ALTER TABLE sessions DROP COLUMN header_checksum`,
		`DELETE FROM schema_migrations WHERE version BETWEEN 3 AND 5 OR version IN (7, 8, 9, 10, 13, 15, 19, 23, 25, 26, 27)`,
	} {
		if _, err := raw.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	raw.Close()

	s = openStoreAt(t, path)
	got := hitKeys(search(t, s, "日本語", store.SearchOptions{Limit: store.MaxSearchLimit}))
	if len(got) == 0 || !cmp.Equal(want, got) {
		t.Errorf("search after the migration found %d entries; want the %d stored before", len(got), len(want))
	}
	fresh := openStore(t)
	if diff := cmp.Diff(schemaOf(t, fresh), schemaOf(t, s)); diff != "" {
		t.Errorf("schema after migrating an old database (-fresh +migrated):\n%s", diff)
	}
}

func schemaOf(t *testing.T, s *store.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := testdb.View(context.Background(), s.Path(), func(tx *sqlx.Tx) error {
		rows, err := tx.Query(`SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name, text string
			if err := rows.Scan(&name, &text); err != nil {
				return err
			}
			out[name] = strings.Join(strings.Fields(text), " ")
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// pendingLists returns the sessions search_pending lists and those whose
// indexed_count is behind entry_count, by id: the two must be equal.
func pendingLists(t *testing.T, s *store.Store) (listed, behind []string) {
	t.Helper()
	err := testdb.View(context.Background(), s.Path(), func(tx *sqlx.Tx) error {
		if err := tx.Select(&listed, `SELECT s.id FROM search_pending p JOIN sessions s ON s.pk = p.session ORDER BY s.id`); err != nil {
			return err
		}
		return tx.Select(&behind, `SELECT id FROM sessions WHERE indexed_count < entry_count ORDER BY id`)
	})
	if err != nil {
		t.Fatal(err)
	}
	return listed, behind
}

// TestSearchPendingList: search_pending lists exactly the sessions the
// index lags behind through appends, indexing, forks, imports and
// deletes, so a search that reads it finds every committed entry.
func TestSearchPendingList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	check := func(step string, want ...string) {
		t.Helper()
		listed, behind := pendingLists(t, s)
		if !slices.Equal(listed, behind) || !slices.Equal(listed, want) {
			t.Errorf("after %s: search_pending lists %v, sessions behind %v; want %v", step, listed, behind, want)
		}
	}
	a := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "a"}))
	mustCreate(t, s, store.CreateOptions{ID: "empty"})
	check("creating sessions")
	a.user("a1", "first lapis")
	a.user("a2", "second lapis")
	check("appends", "a")
	mustIndex(t, s)
	check("indexing")
	a.user("a3", "third lapis")
	if _, err := s.Fork(ctx, "a", store.ForkOptions{Tree: true, ID: "copy"}); err != nil {
		t.Fatal(err)
	}
	mustImport(t, s, []string{filepath.Join(piDir, "session-003.jsonl")}, store.ImportOptions{})
	listed, _ := pendingLists(t, s)
	if len(listed) != 3 || !slices.Contains(listed, "a") || !slices.Contains(listed, "copy") {
		t.Errorf("after an append, a fork and an import: search_pending lists %v; want a, copy and the imported session", listed)
	}
	if got := hitKeys(search(t, s, "lapis", store.SearchOptions{})); !slices.Equal(got, []string{"a/a1", "a/a2", "a/a3", "copy/a1", "copy/a2", "copy/a3"}) {
		t.Errorf("hits = %v; want every lapis entry of a and its copy", got)
	}
	check("a search")
	a.user("a4", "fourth lapis")
	if _, err := s.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	check("deleting a pending session")
}
