package store_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// TestForkUpdatedAt: a fork is made now, so its last change is now too,
// not its copied entries' older time: it lists above a session changed
// after its source but before the fork, on both engines and for each
// kind of fork (a path fork copies entries, a whole-tree fork the log).
func TestForkUpdatedAt(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, openStore opener) {
		ctx := context.Background()
		s := openStore(t)
		dir := t.TempDir()
		src := filepath.Join(dir, "src.jsonl")
		writeFile(t, src, `{"type":"session","version":3,"id":"src","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-02T00:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1}}
`)
		other := filepath.Join(dir, "other.jsonl")
		writeFile(t, other, `{"type":"session","version":3,"id":"other","timestamp":"2026-01-03T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-04T00:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1}}
`)
		mustImport(t, s, []string{src, other}, store.ImportOptions{})
		for _, opts := range []store.ForkOptions{{ID: "path-fork"}, {ID: "tree-fork", Tree: true}} {
			f, err := s.Fork(ctx, "src", opts)
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			in, err := s.Info(ctx, opts.ID)
			if err != nil {
				t.Fatal(err)
			}
			if in.UpdatedAt != in.CreatedAt {
				t.Errorf("fork %s: created %s, updated %s; want updated at its creation", opts.ID, in.CreatedAt, in.UpdatedAt)
			}
		}
		page, err := s.List(ctx, store.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, in := range page.Sessions {
			ids = append(ids, in.ID)
		}
		if want := []string{"tree-fork", "path-fork", "other", "src"}; !slices.Equal(ids, want) {
			t.Errorf("List = %v; want %v (the forks, newest first, above the sessions changed before them)", ids, want)
		}
		// An entry written later is the last change again.
		f, err := s.Resume(ctx, "path-fork", sessiontree.SessionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		e, err := f.SetName(ctx, "later")
		if err != nil {
			t.Fatal(err)
		}
		if in, err := s.Info(ctx, "path-fork"); err != nil || in.UpdatedAt != e.Timestamp {
			t.Errorf("after an append: updated %q, %v; want the entry's %s", in.UpdatedAt, err, e.Timestamp)
		}
	})
}
