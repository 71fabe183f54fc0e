package store_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/canceltest"
	"github.com/sessiontree/sessiontree/internal/testdb"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/storetest"
)

// cancelPoints bounds how many points of an operation a sweep cancels
// at: every one of a fixture's operation without -short (a few hundred
// each), a spread of them with it.
func cancelPoints() int {
	if testing.Short() || storetest.RaceEnabled {
		return 6
	}
	return 400
}

// cancelFixtures are the pi files the sweeps work on: branches, labels,
// compactions, a version-1 file.
func cancelFixtures(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, fx := range storetest.PiFixtures(t, piDir) {
		switch fx.Name {
		case "legacy-v1-compaction", "session-002", "session-003", "session-010":
			out = append(out, fx.Path)
		}
	}
	if len(out) != 4 {
		t.Fatalf("cancel fixtures: found %d of 4", len(out))
	}
	return out
}

// importedStore is a database holding cancelFixtures, imported and not
// yet indexed for search, made once per test binary.
var importedStore = testdb.New(func(ctx context.Context, path string) error {
	s, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		return err
	}
	_, ierr := s.Import(ctx, cancelFixtures(&testing.T{}), store.ImportOptions{})
	return errors.Join(ierr, s.Close())
})

// storeContent returns every session of s as its export, by id.
func storeContent(t testing.TB, s *store.Store) map[string]string {
	t.Helper()
	ctx := context.Background()
	infos, err := s.ListN(ctx, store.ListOptions{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, info := range infos {
		var b bytes.Buffer
		if err := s.Export(ctx, info.ID, &b, store.ExportOptions{}); err != nil {
			t.Fatal(err)
		}
		out[info.ID] = b.String()
	}
	return out
}

// freshRun runs op on a new copy of the database made by tmpl, opened in
// a new folder and closed again: the goroutines and files op started
// must be gone then, and the database must pass Check. check, called
// while the store is open, checks what op left.
func freshRun(t *testing.T, tmpl *testdb.Template, op func(ctx context.Context, s *store.Store) error,
	check func(s *store.Store, err error)) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		before := canceltest.Take()
		path := filepath.Join(t.TempDir(), "sessions.db")
		tmpl.CopyTo(t, path)
		s, err := store.Open(context.Background(), path, afterTestCheck)
		if err != nil {
			t.Fatal(err)
		}
		err = op(ctx, s)
		check(s, err)
		if cerr := s.Check(context.Background(), ""); cerr != nil {
			t.Errorf("Check after a run that returned %v: %v", err, cerr)
		}
		if cerr := s.Close(); cerr != nil {
			t.Fatal(cerr)
		}
		before.Settled(t, "after a run and Close")
		return err
	}
}

// checkCut checks the database a write cut short by err left: what it
// committed before is whole.
func checkCut(t *testing.T, s *store.Store, err error) {
	t.Helper()
	if cerr := s.Check(context.Background(), ""); cerr != nil {
		t.Errorf("Check after a run that returned %v: %v", err, cerr)
	}
}

// TestCancelImport cancels a folder import at every point it checks its
// context: the import answers the context's error, the reader goroutine
// ends with it, and an import run again afterwards leaves the store as
// an uncancelled import does. The import runs as it does by default, with
// files cut into chunks of a few entries (two passes, the first run ahead
// by the reader goroutine, a commit per chunk), and each file alone.
func TestCancelImport(t *testing.T) {
	files := cancelFixtures(t)
	for _, tc := range []struct {
		name string
		opts store.ImportOptions
	}{
		{"default", store.ImportOptions{}},
		{"chunks", store.WithAppendBatch(store.WithImportChunk(store.WithImportChunkBytes(store.ImportOptions{}, 4096), 7), 3)},
		{"alone", store.WithoutGroups(store.ImportOptions{})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.name != "chunks" {
				t.Skip("the chunks' paths are the others' and more: without -short")
			}
			var want firstRun[map[string]string]
			canceltest.Sweep(t, cancelPoints(), freshRun(t, emptyStore,
				func(ctx context.Context, s *store.Store) error {
					_, err := s.Import(ctx, files, tc.opts)
					return err
				},
				func(s *store.Store, err error) {
					if err != nil {
						checkCut(t, s, err)
						if _, err := s.Import(context.Background(), files, tc.opts); err != nil {
							t.Fatalf("import again: %v", err)
						}
					}
					want.check(t, storeContent(t, s), "store after a cancelled import and another")
				}), func(int64, error) {})
		})
	}
}

// firstRun is what an operation's first run (the uncancelled one of a
// sweep) left, which every later run must leave too.
type firstRun[T any] struct {
	v   T
	set bool
}

// check takes got as the first run's, or compares it with it.
func (f *firstRun[T]) check(t *testing.T, got T, what string) {
	t.Helper()
	if !f.set {
		f.v, f.set = got, true
		return
	}
	if diff := cmp.Diff(f.v, got); diff != "" {
		t.Errorf("%s (-uncancelled +got):\n%s", what, diff)
	}
}

