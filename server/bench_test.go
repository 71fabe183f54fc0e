package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/store"
)

// benchSessions is the store size the speed goal names: the list
// and a search answer in under 50 ms at 10,000 sessions.
const benchSessions = 10_000

// benchWords make the sessions' text differ, so that a search has work.
var benchWords = []string{"database", "lock", "refactor", "cursor", "paging", "flag", "parser", "index", "branch", "summary",
	"timeout", "retry", "schema", "migration", "token", "browser", "stream", "compaction", "label", "fork"}

// benchStore makes a store of benchSessions sessions of six messages each,
// indexed for search, in one transaction.
func benchStore(b *testing.B) *store.Store {
	b.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	err = s.DB().Update(ctx, func(tx *engine.Tx) error {
		for i := range benchSessions {
			st, err := tx.CreateSession(sessiontree.SessionMeta{Cwd: fmt.Sprintf("/work/p%d", i%50)})
			if err != nil {
				return err
			}
			var entries []sessiontree.Entry
			parent := ""
			for j := range 6 {
				role := []string{"user", "assistant"}[j%2]
				text := fmt.Sprintf("%s %s %s number %d", benchWords[(i+j)%len(benchWords)], benchWords[(i*7+j)%len(benchWords)], role, i*6+j)
				d := sessiontree.Draft{Type: sessiontree.TypeMessage,
					Fields: []byte(fmt.Sprintf(`{"message":{"role":%q,"content":%q}}`, role, text))}
				ts := sessiontree.FormatTime(start.Add(time.Duration(i*6+j) * time.Second))
				e, err := sessiontree.BuildEntry(d, fmt.Sprintf("%08x", j+1), parent, ts)
				if err != nil {
					return err
				}
				entries, parent = append(entries, e), e.ID
			}
			if err := tx.AppendBatch(st, entries); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Index(ctx, store.IndexOptions{}); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkAPI measures answers over HTTP (a loopback connection, the
// token check, the JSON) at 10,000 sessions: the first page of the list,
// a page of one directory, and searches.
func BenchmarkAPI(b *testing.B) {
	s := benchStore(b)
	h, err := New(s, Options{Token: token})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(h)
	b.Cleanup(ts.Close)
	for _, c := range []struct{ name, path string }{
		{"list", "/api/sessions"},
		{"list-cwd", "/api/sessions?cwd=/work/p7"},
		{"search-word", "/api/search?q=migration"},
		{"search-two-words", "/api/search?q=database+lock"},
		{"search-rare", "/api/search?q=" + "number+59999"},
	} {
		b.Run(c.name, func(b *testing.B) {
			req, _ := http.NewRequest("GET", ts.URL+c.path, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			for b.Loop() {
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 {
					b.Fatalf("GET %s = %d, %v", c.path, resp.StatusCode, err)
				}
			}
		})
	}
}
