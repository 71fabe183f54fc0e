package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

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
// leaves nothing behind; it stays out of the group of small files it was
// read with, which commits the others.
func TestImportRefusesUnstorableHeader(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	dir := t.TempDir()
	user := `{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}` + "\n"
	files := map[string]string{"bad.jsonl": `/w\u0000x`, "good.jsonl": `/w`}
	var paths []string
	for name, cwd := range files {
		header := `{"type":"session","version":3,"id":"` + name + `","timestamp":"2026-01-01T00:00:00.000Z","cwd":"` + cwd + `"}` + "\n"
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(header+user), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	var groups []int
	rep, err := s.Import(ctx, paths, store.WithAfterGroup(store.ImportOptions{}, func(n int) { groups = append(groups, n) }))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Files {
		var le *jsonl.LineError
		var me *sessiontree.InvalidSessionMetaError
		switch filepath.Base(f.Path) {
		case "bad.jsonl":
			if f.Outcome != store.OutcomeFailed || !errors.As(f.Err, &le) || le.Line != 1 || !errors.As(f.Err, &me) || me.Field != "cwd" {
				t.Errorf("import of bad.jsonl: %s, %v; want failed at line 1 with an InvalidSessionMetaError naming cwd", f.Outcome, f.Err)
			}
		case "good.jsonl":
			if f.Outcome != store.OutcomeNew {
				t.Errorf("import of good.jsonl: %s, %v; want new", f.Outcome, f.Err)
			}
		}
	}
	if len(groups) != 1 || groups[0] != 1 {
		t.Errorf("groups committed: %v; want one, of good.jsonl alone", groups)
	}
	if infos, err := s.List(ctx, store.ListOptions{}); err != nil || len(infos.Sessions) != 1 || infos.Sessions[0].ID != "good.jsonl" {
		t.Errorf("List after the import: %+v, %v; want good.jsonl's session alone", infos.Sessions, err)
	}
}

// TestCreateRefusesIDsPiRefuses: Create and Fork refuse an id pi 1.6.0
// refuses (assertValidSessionId) or the command would take for a file
// (".jsonl"), on both engines, with an InvalidSessionMetaError naming the
// id, and store nothing; ids pi takes pass. A store may still hold such
// an id, from a file imported as it is: it is read and written as any.
func TestCreateRefusesIDsPiRefuses(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, openStore opener) {
		ctx := context.Background()
		s := openStore(t)
		src := mustCreate(t, s, store.CreateOptions{ID: "src", Cwd: "/w"})
		if _, err := sessiontree.NewSession(src, sessiontree.SessionOptions{}).AppendMessage(ctx, json.RawMessage(`{"role":"user","content":"hi"}`)); err != nil {
			t.Fatal(err)
		}
		bad := []string{"x.jsonl", "X.JSONL", "-rf", "a/b", `a\b`, "a b", "tab\there", "line\nbreak", "ctl\x01", ".", "..", ".hidden", "trailing-", "_x", "é", "a\x00b"}
		for _, id := range bad {
			var me *sessiontree.InvalidSessionMetaError
			_, err := s.Create(ctx, store.CreateOptions{ID: id, Cwd: "/w"})
			if !errors.As(err, &me) || me.Field != "id" || !errors.Is(err, sessiontree.ErrInvalidEntry) {
				t.Errorf("Create(id %q) = %v; want an InvalidSessionMetaError naming the id", id, err)
			}
			_, err = s.Fork(ctx, "src", store.ForkOptions{ID: id})
			if !errors.As(err, &me) || me.Field != "id" {
				t.Errorf("Fork(id %q) = %v; want an InvalidSessionMetaError naming the id", id, err)
			}
		}
		for _, id := range []string{"a", "Z9", "0198f2a4-5c1e-7d3a-9b2f-3e4d5c6b7a81", "my.session_1-x", "x.jsonl1"} {
			mustCreate(t, s, store.CreateOptions{ID: id, Cwd: "/w"}).Close()
		}
		if f, err := s.Fork(ctx, "src", store.ForkOptions{ID: "fork.1"}); err != nil {
			t.Errorf("Fork(id fork.1) = %v", err)
		} else {
			f.Close()
		}
		page, err := s.List(ctx, store.ListOptions{Limit: store.MaxListLimit})
		if err != nil || len(page.Sessions) != 7 {
			t.Errorf("List: %d sessions, %v; want 7 (src, five made, one fork)", len(page.Sessions), err)
		}
		// Ids already held, imported as they are, are read and written.
		dir := t.TempDir()
		for i, id := range []string{"-rf", "old.jsonl"} {
			path := filepath.Join(dir, fmt.Sprintf("f%d.jsonl", i))
			header := `{"type":"session","version":3,"id":"` + id + `","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}` + "\n"
			if err := os.WriteFile(path, []byte(header), 0o600); err != nil {
				t.Fatal(err)
			}
			if rep, err := s.Import(ctx, []string{path}, store.ImportOptions{}); err != nil || rep.Files[0].Outcome != store.OutcomeNew {
				t.Fatalf("Import(id %q) = %+v, %v", id, rep, err)
			}
			st, err := s.OpenSession(ctx, id)
			if err != nil {
				t.Fatalf("OpenSession(%q) = %v", id, err)
			}
			if _, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).SetName(ctx, "kept"); err != nil {
				t.Errorf("SetName on %q = %v", id, err)
			}
			st.Close()
		}
	})
}

