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
// the HTTP API: GET /api/sessions?cwd=/%FF); the SQLite engine's LIKE
// decoded a name's bytes loosely, E3 89 as É.
func TestFilterTextNoEngineHolds(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		s := open(t)
		st := mustCreate(t, s, store.CreateOptions{Cwd: "/w"})
		newBuilder(t, st).user("a", "alpha")
		if _, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).SetName(ctx, "École"); err != nil {
			t.Fatal(err)
		}
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
		// SQLite's LIKE read E3 89 as É and kept "École".
		for _, bad := range []string{"\xff", "\xe3\x89", "\xe3\x89cole"} {
			if l, err := s.ListN(ctx, store.ListOptions{Name: bad}, 10); err != nil || len(l) != 0 {
				t.Errorf("ListN(name %q) = %d sessions, %v; want none", bad, len(l), err)
			}
		}
		if l, err := s.ListN(ctx, store.ListOptions{Name: "COLE"}, 10); err != nil || len(l) != 1 {
			t.Errorf("ListN(name COLE) = %d sessions, %v; want the session", len(l), err)
		}
		if res, err := s.Search(ctx, "alpha", store.SearchOptions{Cwd: "/w"}); err != nil || len(res.Hits) != 1 {
			t.Errorf("Search(cwd /w) = %+v, %v; want the entry", res.Hits, err)
		}
	})
}

// TestEntryIDNoEngineHolds: an entry id that is not UTF-8 or holds a
// NUL names no entry, the same on every engine: reads from it, a label
// of it, a move to it are not found (no label: none). The PostgreSQL
// engine handed the id to the server, which refuses such text, and
// answered a storage failure (a 500 from the HTTP API:
// GET /api/sessions/{id}/entries/%FF); a move to it was refused as an
// invalid leaf entry, or named U+FFFD in its not-found error.
func TestEntryIDNoEngineHolds(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		st := mustCreate(t, open(t), store.CreateOptions{})
		newBuilder(t, st).user("a", "alpha")
		sess := sessiontree.NewSession(st, sessiontree.SessionOptions{})
		for _, id := range []string{"\xff", "a\x00b", "\xe3\x89"} {
			notFound := func(what string, err error) {
				t.Helper()
				var nf *sessiontree.EntryNotFoundError
				if !errors.As(err, &nf) || nf.ID != id || !errors.Is(err, sessiontree.ErrNotFound) {
					t.Errorf("%s(%q) = %v; want an EntryNotFoundError naming it", what, id, err)
				}
			}
			_, err := st.Entry(ctx, id)
			notFound("Entry", err)
			_, err = st.Path(ctx, id)
			notFound("Path", err)
			_, err = st.FullPath(ctx, id)
			notFound("FullPath", err)
			_, err = st.State(ctx, id)
			notFound("State", err)
			_, err = st.SetLeaf(ctx, id, sessiontree.AppendOptions{})
			notFound("SetLeaf", err)
			_, err = sess.SetLabel(ctx, id, "x")
			notFound("SetLabel", err)
			_, err = sess.Context(ctx, sessiontree.ContextOptions{From: id})
			notFound("Context", err)
			if l, err := st.Label(ctx, id); l != "" || err != nil {
				t.Errorf("Label(%q) = %q, %v; want none", id, l, err)
			}
		}
	})
}
