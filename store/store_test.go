package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

func TestCreateAndInfo(t *testing.T) {
	t.Parallel()
	onEngines(t, testCreateAndInfo)
}

func testCreateAndInfo(t *testing.T, openStore opener) {
	ctx := context.Background()
	s := openStore(t)
	st := mustCreate(t, s, store.CreateOptions{ID: "0199a000-0000-7000-8000-000000000001", Cwd: "/work/a",
		ParentSession: "0199a000-0000-7000-8000-000000000000", Metadata: json.RawMessage(`{"tags": ["x"], "n": 1.50}`)})
	b := newBuilder(t, st)
	b.user("u1", "first prompt")
	b.assistant("a1", "answer")
	b.name("n1", "  my session  ")

	in, err := s.Info(ctx, st.ID())
	if err != nil {
		t.Fatal(err)
	}
	// The entries are stamped 2026-03-01, before the session was made:
	// its last change is its creation (sessiontree.LastChange).
	created := metaOf(t, st).CreatedAt
	want := store.SessionInfo{ID: st.ID(), Name: "my session", Cwd: "/work/a", CreatedAt: created,
		UpdatedAt: created, Entries: 3, Messages: 2, FirstUserMessage: "first prompt",
		ParentSession: "0199a000-0000-7000-8000-000000000000", Leaf: "n1", Metadata: json.RawMessage(`{"tags": ["x"], "n": 1.50}`)}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("Info() (-want +got):\n%s", diff)
	}

	if _, err := s.Create(ctx, store.CreateOptions{ID: st.ID()}); !errors.Is(err, sessiontree.ErrConflict) {
		t.Errorf("Create(existing id) = %v; want ErrConflict", err)
	}
	if _, err := s.Create(ctx, store.CreateOptions{Metadata: json.RawMessage(`{nope`)}); !errors.Is(err, store.ErrBadOptions) {
		t.Errorf("Create(bad metadata) = %v; want ErrBadOptions", err)
	}
	fresh := mustCreate(t, s, store.CreateOptions{})
	if len(fresh.ID()) != 36 || metaOf(t, fresh).Version != 3 {
		t.Errorf("Create() made id %q version %d; want a UUID, version 3", fresh.ID(), metaOf(t, fresh).Version)
	}
	if _, err := s.Info(ctx, "nope"); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("Info(missing) = %v; want ErrNotFound", err)
	}
}

