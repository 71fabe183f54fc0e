package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// TestLiteralSearchWithNUL: a NUL byte in a literal query is a word
// break, not the end of the query: SQLite reads FTS5 queries as C
// strings, and a quoted word cut at the NUL was "unterminated string"
// (issue 8, found by the reliability package's hostile strings).
//
// It runs on SQLite only: on PostgreSQL the append itself fails today
// (pgengine/write.go stores the first user message's text, NUL and all,
// in sessions.first_user_text, and PostgreSQL's text refuses a NUL byte).
// TODO(pgstore): onEngines once that write keeps NULs out.
func TestLiteralSearchWithNUL(t *testing.T) { testLiteralSearchWithNUL(t, openStore) }

func testLiteralSearchWithNUL(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	st, err := s.Create(ctx, store.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := json.Marshal(map[string]any{"role": "user", "content": "alpha\x00bravo charlie"})
	if _, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).AppendMessage(ctx, msg); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"alpha\x00bravo", "charlie\x00", "\x00alpha"} {
		res, err := s.Search(ctx, q, store.SearchOptions{Literal: true})
		if err != nil || len(res.Hits) != 1 {
			t.Errorf("Search(%q, literal) = %d hits, %v; want the entry", q, len(res.Hits), err)
		}
	}
}