// TestResume: Resume opens a session by its id or a unique prefix as a
// typed Session, whose ID is the session's; no such session is
// ErrNotFound.
func TestResume(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, openStore opener) {
		ctx := context.Background()
		s := openStore(t)
		mustCreate(t, s, store.CreateOptions{ID: "resume-me", Cwd: "/w"}).Close()
		for _, arg := range []string{"resume-me", "resu"} {
			sess, err := s.Resume(ctx, arg, sessiontree.SessionOptions{})
			if err != nil {
				t.Fatalf("Resume(%q) = %v", arg, err)
			}
			if sess.ID() != "resume-me" {
				t.Errorf("Resume(%q).ID() = %q; want resume-me", arg, sess.ID())
			}
			if _, err := sess.SetName(ctx, "n"); err != nil {
				t.Errorf("SetName after Resume(%q) = %v", arg, err)
			}
			if err := sess.Close(); err != nil {
				t.Errorf("Close() = %v", err)
			}
		}
		if _, err := s.Resume(ctx, "nope", sessiontree.SessionOptions{}); !errors.Is(err, sessiontree.ErrNotFound) {
			t.Errorf("Resume(nope) = %v; want ErrNotFound", err)
		}
	})
}

// TestSessionHandleInfo: a session handle's Info (sessiontree.InfoReader,
// what info reads its metadata from) is the row Store.Info reads by id,
// metadata included, as writes change it; once the session is deleted,
// and after another is made with its id, the handle's session is not
// found.
func TestSessionHandleInfo(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, openStore opener) {
		ctx := context.Background()
		s := openStore(t)
		st, err := s.Create(ctx, store.CreateOptions{ID: "h1", Cwd: "/w", Name: "first", Metadata: json.RawMessage(`{"k":[1,2]}`)})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		same := func(when string) {
			t.Helper()
			got, err := st.Info(ctx)
			if err != nil {
				t.Fatalf("%s: Info: %v", when, err)
			}
			want, err := s.Info(ctx, "h1")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: the handle's Info differs from Store.Info (-store +handle):\n%s", when, diff)
			}
			if string(got.Metadata) != `{"k":[1,2]}` {
				t.Errorf("%s: Info().Metadata = %s; want the session's", when, got.Metadata)
			}
		}
		same("created")
		if _, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).AppendMessage(ctx, json.RawMessage(`{"role":"user","content":"hi"}`)); err != nil {
			t.Fatal(err)
		}
		same("after an append")
		if _, err := s.Delete(ctx, "h1"); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Info(ctx); !errors.Is(err, sessiontree.ErrNotFound) {
			t.Errorf("Info after the delete: %v; want ErrNotFound", err)
		}
		again, err := s.Create(ctx, store.CreateOptions{ID: "h1", Cwd: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		again.Close()
		if in, err := st.Info(ctx); !errors.Is(err, sessiontree.ErrNotFound) {
			t.Errorf("Info of the deleted session's handle, its id made again: %+v, %v; want ErrNotFound", in, err)
		}
	})
}