// TestCancelPush cancels a push into an empty store at every point it
// checks its context: a push run again then leaves the target as an
// uncancelled push does, with the source's sessions.
func TestCancelPush(t *testing.T) {
	from := openStore(t)
	mustImport(t, from, cancelFixtures(t), store.ImportOptions{})
	want := storeContent(t, from)
	canceltest.Sweep(t, cancelPoints(), freshRun(t, emptyStore,
		func(ctx context.Context, to *store.Store) error {
			_, err := store.Push(ctx, from, to, store.PushOptions{BatchEntries: 7})
			return err
		},
		func(to *store.Store, err error) {
			if err != nil {
				checkCut(t, to, err)
				if _, err := store.Push(context.Background(), from, to, store.PushOptions{}); err != nil {
					t.Fatalf("push again: %v", err)
				}
			}
			if diff := cmp.Diff(want, storeContent(t, to)); diff != "" {
				t.Errorf("target after a cancelled push and another (-source +target):\n%s", diff)
			}
		}), func(int64, error) {})
}

// TestCancelIndex cancels the search index's catch-up (Index, and a
// Search, which catches it up first) at every point they check their
// context: the index then catches up with the rest, and a search finds
// what it finds after an uncancelled catch-up.
func TestCancelIndex(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   func(ctx context.Context, s *store.Store) error
	}{
		{"index", func(ctx context.Context, s *store.Store) error {
			_, err := s.Index(ctx, store.IndexOptions{})
			return err
		}},
		{"search", func(ctx context.Context, s *store.Store) error {
			_, err := s.Search(ctx, "the", store.SearchOptions{})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want firstRun[[]string]
			canceltest.Sweep(t, cancelPoints(), freshRun(t, importedStore, tc.op,
				func(s *store.Store, _ error) {
					res, err := s.Search(context.Background(), "the", store.SearchOptions{Limit: store.MaxSearchLimit})
					if err != nil {
						t.Fatal(err)
					}
					var got []string
					for _, h := range res.Hits {
						got = append(got, h.SessionID+" "+h.EntryID)
					}
					want.check(t, got, "search after a cancelled catch-up")
				}), func(int64, error) {})
		})
	}
}

// TestCancelFork cancels a fork (of a path, of the whole tree) and a
// delete of the largest session at every point they check their context:
// a cancelled one leaves the sessions there were as they were; one that
// completes adds a session, or removes it.
func TestCancelFork(t *testing.T) {
	for _, tc := range []struct {
		name  string
		added int // sessions a run that completes adds
		op    func(ctx context.Context, s *store.Store, id string) error
	}{
		{"fork path", 1, func(ctx context.Context, s *store.Store, id string) error {
			_, err := s.Fork(ctx, id, store.ForkOptions{})
			return err
		}},
		{"fork tree", 1, func(ctx context.Context, s *store.Store, id string) error {
			_, err := s.Fork(ctx, id, store.ForkOptions{Tree: true})
			return err
		}},
		{"delete", -1, func(ctx context.Context, s *store.Store, id string) error {
			_, err := s.Delete(ctx, id)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want map[string]string
			canceltest.Sweep(t, cancelPoints(), freshRun(t, importedStore,
				func(ctx context.Context, s *store.Store) error {
					if want == nil {
						want = storeContent(t, s)
					}
					return tc.op(ctx, s, largestSession(t, s))
				},
				func(s *store.Store, err error) {
					got := storeContent(t, s)
					if err == nil {
						if len(got) != len(want)+tc.added {
							t.Errorf("after a %s: %d sessions; want %d", tc.name, len(got), len(want)+tc.added)
						}
						return
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("store after a cancelled %s (-before +after):\n%s", tc.name, diff)
					}
				}), func(int64, error) {})
		})
	}
}

