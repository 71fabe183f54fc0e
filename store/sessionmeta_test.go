package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
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

// TestImportRefusesUnstorableHeader: a pi file whose header holds what
// no engine may store fails its import at line 1, naming the field, and
// leaves nothing behind.
func TestImportRefusesUnstorableHeader(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	header := `{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w\u0000x"}` + "\n"
	user := `{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}` + "\n"
	if err := os.WriteFile(path, []byte(header+user), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Import(ctx, []string{path}, store.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := rep.Files[0]
	var le *jsonl.LineError
	var me *sessiontree.InvalidSessionMetaError
	if f.Outcome != store.OutcomeFailed || !errors.As(f.Err, &le) || le.Line != 1 || !errors.As(f.Err, &me) || me.Field != "cwd" {
		t.Errorf("import: %s, %v; want failed at line 1 with an InvalidSessionMetaError naming cwd", f.Outcome, f.Err)
	}
	if infos, err := s.List(ctx, store.ListOptions{}); err != nil || len(infos.Sessions) != 0 {
		t.Errorf("List after the import: %d sessions, %v; want none", len(infos.Sessions), err)
	}
}