// TestCreateNamed: a session created with a name holds one entry, a
// session_info at the root stamped with its creation time and named as
// SetName names (line breaks as spaces, trimmed), and is listed by that
// name; a name that cleans to nothing is refused (ErrBadOptions), making
// no session. A create refused
// for its id writes no name either, and says so alike on every engine.
func TestCreateNamed(t *testing.T) {
	t.Parallel()
	onEngines(t, func(t *testing.T, openStore opener) {
		ctx := context.Background()
		s := openStore(t)
		st := mustCreate(t, s, store.CreateOptions{ID: "named", Cwd: "/w", Name: " two\r\nlines "})
		entries, err := st.Log(ctx, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		created := metaOf(t, st).CreatedAt
		if len(entries) != 1 || entries[0].Type != sessiontree.TypeSessionInfo || entries[0].ParentID != "" || entries[0].Timestamp != created {
			t.Fatalf("Create(Name) entries = %+v; want one session_info at the root, stamped %s", entries, created)
		}
		if name, _ := entries[0].String("name"); name != "two lines" {
			t.Errorf("session_info name = %q; want %q", name, "two lines")
		}
		in, err := s.Info(ctx, "named")
		if err != nil || in.Name != "two lines" || in.Leaf != entries[0].ID || in.Entries != 1 || in.Messages != 0 {
			t.Errorf("Info = %+v, %v; want named \"two lines\", one entry, its leaf", in, err)
		}
		page, err := s.List(ctx, store.ListOptions{Name: "two lines"})
		if err != nil || len(page.Sessions) != 1 || page.Sessions[0].ID != "named" {
			t.Errorf("List(Name) = %+v, %v; want the named session", page.Sessions, err)
		}
		if st, err := s.Create(ctx, store.CreateOptions{ID: "blank", Cwd: "/w", Name: " \r\n\t "}); !errors.Is(err, store.ErrBadOptions) {
			t.Errorf("Create(blank Name) = %v, %v; want ErrBadOptions: a name of white space alone names nothing", st, err)
		}
		if in, err := s.Info(ctx, "blank"); !errors.Is(err, sessiontree.ErrNotFound) {
			t.Errorf("after Create(blank Name): Info = %+v, %v; want ErrNotFound, nothing made", in, err)
		}
		// The same words on every engine (sessiontree.SessionExistsError).
		if _, err := s.Create(ctx, store.CreateOptions{ID: "named", Name: "again"}); !errors.Is(err, sessiontree.ErrConflict) ||
			err.Error() != "session named already exists" {
			t.Errorf("Create(existing id, Name) = %v; want ErrConflict, %q", err, "session named already exists")
		}
		if in, err := s.Info(ctx, "named"); err != nil || in.Entries != 1 || in.Name != "two lines" {
			t.Errorf("after a refused create: Info = %+v, %v; want the session unchanged", in, err)
		}
	})
}

func TestOpenSessionByPrefix(t *testing.T) {
	t.Parallel()
	onEngines(t, testOpenSessionByPrefix)
}

func testOpenSessionByPrefix(t *testing.T, openStore opener) {
	ctx := context.Background()
	s := openStore(t)
	for _, id := range []string{"abc-1", "abc-2", "abd-1", "b"} {
		mustCreate(t, s, store.CreateOptions{ID: id})
	}
	for i := range store.MaxAmbiguousMatches + 2 {
		mustCreate(t, s, store.CreateOptions{ID: fmt.Sprintf("many-%02d", i)})
	}
	for _, tc := range []struct {
		in, want string
	}{
		{"abc-1", "abc-1"}, {"abd", "abd-1"}, {"abd-1", "abd-1"}, {"b", "b"}, {"abc-2", "abc-2"},
	} {
		st, err := s.OpenSession(ctx, tc.in)
		if err != nil {
			t.Errorf("OpenSession(%q): %v", tc.in, err)
			continue
		}
		if st.ID() != tc.want {
			t.Errorf("OpenSession(%q) = %q; want %q", tc.in, st.ID(), tc.want)
		}
	}
	_, err := s.OpenSession(ctx, "abc")
	var amb *store.AmbiguousError
	if !errors.As(err, &amb) || !errors.Is(err, store.ErrAmbiguous) {
		t.Fatalf("OpenSession(ambiguous) = %v; want an AmbiguousError", err)
	}
	if !slices.Equal(amb.Matches, []string{"abc-1", "abc-2"}) || amb.More {
		t.Errorf("AmbiguousError = %+v; want matches abc-1, abc-2", amb)
	}
	_, err = s.OpenSession(ctx, "many")
	if !errors.As(err, &amb) || len(amb.Matches) != store.MaxAmbiguousMatches || !amb.More {
		t.Errorf("OpenSession(many) = %v; want %d matches and more", err, store.MaxAmbiguousMatches)
	}
	for _, missing := range []string{"c", "abe", "", "abc-10"} {
		if _, err := s.OpenSession(ctx, missing); !errors.Is(err, sessiontree.ErrNotFound) {
			t.Errorf("OpenSession(%q) = %v; want ErrNotFound", missing, err)
		}
	}
}

// listFixture makes n sessions over three directories, updated at
// distinct or equal times after they were made, and returns their infos
// newest first.
func listFixture(t *testing.T, s *store.Store, n int) []store.SessionInfo {
	ctx := context.Background()
	later := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
	var all []store.SessionInfo
	for i := range n {
		st := mustCreate(t, s, store.CreateOptions{ID: fmt.Sprintf("s-%03d", i), Cwd: fmt.Sprintf("/work/%d", i%3)})
		b := newBuilder(t, st)
		// Sessions 10 and 11 are updated at the same instant: the tie is
		// broken by creation order.
		b.clock = later.Add(time.Duration((i*7919)%n) * time.Minute)
		if i == 11 {
			b.clock = b.clock.Add(time.Duration((10*7919)%n-(11*7919)%n) * time.Minute)
		}
		b.user(fmt.Sprintf("u%d", i), fmt.Sprintf("prompt %d", i))
		if i%4 == 0 {
			b.name(fmt.Sprintf("n%d", i), fmt.Sprintf("Name_%d 100%%", i))
		}
		in, err := s.Info(ctx, st.ID())
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, in)
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].UpdatedAt != all[j].UpdatedAt {
			return all[i].UpdatedAt > all[j].UpdatedAt
		}
		return all[i].ID > all[j].ID // ids follow creation order here
	})
	return all
}

