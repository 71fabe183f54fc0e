package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// TestCreateRefusesUnstorableHeader: a NUL byte or invalid UTF-8 in a
// session's id, cwd or parent is refused by both engines alike, with an
// error naming the field (sessiontree.CheckSessionMeta), not a driver's
// message; nothing is stored, and such an id is simply not found.
func TestCreateRefusesUnstorableHeader(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, openStore opener) {
		ctx := context.Background()
		s := openStore(t)
		for _, c := range []struct {
			field string
			opts  store.CreateOptions
		}{
			{"id", store.CreateOptions{ID: "a\x00b", Cwd: "/w"}},
			{"cwd", store.CreateOptions{Cwd: "/w\x00x"}},
			{"cwd", store.CreateOptions{Cwd: "/w\xff"}},
			{"parentSession", store.CreateOptions{Cwd: "/w", ParentSession: "p\x00"}},
		} {
			_, err := s.Create(ctx, c.opts)
			var me *sessiontree.InvalidSessionMetaError
			if !errors.As(err, &me) || me.Field != c.field || !errors.Is(err, sessiontree.ErrInvalidEntry) {
				t.Errorf("Create(%+q): %v, want an InvalidSessionMetaError naming %s", c.opts, err, c.field)
			}
		}
		if infos, err := s.List(ctx, store.ListOptions{}); err != nil || len(infos.Sessions) != 0 {
			t.Errorf("List after refusals: %d sessions, %v; want none", len(infos.Sessions), err)
		}
		if _, err := s.OpenSession(ctx, "a\x00b"); !errors.Is(err, sessiontree.ErrNotFound) {
			t.Errorf("OpenSession(id with a NUL): %v, want ErrNotFound", err)
		}
	})
}
