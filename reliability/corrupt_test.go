package reliability_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// corruptDB makes a database with one session of 40 messages of distinct
// text, all in the search index, closed; it returns its path, the session
// id and the id of the 20th entry, the one the cases damage (on the active
// branch, and not the first user message, which the session list keeps).
func corruptDB(t *testing.T, dir string) (path, session, victim string) {
	t.Helper()
	ctx := context.Background()
	path = filepath.Join(dir, "silent.db")
	s, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Create(ctx, store.CreateOptions{Cwd: "/silent"})
	if err != nil {
		t.Fatal(err)
	}
	sess := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	for i := range 40 {
		text := fmt.Sprintf("message %d: the %s of the %s, in %s", i, words[i%len(words)], words[(i*7+3)%len(words)], words[(i*13+5)%len(words)])
		if _, err := sess.AppendMessage(ctx, userMessage(text)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Index(ctx, store.IndexOptions{}); err != nil {
		t.Fatal(err)
	}
	log := logOf(t, st)
	session, victim = st.ID(), log[19].ID
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path, session, victim
}

var words = []string{"parser", "lexer", "walker", "branch", "leaf", "compaction", "summary", "label",
	"cursor", "checkpoint", "journal", "trigram", "snippet", "cycle", "parent", "export"}

// TestSilentCorruption is issue 13's silent corruption: an entry's stored
// JSON changed behind the engine's back, by one letter or cut short, is
// not a valid-looking row any more: the store's Check reports it naming
// the session and the entry, and every read that hands out entries (the
// path, the log, one entry, the context, the command's branch --json, tree
// --json, export and context) fails with sessiontree.ErrCorrupt and a
// *sessiontree.CorruptError naming the entry instead of printing what the
// row now holds. A letter changed together with its checksum (written to
// match, as only a deliberate edit would) leaves the entries consistent,
// and Check then finds that the search index no longer holds what the
// entry's text gives.
func TestSilentCorruption(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// damage is the raw SQL run on the victim's row (seq 20).
		damage string
		// resealed writes the checksum of the damaged JSON.
		resealed bool
	}{
		{name: "one letter changed", damage: `UPDATE entries SET raw = replace(raw, 'message 19:', 'massage 19:') WHERE seq = 20`},
		{name: "JSON cut short", damage: `UPDATE entries SET raw = substr(raw, 1, length(raw) - 40) WHERE seq = 20`},
		{name: "one letter changed with its checksum", damage: `UPDATE entries SET raw = replace(raw, 'message 19:', 'massage 19:') WHERE seq = 20`, resealed: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			path, session, victim := corruptDB(t, dir)
			rawSQL(t, path, `DROP TRIGGER entries_no_update`, tc.damage)
			if tc.resealed {
				reseal(t, path, "seq = 20")
			}
			s, err := store.Open(ctx, path, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()

			err = s.Check(ctx, "")
			t.Logf("Check() = %v", err)
			wantEntryError(t, "Check()", err, victim)
			if err != nil && !strings.Contains(err.Error(), session) {
				t.Errorf("Check() = %v; want it to name session %s", err, session)
			}
			if tc.resealed {
				if !strings.Contains(fmt.Sprint(err), "search index") {
					t.Errorf("Check() = %v; want the search index named", err)
				}
				if err := s.DB().Check(ctx, ""); err != nil {
					t.Errorf("engine Check() = %v; want nil: the entries are consistent, only the index disagrees", err)
				}
			} else {
				checkReadsRefuse(t, s, session, victim)
			}

			r := runCLI(t, "", "--db", path, "check")
			if r.code != 1 || !strings.Contains(r.stdout+r.stderr, victim) {
				t.Errorf("sessiontree check: exit %d, output %q; want 1, naming entry %s", r.code, r.stdout+r.stderr, victim)
			}
			if tc.resealed {
				return
			}
			out := filepath.Join(dir, "export.jsonl")
			for _, args := range [][]string{
				{"branch", session, "--json"},
				{"branch", session, "--full", "--json"},
				{"tree", session, "--json"},
				{"context", session, "--json"},
				{"export", session},
				{"export", session, "-o", out},
			} {
				r := runCLI(t, "", append([]string{"--db", path}, args...)...)
				if r.code != 1 || !strings.Contains(r.stderr, victim) || !strings.Contains(r.stderr, "corrupt") {
					t.Errorf("sessiontree %s: exit %d, stderr %q; want 1 and a corrupt-session error naming entry %s",
						strings.Join(args, " "), r.code, r.stderr, victim)
				}
				if strings.Contains(r.stdout, "massage") || args[0] != "export" && r.stdout != "" {
					t.Errorf("sessiontree %s printed %q; want nothing of the damaged session", strings.Join(args, " "), r.stdout)
				}
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("export -o left %s (%v); want no file", out, err)
			}
		})
	}
}

// wantEntryError checks that err matches sessiontree.ErrCorrupt and holds
// a *sessiontree.CorruptError naming entry id.
func wantEntryError(t *testing.T, what string, err error, id string) {
	t.Helper()
	var ce *sessiontree.CorruptError
	if !errors.Is(err, sessiontree.ErrCorrupt) || !errors.As(err, &ce) || ce.EntryID != id {
		t.Errorf("%s = %v; want ErrCorrupt, a *CorruptError naming entry %s", what, err, id)
	}
}

// checkReadsRefuse reads the damaged session every way that hands out
// entries: each read that meets the victim fails with its corrupt-session
// error.
func checkReadsRefuse(t *testing.T, s *store.Store, session, victim string) {
	t.Helper()
	ctx := context.Background()
	st, err := s.OpenSession(ctx, session)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := st.Leaf(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sess := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	reads := []struct {
		what string
		read func() (any, error)
	}{
		{"Path(leaf)", func() (any, error) { return st.Path(ctx, leaf) }},
		{"FullPath(leaf)", func() (any, error) { return st.FullPath(ctx, leaf) }},
		{"Log(0, 0)", func() (any, error) { return st.Log(ctx, 0, 0) }},
		{"Entry(victim)", func() (any, error) { return st.Entry(ctx, victim) }},
		{"EntriesByType(message)", func() (any, error) { return st.EntriesByType(ctx, sessiontree.TypeMessage) }},
		{"Context()", func() (any, error) { return sess.Context(ctx, sessiontree.ContextOptions{}) }},
		{"Projection()", func() (any, error) { return sess.Projection(ctx, sessiontree.ContextOptions{}) }},
		{"Export()", func() (any, error) {
			var b strings.Builder
			return b.String(), s.Export(ctx, session, &b, store.ExportOptions{})
		}},
	}
	for _, r := range reads {
		got, err := r.read()
		wantEntryError(t, r.what, err, victim)
		if err == nil {
			if b, _ := json.Marshal(got); strings.Contains(string(b), "massage") {
				t.Errorf("%s handed out the damaged text", r.what)
			}
		}
	}
}
