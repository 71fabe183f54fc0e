package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/testdb"
	"github.com/sessiontree/sessiontree/store"
)

// TestSearchUnsearched: a search says in its X-Unsearched header how many
// entries not yet indexed it left unread, so that a client can tell its
// hits are incomplete: 0 for a search that read everything; the count
// store.Search gives when another writer holds the database and more
// entries are pending than a search reads itself.
func TestSearchUnsearched(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, Options{})
	if r := f.call("GET", "/api/search?q=hello", "", 200); r.header.Get(UnsearchedHeader) != "0" {
		t.Errorf("complete search: %s = %q; want 0", UnsearchedHeader, r.header.Get(UnsearchedHeader))
	}
	st, err := f.store.Create(ctx, store.CreateOptions{ID: "many", Cwd: "/work"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	entries := make([]sessiontree.Entry, store.PendingScanEntries+7)
	parent := "null"
	for i := range entries {
		raw := fmt.Sprintf(`{"type":"message","id":"e%05d","parentId":%s,"timestamp":"2026-03-01T10:00:00.000Z","message":{"role":"user","content":"beryl %d"}}`, i, parent, i)
		if entries[i], err = sessiontree.DecodeEntry([]byte(raw)); err != nil {
			t.Fatal(err)
		}
		parent = fmt.Sprintf(`"e%05d"`, i)
	}
	if err := st.AppendBatch(ctx, entries); err != nil {
		t.Fatal(err)
	}
	testdb.HoldWriteLock(t, f.store.Path())
	r := f.call("GET", "/api/search?q=beryl&limit=3", "", 200)
	if got := r.header.Get(UnsearchedHeader); got != "7" {
		t.Errorf("search while %d entries are pending and the database is held: %s = %q; want 7", len(entries), UnsearchedHeader, got)
	}
}
