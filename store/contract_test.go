package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/store"
)

// onlyContract hides the engine behind the contract: a store made with it
// cannot reach *engine.DB, so every call it makes goes through
// sessiontree.Database, as a store on another engine's would.
type onlyContract struct{ sessiontree.Database }

// TestStoreOnTheContract runs the store's operations on a database it
// knows through sessiontree.Database alone, and checks what each returns.
func TestStoreOnTheContract(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := engine.Open(ctx, filepath.Join(t.TempDir(), "sessions.db"), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := store.New(onlyContract{engine.NewDatabase(db)})
	defer s.Close()
	if s.DB() != nil {
		t.Fatalf("DB() = %v; want nil for a store on the contract alone", s.DB())
	}
	st, err := s.Create(ctx, store.CreateOptions{ID: "alpha-1", Cwd: "/w", Metadata: json.RawMessage(`{"k":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	b := newBuilder(t, st)
	b.user("u1", "amber lantern glows")
	b.label("l1", "u1", "start")
	b.assistant("a1", "jade river flows")
	mustCreate(t, s, store.CreateOptions{ID: "alpha-2", Cwd: "/v"})

	if _, err := s.Resolve(ctx, "alpha"); !errors.Is(err, store.ErrAmbiguous) {
		t.Errorf("Resolve(alpha) = %v; want ErrAmbiguous", err)
	}
	if id, err := s.Resolve(ctx, "alpha-1"); err != nil || id != "alpha-1" {
		t.Errorf("Resolve(alpha-1) = %q, %v; want alpha-1", id, err)
	}
	if _, err := s.Info(ctx, "nope"); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("Info(nope) = %v; want ErrNotFound", err)
	}
	in, err := s.Info(ctx, "alpha-1")
	if err != nil || in.Entries != 3 || in.Leaf != "a1" || string(in.Metadata) != `{"k":1}` {
		t.Errorf("Info(alpha-1) = %+v, %v; want 3 entries, leaf a1, metadata {\"k\":1}", in, err)
	}
	page, err := s.List(ctx, store.ListOptions{Limit: 1})
	if err != nil || len(page.Sessions) != 1 || page.Next == "" {
		t.Fatalf("List(limit 1) = %+v, %v; want one session and a cursor", page, err)
	}
	rest, err := s.List(ctx, store.ListOptions{After: page.Next})
	if err != nil || len(rest.Sessions) != 1 || rest.Sessions[0].ID == page.Sessions[0].ID || rest.Next != "" {
		t.Errorf("List(after) = %+v, %v; want the other session, last page", rest, err)
	}

	res, err := s.Search(ctx, "lantern", store.SearchOptions{SessionID: "alpha-1"})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].EntryID != "u1" || !res.Hits[0].OnActiveBranch {
		t.Errorf("Search(lantern) = %+v, %v; want u1 on the active branch", res, err)
	}
	b.user("u2", "copper kettle sings")
	if _, err := s.Search(ctx, "kettle", store.SearchOptions{SessionID: "nope"}); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("Search in a missing session = %v; want ErrNotFound", err)
	}
	if _, err := s.Search(ctx, `"unclosed`, store.SearchOptions{}); !errors.Is(err, store.ErrBadQuery) {
		t.Errorf("Search(unclosed quote) = %v; want ErrBadQuery", err)
	}

	fork, err := s.Fork(ctx, "alpha-1", store.ForkOptions{ID: "fork-1"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(logOf(t, fork)), []string{"u1", "a1", "u2"}; !slices.Equal(got[:3], want) || len(got) != 4 {
		t.Errorf("fork log = %v; want %v and one label entry", got, want)
	}
	var out bytes.Buffer
	if err := s.Export(ctx, "alpha-1", &out, store.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(out.String(), "\n"); lines != 5 {
		t.Errorf("Export wrote %d lines; want the header and 4 entries:\n%s", lines, out.String())
	}
	if err := s.Check(ctx, ""); err != nil {
		t.Errorf("Check = %v", err)
	}
	if rep, err := s.Usage(ctx, sessiontree.UsageQuery{}); err != nil {
		t.Errorf("Usage = %+v, %v", rep, err)
	}
	if w, err := s.Warnings(ctx, ""); err != nil || len(w) != 0 {
		t.Errorf("Warnings = %v, %v; want none", w, err)
	}
	if n, err := s.Delete(ctx, "alpha-2", "fork-1", "nope"); err != nil || n != 2 {
		t.Errorf("Delete = %d, %v; want 2", n, err)
	}
	// Import runs on the contract too: a new file, then its growth, then
	// the same file again, unchanged.
	path := filepath.Join(t.TempDir(), "x.jsonl")
	head := `{"type":"session","version":3,"id":"imp-1","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/w"}` + "\n" +
		`{"type":"message","id":"m1","parentId":null,"timestamp":"2026-03-01T10:00:01.000Z","message":{"role":"user","content":"amber"}}` + "\n"
	writeFile(t, path, head)
	for i, want := range []store.Outcome{store.OutcomeNew, store.OutcomeGrown, store.OutcomeUnchanged} {
		if i == 1 {
			appendFile(t, path, `{"type":"message","id":"m2","parentId":"m1","timestamp":"2026-03-01T10:00:02.000Z","message":{"role":"user","content":"jade"}}`+"\n")
		}
		rep, err := s.Import(ctx, []string{path}, store.ImportOptions{})
		if err != nil || len(rep.Files) != 1 || rep.Files[0].Outcome != want {
			t.Fatalf("Import #%d on the contract alone = %+v, %v; want outcome %v", i+1, rep, err, want)
		}
	}
	if in, err := s.Info(ctx, "imp-1"); err != nil || in.Entries != 2 || in.Leaf != "m2" {
		t.Errorf("Info(imp-1) = %+v, %v; want 2 entries, leaf m2", in, err)
	}
}

// TestWriteIndexChunkStale writes a chunk of the search index twice: the
// second finds its sessions' marks moved and writes nothing, with an
// error matching sessiontree.ErrConflict.
func TestWriteIndexChunkStale(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	b := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s1"}))
	b.user("u1", "amber lantern glows")
	b.user("u2", "jade river flows")
	d := s.Database()
	var c sessiontree.IndexChunk
	err := d.View(ctx, func(tx sessiontree.DatabaseTx) (err error) {
		c, err = tx.NextIndexChunk(1000, 1<<20, nil)
		return err
	})
	if err != nil || c.Entries != 2 || c.More || len(c.Spans) != 1 {
		t.Fatalf("NextIndexChunk = %+v, %v; want 2 entries of one session", c, err)
	}
	write := func() error {
		return d.Update(ctx, func(tx sessiontree.DatabaseTx) error { return tx.WriteIndexChunk(c) })
	}
	if err := write(); err != nil {
		t.Fatal(err)
	}
	if err := write(); !errors.Is(err, sessiontree.ErrConflict) {
		t.Errorf("WriteIndexChunk again = %v; want ErrConflict", err)
	}
	var backlog int64
	if err := d.View(ctx, func(tx sessiontree.DatabaseTx) (err error) { backlog, err = tx.IndexBacklog(); return err }); err != nil || backlog != 0 {
		t.Errorf("IndexBacklog = %d, %v; want 0", backlog, err)
	}
	mustCheck(t, s, "")
}

// TestNextIndexChunkAfter reads the search index's next chunk past one
// not written yet, on both engines: it starts where that one ends, in
// the same session and then the next, and written out of order it is
// refused (ErrConflict), in order both go in and nothing is pending.
func TestNextIndexChunkAfter(t *testing.T) {
	t.Parallel()
	onEngines(t, testNextIndexChunkAfter)
}

func testNextIndexChunkAfter(t *testing.T, openStore opener) {
	ctx := context.Background()
	s := openStore(t)
	b1 := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s1"}))
	b1.user("u1", "amber lantern glows")
	b1.user("u2", "jade river flows")
	b1.user("u3", "copper kettle sings")
	b2 := newBuilder(t, mustCreate(t, s, store.CreateOptions{ID: "s2"}))
	b2.user("v1", "silver bell rings")
	d := s.Database()
	next := func(limit int64, after []sessiontree.IndexSpan) sessiontree.IndexChunk {
		t.Helper()
		var c sessiontree.IndexChunk
		err := d.View(ctx, func(tx sessiontree.DatabaseTx) (err error) {
			c, err = tx.NextIndexChunk(limit, 1<<20, after)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c1 := next(2, nil)
	c2 := next(2, c1.Spans)
	c3 := next(2, append(slices.Clone(c1.Spans), c2.Spans...))
	if c1.Entries != 2 || !c1.More || c2.Entries != 2 || c2.More || len(c2.Spans) != 2 || c3.Entries != 0 {
		t.Fatalf("chunks = %+v, %+v, %+v; want 2 entries, then the last of s1 and s2's, then none", c1, c2, c3)
	}
	if c2.Spans[0].From != c1.Spans[0].To+1 || c2.Spans[0].Session != c1.Spans[0].Session {
		t.Errorf("chunk after %+v starts at %+v; want the next entry of the same session", c1.Spans, c2.Spans[0])
	}
	write := func(c sessiontree.IndexChunk) error {
		return d.Update(ctx, func(tx sessiontree.DatabaseTx) error { return tx.WriteIndexChunk(c) })
	}
	if err := write(c2); !errors.Is(err, sessiontree.ErrConflict) {
		t.Errorf("WriteIndexChunk of the chunk after, first = %v; want ErrConflict", err)
	}
	if err := write(c1); err != nil {
		t.Fatal(err)
	}
	if err := write(c2); err != nil {
		t.Fatal(err)
	}
	var backlog int64
	if err := d.View(ctx, func(tx sessiontree.DatabaseTx) (err error) { backlog, err = tx.IndexBacklog(); return err }); err != nil || backlog != 0 {
		t.Errorf("IndexBacklog = %d, %v; want 0", backlog, err)
	}
	res, err := s.Search(ctx, "kettle", store.SearchOptions{})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].EntryID != "u3" {
		t.Errorf("Search(kettle) = %+v, %v; want u3", res, err)
	}
}
