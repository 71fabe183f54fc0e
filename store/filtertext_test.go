package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// TestFilterTextNoEngineHolds: a list or search filter that no stored
// session can match, a cwd or session id that is not UTF-8 or holds a
// NUL (sessiontree.CheckSessionMeta keeps them out of every engine), a
// name that is not UTF-8, matches nothing, or names no session, the
// same on every engine. The PostgreSQL engine handed the text to the
// server, which refuses it, and answered a storage failure (a 500 from
// the HTTP API: GET /api/sessions?cwd=%FF).
func TestFilterTextNoEngineHolds(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		s := open(t)
		newBuilder(t, mustCreate(t, s, store.CreateOptions{Cwd: "/w"})).user("a", "alpha")
		for _, bad := range []string{"/w\xff", "/w\x00", "\xe3\x89"} {
			if l, err := s.ListN(ctx, store.ListOptions{Cwd: bad}, 10); err != nil || len(l) != 0 {
				t.Errorf("ListN(cwd %q) = %d sessions, %v; want none", bad, len(l), err)
			}
			if res, err := s.Search(ctx, "alpha", store.SearchOptions{Cwd: bad}); err != nil || len(res.Hits) != 0 {
				t.Errorf("Search(cwd %q) = %d hits, %v; want none", bad, len(res.Hits), err)
			}
			_, err := s.Search(ctx, "alpha", store.SearchOptions{SessionID: bad})
			var nf *sessiontree.SessionNotFoundError
			if !errors.As(err, &nf) || !errors.Is(err, sessiontree.ErrNotFound) {
				t.Errorf("Search(session %q) = %v; want a SessionNotFoundError", bad, err)
			}
		}
		if l, err := s.ListN(ctx, store.ListOptions{Name: "\xff"}, 10); err != nil || len(l) != 0 {
			t.Errorf("ListN(name %q) = %d sessions, %v; want none", "\xff", len(l), err)
		}
		if res, err := s.Search(ctx, "alpha", store.SearchOptions{Cwd: "/w"}); err != nil || len(res.Hits) != 1 {
			t.Errorf("Search(cwd /w) = %+v, %v; want the entry", res.Hits, err)
		}
	})
}
