package sessiontree_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/memory"
)

// newMemorySession returns a Session over an empty memory backend.
func newMemorySession(t testing.TB, opts sessiontree.SessionOptions) *sessiontree.Session {
	t.Helper()
	st, err := memory.New(sessiontree.SessionMeta{Cwd: "/w"}, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := sessiontree.NewSession(st, opts)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestEmptyEntryIDMessage: an empty entry id is not found, and the
// message says the id is empty instead of pi's "Entry  not found".
func TestEmptyEntryIDMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newMemorySession(t, sessiontree.SessionOptions{})
	for name, call := range map[string]func() error{
		"SetLabel":    func() error { _, err := s.SetLabel(ctx, "", "x"); return err },
		"Entry":       func() error { _, err := s.Entry(ctx, ""); return err },
		"EditContext": func() error { _, err := s.EditContext(ctx, "", nil); return err },
	} {
		err := call()
		if !errors.Is(err, sessiontree.ErrNotFound) || !strings.HasSuffix(err.Error(), "entry id is empty") {
			t.Errorf("%s(\"\") = %v; want ErrNotFound saying the entry id is empty", name, err)
		}
	}
	if got := (&sessiontree.EntryNotFoundError{ID: "ab12"}).Error(); got != "Entry ab12 not found" {
		t.Errorf("EntryNotFoundError{ab12} = %q; want pi's message", got)
	}
}

// TestEditContextNullMessage: a JSON null replacement is refused as pi
// refuses it, with a message that says it was null and what to pass
// instead, not pi's "must be null or ..."; other bad replacements keep
// pi's message.
func TestEditContextNullMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newMemorySession(t, sessiontree.SessionOptions{})
	u, err := s.AppendMessage(ctx, json.RawMessage(`{"role":"user","content":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		repl string
		null bool
		want string
	}{
		{"null", true, "replacement is JSON null"},
		{" null ", true, "replacement is JSON null"},
		{"5", false, "Context edit replacement must be null or contain string/array content"},
	} {
		_, err := s.EditContext(ctx, u.ID, json.RawMessage(c.repl))
		var re *sessiontree.EditRefusedError
		if !errors.As(err, &re) || re.Reason != sessiontree.EditBadReplacement || re.Null != c.null ||
			!strings.Contains(err.Error(), c.want) {
			t.Errorf("EditContext(%q) = %v; want EditBadReplacement saying %q", c.repl, err, c.want)
		}
		if c.null && strings.Contains(err.Error(), "must be null") {
			t.Errorf("EditContext(%q) = %v; the message contradicts itself", c.repl, err)
		}
	}
}

// TestSessionID: a Session tells its id without I/O on the memory and
// JSONL backends (the database engines' in package store's tests).
func TestSessionID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mem, err := memory.New(sessiontree.SessionMeta{ID: "mem-1"}, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	file, err := jsonl.Create(ctx, path, sessiontree.SessionMeta{ID: "file-1"}, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for want, st := range map[string]sessiontree.Storage{"mem-1": mem, "file-1": file} {
		s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
		if got := s.ID(); got != want {
			t.Errorf("ID() = %q; want %q", got, want)
		}
		_ = s.Close()
	}
	reopened, err := jsonl.Open(ctx, path, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	if got := sessiontree.NewSession(reopened, sessiontree.SessionOptions{}).ID(); got != "file-1" {
		t.Errorf("ID() after a reopen = %q; want file-1", got)
	}
}

// TestSessionIfLeaf: every write of a session guarded on a leaf that is
// no longer the leaf is refused with a ConflictError naming both, and
// writes nothing; guarded on the leaf, each goes through.
func TestSessionIfLeaf(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newMemorySession(t, sessiontree.SessionOptions{})
	u, err := s.IfLeaf("").AppendMessage(ctx, json.RawMessage(`{"role":"user","content":"one"}`))
	if err != nil {
		t.Fatalf("IfLeaf(\"\").AppendMessage on an empty session = %v", err)
	}
	a, err := s.IfLeaf(u.ID).AppendMessage(ctx, json.RawMessage(`{"role":"assistant","content":[{"type":"text","text":"two"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	stale := s.IfLeaf(u.ID) // the leaf is a now
	writes := map[string]func(*sessiontree.Session) error{
		"AppendMessage": func(g *sessiontree.Session) error {
			_, err := g.AppendMessage(ctx, json.RawMessage(`{"role":"user","content":"x"}`))
			return err
		},
		"AppendModelChange": func(g *sessiontree.Session) error { _, err := g.AppendModelChange(ctx, "p", "m"); return err },
		"AppendCustom":      func(g *sessiontree.Session) error { _, err := g.AppendCustom(ctx, "c", nil); return err },
		"SetLabel":          func(g *sessiontree.Session) error { _, err := g.SetLabel(ctx, u.ID, "l"); return err },
		"SetName":           func(g *sessiontree.Session) error { _, err := g.SetName(ctx, "n"); return err },
		"AppendUsage": func(g *sessiontree.Session) error {
			_, err := g.AppendUsage(ctx, sessiontree.UsageRecord{Kind: "k"})
			return err
		},
		"AppendCompaction": func(g *sessiontree.Session) error {
			_, err := g.AppendCompaction(ctx, sessiontree.Compaction{Summary: "s"})
			return err
		},
		"EditContext": func(g *sessiontree.Session) error { _, err := g.EditContext(ctx, u.ID, nil); return err },
		"MoveTo":      func(g *sessiontree.Session) error { _, err := g.MoveTo(ctx, u.ID, nil); return err },
		"MoveTo summary": func(g *sessiontree.Session) error {
			_, err := g.MoveTo(ctx, u.ID, &sessiontree.BranchSummary{Summary: "s"})
			return err
		},
	}
	for name, write := range writes {
		err := write(stale)
		var ce *sessiontree.ConflictError
		if !errors.As(err, &ce) || ce.Want != u.ID || ce.Got != a.ID {
			t.Errorf("%s guarded on a stale leaf = %v; want a ConflictError (want %s, got %s)", name, err, u.ID, a.ID)
		}
	}
	if st, _ := s.Stats(ctx); st.Entries != 2 {
		t.Errorf("after refused writes the log has %d entries; want 2", st.Entries)
	}
	for name, write := range writes {
		leaf, err := s.Leaf(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := write(s.IfLeaf(leaf)); err != nil {
			t.Errorf("%s guarded on the leaf = %v", name, err)
		}
	}
}
