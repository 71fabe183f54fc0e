package reliability_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree/store"
)

// TestReadsWhileWriting (issue 13, item 9): while another process holds
// the database's write lock, `sessiontree search` and `sessiontree check`
// answer at once (they used to catch the search index up first, a write,
// and fail after the 5 s busy timeout). The search finds what is indexed
// through the index and what is still pending by reading it: an entry
// appended since the last catch-up, by a word and by a short (CJK)
// phrase. Beyond its bound (store.PendingScanEntries) it says on stderr
// that its results may be incomplete, and still exits 0. Once the lock is
// free, the next search catches the index up and finds everything.
func TestReadsWhileWriting(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "sessions.db")
	piFile(t, filepath.Join(dir, "indexed.jsonl"), 1, "an indexed tourmaline", "more text")
	cliOK(t, "", "--db", db, "import", filepath.Join(dir, "indexed.jsonl"))
	id := "0190a000-0000-7000-8000-000000000001"
	appended := strings.TrimSpace(cliOK(t, `{"type":"message","message":{"role":"user","content":"a pending chrysoberyl 猫"}}`+"\n", "--db", db, "append", id))

	// A session of more pending entries than a search reads (imported by
	// the store, which leaves the index to catch up), older than the
	// appended entry: a word in its oldest entries only, one in its newest.
	many := store.PendingScanEntries + 100
	texts := make([]string, many)
	for i := range texts {
		texts[i] = fmt.Sprintf("filler %d", i)
	}
	texts[0], texts[many-1] = "the oldest spessartine", "the newest almandine"
	piFile(t, filepath.Join(dir, "many.jsonl"), 2, texts...)
	s, err := store.Open(ctx, db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Import(ctx, []string{filepath.Join(dir, "many.jsonl")}, store.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	release := holdWriteLock(t, db)
	for _, tc := range []struct {
		query, want string
		note        bool // the results may be incomplete
	}{
		{"tourmaline", "00000001", true},
		{"chrysoberyl", appended[:8], true},
		{"猫", appended[:8], true},
		{"almandine", fmt.Sprintf("%08x", many), true},
		{"spessartine", "no hits", true},
	} {
		r, took := timedCLI(t, "--db", db, "search", tc.query)
		if r.code != 0 || !strings.Contains(r.stdout, tc.want) {
			t.Errorf("search %s while another process writes: exit %d in %v\n%s%s; want %q", tc.query, r.code, took.Round(time.Millisecond), r.stdout, r.stderr, tc.want)
		}
		if tc.note != strings.Contains(r.stderr, "the results may be incomplete") {
			t.Errorf("search %s while another process writes: stderr %q; want the note on incomplete results %v", tc.query, r.stderr, tc.note)
		}
		if took > 3*time.Second {
			t.Errorf("search %s while another process writes took %v; want no waiting", tc.query, took.Round(time.Millisecond))
		}
		t.Logf("search %s while another process writes: %v", tc.query, took.Round(time.Millisecond))
	}
	r, took := timedCLI(t, "--db", db, "search", "chrysoberyl", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"entryId": "`+appended) && !strings.Contains(r.stdout, `"entryId":"`+appended) {
		t.Errorf("search --json while another process writes: exit %d\n%s%s; want the appended entry", r.code, r.stdout, r.stderr)
	}
	r, took = timedCLI(t, "--db", db, "check")
	if r.code != 0 || !strings.Contains(r.stdout, "ok: the database") || took > 3*time.Second {
		t.Errorf("check while another process writes: exit %d in %v\n%s%s; want ok at once", r.code, took.Round(time.Millisecond), r.stdout, r.stderr)
	}
	t.Logf("check while another process writes: %v", took.Round(time.Millisecond))

	release()
	r, took = timedCLI(t, "--db", db, "search", "spessartine")
	if r.code != 0 || !strings.Contains(r.stdout, "00000001") || strings.Contains(r.stderr, "incomplete") {
		t.Errorf("search spessartine once the writer is gone: exit %d\n%s%s; want the oldest entry found, nothing incomplete", r.code, r.stdout, r.stderr)
	}
	t.Logf("search once the writer is gone (catching up %d entries): %v", many+1, took.Round(time.Millisecond))
	checkCLI(t, db)
}
