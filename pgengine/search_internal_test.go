package pgengine

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
)

// searchFixture is a session of four user messages, the last on a branch
// of its own: a, b (left), then c under a (the active branch).
type searchFixture struct {
	db           *DB
	id           string
	a, b, c, cjk sessiontree.Entry
}

// userSession creates a session in db and returns it, its id and a
// function appending a user message of text to it.
func userSession(t *testing.T, db *DB) (*sessiontree.Session, string, func(text string) sessiontree.Entry) {
	t.Helper()
	ctx := context.Background()
	st, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	return s, st.ID(), func(text string) sessiontree.Entry {
		t.Helper()
		msg, _ := json.Marshal(map[string]any{"role": "user", "content": text})
		e, err := s.AppendMessage(ctx, msg)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
}

func newSearchFixture(t *testing.T) searchFixture {
	t.Helper()
	ctx := context.Background()
	db := openTestDB(t, Options{})
	s, id, user := userSession(t, db)
	f := searchFixture{db: db, id: id}
	f.a = user("Römisch SQLite alpha")
	f.b = user("sqlite beta on the old branch")
	if _, err := s.MoveTo(ctx, f.a.ID, nil); err != nil {
		t.Fatal(err)
	}
	f.c = user("gamma: store.go NUL\x00here")
	f.cjk = user("日本語のテキスト")
	return f
}

func (f searchFixture) view(t *testing.T, fn func(st *Tx)) {
	t.Helper()
	ctx := context.Background()
	if err := f.db.view(ctx, "search", func(tx *sqlx.Tx) error { fn(&Tx{ctx: ctx, db: f.db, tx: tx}); return nil }); err != nil {
		t.Fatal(err)
	}
}

// catchUp indexes every pending entry, a chunk of at most two entries at
// a time.
func (f searchFixture) catchUp(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for range 1000 {
		var c sessiontree.IndexChunk
		f.view(t, func(st *Tx) {
			var err error
			if c, err = st.NextIndexChunk(2, 1<<20, nil); err != nil {
				t.Fatal(err)
			}
		})
		if c.Entries == 0 {
			return
		}
		err := f.db.update(ctx, "index", func(tx *sqlx.Tx) error { return (&Tx{ctx: ctx, db: f.db, tx: tx}).WriteIndexChunk(c) })
		if err != nil {
			t.Fatal(err)
		}
		// The same chunk again: its marks moved.
		err = f.db.update(ctx, "index", func(tx *sqlx.Tx) error { return (&Tx{ctx: ctx, db: f.db, tx: tx}).WriteIndexChunk(c) })
		if !errors.Is(err, sessiontree.ErrConflict) {
			t.Fatalf("WriteIndexChunk twice = %v; want ErrConflict", err)
		}
	}
	t.Fatal("the index never caught up")
}

func phrase(text string) sessiontree.MatchQuery {
	return sessiontree.MatchQuery{Kind: sessiontree.MatchPhrase, Text: text}
}

func TestSearchOnPostgres(t *testing.T) {
	t.Parallel()
	f := newSearchFixture(t)
	all := sessiontree.SearchScope{}
	// Everything is pending: the index finds nothing, a scan and the
	// pending texts find it.
	var pendingKeys []int64
	f.view(t, func(st *Tx) {
		n, err := st.IndexBacklog()
		if err != nil || n != 5 { // four messages and the leaf entry
			t.Fatalf("IndexBacklog = %d, %v; want 5", n, err)
		}
		if keys, err := st.MatchKeys(all, phrase("sqlite"), 10); err != nil || len(keys) != 0 {
			t.Errorf("MatchKeys(pending) = %v, %v; want none", keys, err)
		}
		if keys, err := st.ScanKeys(all, "SQLITE", 10); err != nil || len(keys) != 2 {
			t.Errorf("ScanKeys(SQLITE) = %v, %v; want 2 pending entries", keys, err)
		}
		pt, err := st.PendingTexts(all, 1000, 1<<20)
		if err != nil || pt.Total != 5 || pt.Read != 5 || len(pt.Texts) != 4 {
			t.Fatalf("PendingTexts = %+v, %v; want 5 read, 4 texts", pt, err)
		}
		ti, _ := st.TextIndex(pt.Texts)
		pendingKeys, _ = ti.MatchKeys(context.Background(), phrase("日本語"), 10)
	})
	f.catchUp(t)
	and := func(subs ...sessiontree.MatchQuery) sessiontree.MatchQuery {
		return sessiontree.MatchQuery{Kind: sessiontree.MatchAnd, Sub: subs}
	}
	f.view(t, func(st *Tx) {
		if n, err := st.IndexBacklog(); err != nil || n != 0 {
			t.Errorf("IndexBacklog after catch-up = %d, %v; want 0", n, err)
		}
		count := func(q sessiontree.MatchQuery) int {
			keys, err := st.MatchKeys(all, q, 10)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.IsSortedFunc(keys, func(a, b int64) int { return int(b - a) }) {
				t.Errorf("MatchKeys(%+v) = %v; want newest first", q, keys)
			}
			return len(keys)
		}
		for _, tc := range []struct {
			q    sessiontree.MatchQuery
			want int
		}{
			{phrase("SQLite"), 2},
			{phrase("RÖMISCH"), 1},
			{phrase("日本語"), 1},
			{phrase("本"), 1}, // one CJK character: no trigram, still found
			{phrase("store.go"), 1},
			{phrase("100%"), 0},
			{phrase("a_p"), 0},
			{and(phrase("sqlite"), phrase("beta")), 1},
			{sessiontree.MatchQuery{Kind: sessiontree.MatchOr, Sub: []sessiontree.MatchQuery{phrase("gamma"), phrase("beta")}}, 2},
			{sessiontree.MatchQuery{Kind: sessiontree.MatchNot, Sub: []sessiontree.MatchQuery{phrase("sqlite"), phrase("beta")}}, 1},
		} {
			if got := count(tc.q); got != tc.want {
				t.Errorf("MatchKeys(%+v) = %d keys; want %d", tc.q, got, tc.want)
			}
		}
		cjk, err := st.MatchKeys(all, phrase("日本語"), 10)
		if err != nil || !slices.Equal(cjk, pendingKeys) {
			t.Errorf("MatchKeys(日本語) = %v, %v; the pending scan found %v", cjk, err, pendingKeys)
		}
		keys, err := st.MatchKeys(sessiontree.SearchScope{SessionID: f.id}, phrase("sqlite"), 10)
		if err != nil {
			t.Fatal(err)
		}
		hits, err := st.Hits(keys, true)
		if err != nil {
			t.Fatal(err)
		}
		active := map[string]bool{}
		for _, h := range hits {
			active[h.EntryID] = h.OnActiveBranch
			if h.Role != "user" || h.SessionID != f.id || h.Cwd != "/w" {
				t.Errorf("hit %+v; want a user message of %s in /w", h, f.id)
			}
		}
		if diff := cmp.Diff(map[string]bool{f.a.ID: true, f.b.ID: false}, active); diff != "" {
			t.Errorf("OnActiveBranch (-want +got):\n%s", diff)
		}
		if _, err := st.MatchKeys(sessiontree.SearchScope{SessionID: "nope"}, phrase("x"), 1); !errors.Is(err, sessiontree.ErrNotFound) {
			t.Errorf("MatchKeys(missing session) = %v; want ErrNotFound", err)
		}
	})
}

// TestCheckComparesSearchText: Check compares each indexed entry's
// search_text row with the entry's text (pending entries have none), and
// names the entry whose row is damaged, missing or ahead of the mark.
func TestCheckComparesSearchText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSearchFixture(t)
	if err := f.db.Check(ctx, f.id); err != nil {
		t.Fatalf("Check with every entry pending = %v", err)
	}
	f.catchUp(t)
	if err := f.db.Check(ctx, f.id); err != nil {
		t.Fatalf("Check of an indexed session = %v", err)
	}
	exec := func(stmt string, seq int64) {
		t.Helper()
		if _, err := f.db.db.ExecContext(ctx, stmt, seq); err != nil {
			t.Fatal(err)
		}
	}
	// A mark past the log: the next entries would count as indexed, with
	// no text, and the catch-up would never reach them.
	exec(`UPDATE sessions SET indexed_count = entry_count + $1`, 1)
	if err := f.db.Check(ctx, f.id); !errors.Is(err, sessiontree.ErrCorrupt) {
		t.Errorf("Check with the search mark past the log = %v; want ErrCorrupt", err)
	}
	exec(`UPDATE sessions SET indexed_count = entry_count + $1`, 0)
	for _, damage := range []struct {
		name       string
		entry      sessiontree.Entry
		stmt, undo string
	}{
		{"body", f.a, `UPDATE search_text SET body = body || 'x' WHERE seq = $1`,
			`UPDATE search_text SET body = left(body, -1) WHERE seq = $1`},
		{"folded", f.c, `UPDATE search_text SET folded = upper(folded) WHERE seq = $1`,
			`UPDATE search_text SET folded = lower(folded) WHERE seq = $1`},
		{"ahead of the mark", f.cjk, `UPDATE sessions SET indexed_count = $1 - 1`,
			`UPDATE sessions SET indexed_count = $1`},
		{"missing", f.b, `DELETE FROM search_text WHERE seq = $1`, ""},
	} {
		exec(damage.stmt, damage.entry.Seq)
		var ce *sessiontree.CorruptError
		if err := f.db.Check(ctx, f.id); !errors.As(err, &ce) || ce.EntryID != damage.entry.ID {
			t.Errorf("Check with a damaged search text (%s) = %v; want a CorruptError naming %s", damage.name, err, damage.entry.ID)
		}
		if damage.undo != "" {
			exec(damage.undo, damage.entry.Seq)
			if err := f.db.Check(ctx, f.id); err != nil {
				t.Fatalf("Check after undoing %s = %v", damage.name, err)
			}
		}
	}
}