// largestSession returns the id of the largest session of s.
func largestSession(t testing.TB, s *store.Store) string {
	t.Helper()
	infos, err := s.ListN(context.Background(), store.ListOptions{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	best := infos[0]
	for _, info := range infos {
		if info.Entries > best.Entries {
			best = info
		}
	}
	return best.ID
}

// TestCancelExportCheck cancels an export (to a writer, to a file) and a
// check (of a session, of the database) at every point they check their
// context, on one store: a cancelled export to a file leaves the file as
// it was and no temporary file, an export that completes writes what an
// uncancelled one does, and nothing they started is left running.
func TestCancelExportCheck(t *testing.T) {
	s := openStore(t)
	mustImport(t, s, cancelFixtures(t), store.ImportOptions{})
	ctx := context.Background()
	id := largestSession(t, s)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	const old = "what was there\n"
	var want bytes.Buffer
	if err := s.Export(ctx, id, &want, store.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		op    func(ctx context.Context) error
		after func(err error)
	}{
		{"export", func(ctx context.Context) error {
			var b bytes.Buffer
			err := s.Export(ctx, id, &b, store.ExportOptions{})
			if err == nil && b.String() != want.String() {
				t.Errorf("Export wrote %d bytes; want the %d of an uncancelled export", b.Len(), want.Len())
			}
			return err
		}, nil},
		{"export file", func(ctx context.Context) error {
			if err := os.WriteFile(out, []byte(old), 0o600); err != nil {
				t.Fatal(err)
			}
			return s.ExportFile(ctx, id, out, store.ExportOptions{})
		}, func(err error) {
			wantFile := want.String()
			if err != nil {
				wantFile = old
			}
			got, rerr := os.ReadFile(out)
			if rerr != nil || string(got) != wantFile {
				t.Errorf("after ExportFile = %v, the file holds %d bytes (%v); want %d", err, len(got), rerr, len(wantFile))
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("after ExportFile = %v, the folder holds %d files; want 1", err, len(ents))
			}
		}},
		{"check session", func(ctx context.Context) error { return s.Check(ctx, id) }, nil},
		{"check database", func(ctx context.Context) error { return s.Check(ctx, "") }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var warm canceltest.Resources
			canceltest.Sweep(t, cancelPoints(), tc.op, func(k int64, err error) {
				if k == 0 {
					warm = canceltest.Take()
				} else {
					warm.Settled(t, tc.name)
				}
				if tc.after != nil {
					tc.after(err)
				}
			})
		})
	}
}

// TestCancelPostgres cancels the PostgreSQL engine's long operations at
// every point they check their context (a spread of them): a fork of a
// path and of the whole tree, an export, a check of a session and of the
// database, a push from SQLite into a new database. A cancelled fork or
// push leaves nothing partial (no session; a push run again completes
// it), and nothing started is left running.
func TestCancelPostgres(t *testing.T) {
	s := openPostgresStore(t)
	mustImport(t, s, cancelFixtures(t), store.ImportOptions{})
	ctx := context.Background()
	id := largestSession(t, s)
	want := storeContent(t, s)
	sessions := len(want)
	fork := func(tree bool) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := s.Fork(ctx, id, store.ForkOptions{Tree: tree})
			if err == nil {
				sessions++
			}
			return err
		}
	}
	for _, tc := range []struct {
		name string
		op   func(ctx context.Context) error
	}{
		{"fork path", fork(false)},
		{"fork tree", fork(true)},
		{"export", func(ctx context.Context) error { return s.Export(ctx, id, io.Discard, store.ExportOptions{}) }},
		{"check session", func(ctx context.Context) error { return s.Check(ctx, id) }},
		{"check database", func(ctx context.Context) error { return s.Check(ctx, "") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var warm canceltest.Resources
			canceltest.Sweep(t, pgCancelPoints(), tc.op, func(k int64, err error) {
				if k == 0 {
					warm = canceltest.Take()
				} else {
					warm.Settled(t, tc.name)
				}
				n, lerr := s.ListN(ctx, store.ListOptions{}, 0)
				if errors.Is(err, sessiontree.ErrCommitUnknown) && len(n) == sessions+1 {
					sessions++ // cancelled while its COMMIT was on its way: it may have landed
				}
				if lerr != nil || len(n) != sessions {
					t.Errorf("after a run that returned %v: %d sessions (%v); want %d", err, len(n), lerr, sessions)
				}
			})
		})
	}
	// Writes into a new database each run: a push from SQLite, an import
	// with its search index's catch-up.
	from := openStore(t)
	mustImport(t, from, cancelFixtures(t), store.ImportOptions{})
	for _, tc := range []struct {
		name string
		op   func(ctx context.Context, to *store.Store) error
	}{
		{"push", func(ctx context.Context, to *store.Store) error {
			_, err := store.Push(ctx, from, to, store.PushOptions{BatchEntries: 7})
			return err
		}},
		{"import", func(ctx context.Context, to *store.Store) error {
			_, err := to.Import(ctx, cancelFixtures(t), store.ImportOptions{})
			if err == nil {
				_, err = to.Index(ctx, store.IndexOptions{})
			}
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() {
				t.Skip("a database made per run: without -short")
			}
			canceltest.Sweep(t, pgCancelPoints(), func(ctx context.Context) (err error) {
				// Each run is a subtest, so that its database goes back
				// to pgtest when the run ends and the next run gets it
				// reset: a new copy for every run (CREATE DATABASE)
				// took most of this test's time, 1.5 s each at load 12.
				t.Run("run", func(t *testing.T) {
					before := canceltest.Take()
					to := openPostgresStore(t)
					err = tc.op(ctx, to)
					if err != nil {
						checkCut(t, to, err)
						if err := tc.op(context.Background(), to); err != nil {
							t.Fatalf("%s again: %v", tc.name, err)
						}
					}
					if diff := cmp.Diff(want, storeContent(t, to)); diff != "" {
						t.Errorf("target after a %s that returned %v, and another (-source +target):\n%s", tc.name, err, diff)
					}
					if cerr := to.Close(); cerr != nil {
						t.Fatal(cerr)
					}
					before.Settled(t, "after a "+tc.name+" and Close")
				})
				return err
			}, func(int64, error) {})
		})
	}
}

// pgCancelPoints is cancelPoints for PostgreSQL, whose runs cost round
// trips.
func pgCancelPoints() int { return min(cancelPoints(), 60) }