func TestListPagingAndFilters(t *testing.T) {
	t.Parallel()
	onEngines(t, testListPagingAndFilters)
}

func testListPagingAndFilters(t *testing.T, openStore opener) {
	ctx := context.Background()
	s := openStore(t)
	all := listFixture(t, s, 23)
	collect := func(opts store.ListOptions) ([]store.SessionInfo, int) {
		var got []store.SessionInfo
		pages := 0
		for {
			p, err := s.List(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if len(p.Sessions) > opts.Limit && opts.Limit > 0 {
				t.Fatalf("List(%+v) returned %d sessions", opts, len(p.Sessions))
			}
			got = append(got, p.Sessions...)
			if p.Next == "" {
				return got, pages
			}
			opts.After = p.Next
		}
	}
	filter := func(keep func(store.SessionInfo) bool) []store.SessionInfo {
		var out []store.SessionInfo
		for _, in := range all {
			if keep(in) {
				out = append(out, in)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		opts  store.ListOptions
		want  []store.SessionInfo
		pages int
	}{
		{"all", store.ListOptions{Limit: 5}, all, 5},
		{"one page", store.ListOptions{}, all, 1},
		{"exact pages", store.ListOptions{Limit: 23}, all, 1},
		{"cwd", store.ListOptions{Cwd: "/work/1", Limit: 3}, filter(func(in store.SessionInfo) bool { return in.Cwd == "/work/1" }), 3},
		{"name", store.ListOptions{Name: "name_1", Limit: 2}, filter(func(in store.SessionInfo) bool {
			return in.Name == "Name_12 100%" || in.Name == "Name_16 100%"
		}), 1},
		{"name wildcard is literal", store.ListOptions{Name: "0%"}, filter(func(in store.SessionInfo) bool { return in.Name != "" }), 1},
		{"name underscore is literal", store.ListOptions{Name: "e_2"}, filter(func(in store.SessionInfo) bool { return in.Name == "Name_20 100%" }), 1},
		{"cwd and name", store.ListOptions{Cwd: "/work/0", Name: "NAME"}, filter(func(in store.SessionInfo) bool {
			return in.Cwd == "/work/0" && in.Name != ""
		}), 1},
		{"no match", store.ListOptions{Cwd: "/nowhere"}, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, pages := collect(tc.opts)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("List(%+v) (-want +got):\n%s", tc.opts, diff)
			}
			if pages != tc.pages {
				t.Errorf("List(%+v) took %d pages; want %d", tc.opts, pages, tc.pages)
			}
		})
	}
	if _, err := s.List(ctx, store.ListOptions{After: "!!"}); !errors.Is(err, store.ErrBadCursor) {
		t.Errorf("List(bad cursor) = %v; want ErrBadCursor", err)
	}

	// A cursor stays valid while sessions change: a session updated
	// after the first page moves to the top and is not seen again.
	p1, err := s.List(ctx, store.ListOptions{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	moved, err := s.OpenSession(ctx, all[15].ID)
	if err != nil {
		t.Fatal(err)
	}
	b := newBuilder(t, moved)
	b.clock = time.Now().Add(1000 * time.Hour)
	b.user("late", "late prompt")
	p2, err := s.List(ctx, store.ListOptions{Limit: 100, After: p1.Next})
	if err != nil {
		t.Fatal(err)
	}
	var rest []string
	for _, in := range all[10:] {
		if in.ID != moved.ID() {
			rest = append(rest, in.ID)
		}
	}
	var got []string
	for _, in := range p2.Sessions {
		got = append(got, in.ID)
	}
	if !slices.Equal(got, rest) {
		t.Errorf("second page after an update = %v; want %v", got, rest)
	}
}

func TestDelete(t *testing.T) {
	t.Parallel()
	onEngines(t, testDelete)
}

func testDelete(t *testing.T, openStore opener) {
	ctx := context.Background()
	s := openStore(t)
	dir := t.TempDir()
	copyFile(t, filepath.Join(piDir, "session-002.jsonl"), filepath.Join(dir, "a.jsonl"))
	rep := mustImport(t, s, []string{dir}, store.ImportOptions{})
	imported := rep.Files[0].SessionID
	a := mustCreate(t, s, store.CreateOptions{ID: "a"})
	newBuilder(t, a).user("u", "deletable zebra")
	mustCreate(t, s, store.CreateOptions{ID: "b"})
	mustCreate(t, s, store.CreateOptions{ID: "keep"})

	n, err := s.Delete(ctx, "a", imported, "a", "missing")
	if err != nil || n != 2 {
		t.Fatalf("Delete() = %d, %v; want 2, nil", n, err)
	}
	for _, id := range []string{"a", imported} {
		if _, err := s.OpenSession(ctx, id); !errors.Is(err, sessiontree.ErrNotFound) {
			t.Errorf("OpenSession(%s) after delete = %v; want ErrNotFound", id, err)
		}
	}
	if res, err := s.Search(ctx, "zebra", store.SearchOptions{}); err != nil || len(res.Hits) != 0 {
		t.Errorf("Search after delete = %v, %v; want no hits", res.Hits, err)
	}
	n, err = s.Delete(ctx, "a", imported)
	if err != nil || n != 0 {
		t.Errorf("Delete() again = %d, %v; want 0, nil", n, err)
	}
	// Deleting forgets the import: the file comes back.
	rep = mustImport(t, s, []string{dir}, store.ImportOptions{})
	if rep.Files[0].Outcome != store.OutcomeNew || rep.Files[0].SessionID != imported {
		t.Errorf("import after delete: %+v; want the session new again", rep.Files[0])
	}

	if _, err := s.Info(ctx, "keep"); err != nil {
		t.Errorf("Info(keep) after deleting others: %v", err)
	}
}

// TestDeleteAllOrNothing makes one session's delete fail (a trigger added
// to the SQLite file): the sessions deleted with it are kept.
func TestDeleteAllOrNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	s := openStoreAt(t, path)
	mustCreate(t, s, store.CreateOptions{ID: "b"})
	mustCreate(t, s, store.CreateOptions{ID: "keep"})
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`CREATE TRIGGER test_refuse BEFORE DELETE ON sessions WHEN OLD.id = 'keep'
BEGIN SELECT RAISE(ABORT, 'refused by test'); END`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, "b", "keep"); err == nil {
		t.Fatal("Delete() with a failing session succeeded")
	}
	if _, err := raw.Exec(`DROP TRIGGER test_refuse`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.OpenSession(ctx, "b"); err != nil {
		t.Errorf("session b after a failed Delete: %v; want it kept", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}
