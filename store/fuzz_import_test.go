package store_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
)

// FuzzImportFile imports arbitrary files into a store, in each mode, seeded with the heads of pi files. The import agrees with the
// JSONL reader in the same mode: a file the reader refuses fails with a
// *jsonl.LineError naming the file and a line; a file it reads becomes
// a session of the same entries, byte for byte, with the same leaf and
// header fields, which exports to a file the reader reads as the same
// again.
func FuzzImportFile(f *testing.F) {
	for _, name := range []string{"pi/legacy-v1-compaction", "pi/legacy-v2-hookmessage", "pi1/edited-00",
		"piedge/torn-tail", "piedge/bad-middle-line", "piedge/dup-id"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", name+".jsonl"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(head(data, 12), uint8(0))
	}
	// One store for every input, each session deleted after its checks
	// (a new store each took seconds under the fuzzer's coverage); the
	// store is checked whole at the end (openStore).
	s := openStore(f)
	f.Fuzz(func(t *testing.T, data []byte, m uint8) {
		mode := []jsonl.Mode{jsonl.Recover, jsonl.Lenient, jsonl.Strict}[m%3]
		path := filepath.Join(t.TempDir(), "f.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		rep, err := s.Import(t.Context(), []string{path}, store.ImportOptions{Mode: mode})
		if err != nil || len(rep.Files) != 1 {
			t.Fatalf("Import(%v) = %+v, %v; want one file's result", mode, rep, err)
		}
		res := rep.Files[0]
		want, rerr := readFile(t.Context(), path, mode)
		var le *jsonl.LineError
		switch {
		case res.Outcome == store.OutcomeFailed && (!errors.As(res.Err, &le) || le.Line < 1 || !strings.Contains(res.Err.Error(), path)):
			t.Fatalf("Import(%v) failed with %v; want a *jsonl.LineError naming %s and a line", mode, res.Err, path)
		case res.Outcome == store.OutcomeFailed && rerr == nil:
			t.Fatalf("Import(%v) failed with %v; the reader reads the file", mode, res.Err)
		case res.Outcome == store.OutcomeFailed:
			return
		case res.Outcome != store.OutcomeNew || rerr != nil:
			t.Fatalf("Import(%v) = %v, %v; the reader says %v", mode, res.Outcome, res.Err, rerr)
		}
		defer func() {
			if _, err := s.Delete(context.Background(), res.SessionID); err != nil {
				t.Fatalf("Delete: %v", err)
			}
		}()
		if err := s.Check(t.Context(), res.SessionID); err != nil {
			t.Fatalf("Check of the imported session: %v", err)
		}
		st, err := s.OpenSession(t.Context(), res.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(raws(want.log), raws(logOf(t, st))); diff != "" {
			t.Fatalf("imported entries differ from the reader's (-read +imported):\n%s", diff)
		}
		meta, err := st.Meta(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := st.Leaf(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if got := (read{meta: headerFields(meta), leaf: leaf}); got.meta != want.meta || got.leaf != want.leaf {
			t.Fatalf("imported session has header %+v, leaf %q; the reader says %+v, %q", got.meta, got.leaf, want.meta, want.leaf)
		}
		out := filepath.Join(t.TempDir(), "out.jsonl")
		if err := s.ExportFile(t.Context(), res.SessionID, out, store.ExportOptions{}); err != nil {
			t.Fatal(err)
		}
		again, err := readFile(t.Context(), out, jsonl.Strict)
		if err != nil {
			t.Fatalf("the export does not read back: %v", err)
		}
		if again.meta != want.meta || again.leaf != want.leaf {
			t.Fatalf("the export reads back as header %+v, leaf %q; want %+v, %q", again.meta, again.leaf, want.meta, want.leaf)
		}
		if diff := cmp.Diff(raws(want.log), raws(again.log)); diff != "" {
			t.Fatalf("exported entries differ (-read +exported):\n%s", diff)
		}
	})
}

// head returns the first n lines of data.
func head(data []byte, n int) []byte {
	for i, k := 0, 0; i < len(data); i++ {
		if data[i] == '\n' {
			if k++; k == n {
				return data[:i+1]
			}
		}
	}
	return data
}

// read is what the JSONL reader reads of a file.
type read struct {
	meta sessiontree.SessionMeta // headerFields
	log  []sessiontree.Entry
	leaf string
}

// headerFields is the part of a session's meta that comes from a file's
// header and survives an import and an export.
func headerFields(m sessiontree.SessionMeta) sessiontree.SessionMeta {
	return sessiontree.SessionMeta{ID: m.ID, CreatedAt: m.CreatedAt, Cwd: m.Cwd, ParentSession: m.ParentSession}
}

// readFile reads a file with the JSONL reader in mode.
func readFile(ctx context.Context, path string, mode jsonl.Mode) (read, error) {
	st, err := jsonl.Open(ctx, path, jsonl.Options{ReadOnly: true, Mode: mode})
	if err != nil {
		return read{}, err
	}
	defer st.Close()
	r := read{meta: headerFields(st.Header().SessionMeta)}
	if r.log, err = st.Log(ctx, 0, 0); err != nil {
		return read{}, err
	}
	r.leaf, err = st.Leaf(ctx)
	return r, err
}

// raws returns the entries' JSON, one string each.
func raws(log []sessiontree.Entry) []string {
	out := make([]string, len(log))
	for i, e := range log {
		out[i] = string(bytes.TrimSpace(e.Raw))
	}
	return out
}
