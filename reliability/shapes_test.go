package reliability_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/view"
)

// writeShape writes a pi file of n user and assistant messages, each
// under the first (star) or under the one before (chain), and returns
// its session id.
func writeShape(t *testing.T, path string, n int, star bool) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	id := fmt.Sprintf("01a30000-0000-7000-8000-%012d", n)
	fmt.Fprintf(w, `{"type":"session","version":3,"id":%q,"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/shape"}`+"\n", id)
	for i := range n {
		parent := "null"
		switch {
		case i > 0 && star:
			parent = `"00000001"`
		case i > 0:
			parent = fmt.Sprintf(`"%08x"`, i)
		}
		role := []string{"user", "assistant"}[i%2]
		fmt.Fprintf(w, `{"type":"message","id":"%08x","parentId":%s,"timestamp":"2026-01-01T00:00:00.%03dZ","message":{"role":%q,"content":"m%d"}}`+"\n",
			i+1, parent, i%1000, role, i)
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestShapes (limits): a linear chain of 1,000,000 entries and an entry
// with 200,000 children in the full run (100,000 and 20,000 in CI's,
// 10,000 and 2,500 with -short; a sixteenth under the race detector)
// import, check, export byte for byte, draw as a tree, give their context
// and branch, and fork, with no recursion in Go over the tree's depth or
// width. A star's tree is drawn cut to a terminal's width.
func TestShapes(t *testing.T) {
	t.Parallel() // it measures neither time nor memory
	chain, star := pickSize(10_000, 100_000, 1_000_000), pickSize(2_500, 20_000, 200_000)
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, filepath.Join(dir, "sessions.db"), store.Options{})
	for _, tc := range []struct {
		name     string
		n        int
		star     bool
		path     int // entries on the leaf's path
		treeRows int // rows of the tree drawn: a folded chain; a star's root, fork and children
	}{
		{"chain", chain, false, chain, 3},
		{"star", star, true, 2, star + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, tc.name+".jsonl")
			id := writeShape(t, file, tc.n, tc.star)
			if _, err := s.Import(ctx, []string{file}, store.ImportOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := s.Check(ctx, id); err != nil {
				t.Errorf("Check: %v", err)
			}
			var out bytes.Buffer
			if err := s.Export(ctx, id, &out, store.ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			if want, _ := os.ReadFile(file); !bytes.Equal(out.Bytes(), want) {
				t.Errorf("Export wrote %d bytes; want the file's %d", out.Len(), len(want))
			}
			st, err := s.OpenSession(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			out.Reset()
			if err := view.WriteTree(ctx, &out, st, view.TreeOptions{Width: 120}); err != nil {
				t.Fatal(err)
			}
			if rows := strings.Count(out.String(), "\n"); rows != tc.treeRows {
				t.Errorf("tree: %d rows; want %d", rows, tc.treeRows)
			}
			c, err := view.LoadContextJSON(ctx, st, "", false)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Messages) != tc.path {
				t.Errorf("context: %d messages; want %d", len(c.Messages), tc.path)
			}
			branch, err := view.LoadBranch(ctx, st, "", false)
			if err != nil || len(branch) != tc.path {
				t.Errorf("branch: %d entries, %v; want %d", len(branch), err, tc.path)
			}
			fork, err := s.Fork(ctx, id, store.ForkOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer fork.Close()
			if n, err := fork.Log(ctx, 0, 0); err != nil || len(n) != tc.path {
				t.Errorf("fork: %d entries, %v; want %d", len(n), err, tc.path)
			}
		})
	}
}

// TestManySessions (limits): 10,000 sessions in one store in the full
// run (2,000 in CI's, 200 with -short; a sixteenth under the race
// detector), imported from as many files: every one is listed, a word of
// one is found in it alone, and the database checks clean.
func TestManySessions(t *testing.T) {
	t.Parallel() // it measures neither time nor memory
	n := pickSize(200, 2_000, 10_000)
	ctx := context.Background()
	dir := t.TempDir()
	files := filepath.Join(dir, "files")
	if err := os.Mkdir(files, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		id := fmt.Sprintf("01a40000-0000-7000-8000-%012d", i)
		body := fmt.Sprintf(`{"type":"session","version":3,"id":%q,"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p%d"}`+"\n"+
			`{"type":"message","id":"00000001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"word%dx"}}`+"\n",
			id, i%50, i)
		if err := os.WriteFile(filepath.Join(files, fmt.Sprintf("%05d_%s.jsonl", i, id)), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := openStore(t, filepath.Join(dir, "sessions.db"), store.Options{})
	if _, err := s.Import(ctx, []string{files}, store.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	infos, err := s.ListN(ctx, store.ListOptions{}, 0)
	if err != nil || len(infos) != n {
		t.Fatalf("ListN: %d sessions, %v; want %d", len(infos), err, n)
	}
	res, err := s.Search(ctx, fmt.Sprintf("word%dx", n-7), store.SearchOptions{})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].SessionID != fmt.Sprintf("01a40000-0000-7000-8000-%012d", n-7) {
		t.Errorf("Search: %+v, %v; want one hit, in session %d", res.Hits, err, n-7)
	}
}
