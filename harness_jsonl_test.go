package sessiontree_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/storetest"
)

var _ = register(backend{name: "jsonl", harness: jsonlHarness, openPi: openPiJSONL})

// jsonlHarness drives the JSONL backend through the conformance suite:
// every session is a real file, reopening closes and opens it again, and
// each test ends by re-reading the file in strict mode.
func jsonlHarness() storetest.Harness {
	return storetest.Harness{
		New: func(t testing.TB) sessiontree.Storage {
			path := filepath.Join(t.TempDir(), "session.jsonl")
			st, err := jsonl.Create(context.Background(), path, sessiontree.SessionMeta{Cwd: "/tmp/project"}, jsonl.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { checkJSONLFile(t, st) })
			return st
		},
		Reopen: func(t testing.TB, s sessiontree.Storage) sessiontree.Storage {
			t.Helper()
			path := s.(*jsonl.Storage).File()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			st, err := jsonl.Open(context.Background(), path, jsonl.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			return st
		},
		LoadUnchecked: func(t testing.TB, meta sessiontree.SessionMeta, entries []sessiontree.Entry) (sessiontree.Storage, error) {
			path := filepath.Join(t.TempDir(), "unchecked.jsonl")
			var buf bytes.Buffer
			buf.WriteString(`{"type":"session","version":3,"id":"` + meta.ID + `","timestamp":"` + meta.CreatedAt + `","cwd":"` + meta.Cwd + "\"}\n")
			for _, e := range entries {
				buf.Write(e.Raw)
				buf.WriteByte('\n')
			}
			if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			st, err := jsonl.Open(context.Background(), path, jsonl.Options{ReadOnly: true})
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { _ = st.Close() })
			return st, nil
		},
	}
}

// checkJSONLFile closes the storage and re-reads its file strictly: every
// line must parse, the tree must hold, and the file must give back the
// log the storage had.
func checkJSONLFile(t testing.TB, st *jsonl.Storage) {
	t.Helper()
	ctx := context.Background()
	want, logErr := st.Log(ctx, 0, 0)
	if err := st.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	again, err := jsonl.Open(ctx, st.File(), jsonl.Options{ReadOnly: true, Mode: jsonl.Strict})
	if err != nil {
		t.Errorf("re-reading %s strictly: %v", st.File(), err)
		return
	}
	defer again.Close()
	got, err := again.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if logErr != nil {
		return // the test reopened the storage; the file was checked above
	}
	if len(got) != len(want) {
		t.Errorf("file holds %d entries; the storage had %d", len(got), len(want))
		return
	}
	for i := range got {
		if !bytes.Equal(got[i].Raw, want[i].Raw) {
			t.Errorf("entry %d in the file = %s; the storage had %s", i+1, got[i].Raw, want[i].Raw)
		}
	}
}

// openPiJSONL opens a copy of a pi fixture for writing (the checker
// replays appends pi refused), so testdata is never written. Its cleanup
// re-parses every line of the copy.
func openPiJSONL(t testing.TB, fx storetest.PiFixture) sessiontree.Storage {
	t.Helper()
	data, err := os.ReadFile(fx.Path)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), filepath.Base(fx.Path))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := jsonl.Open(context.Background(), path, jsonl.Options{Mode: jsonl.Strict})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { checkJSONLFile(t, st) })
	return st
}
