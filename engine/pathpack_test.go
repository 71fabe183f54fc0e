package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
)

// TestLongActivePath reads an active path of several packed chunks (see
// pathpack.go) holding entries in other shapes than the engine's and ids
// holding the separator of the packed read, and checks it against the log,
// which is read row by row; then a gap in the branch is reported as
// corrupt.
func TestLongActivePath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDamaged(t)
	st := newSession(t, db)
	const n = 700
	batch := make([]sessiontree.Entry, 0, n)
	parent := "null"
	for i := range n {
		id := fmt.Sprintf("e%04d", i)
		switch i {
		case 300, 301:
			id += "\x1e" // the separator in an id
		}
		quoted := fmt.Sprintf("%q", id)
		if i == 300 || i == 301 {
			quoted = `"` + id[:len(id)-1] + `\u001e"`
		}
		raw := fmt.Sprintf(`{"type":"message","id":%s,"parentId":%s,"timestamp":"2026-03-01T10:00:00.000Z","message":{"role":"user","content":"m%d"}}`, quoted, parent, i)
		if i >= 100 && i < 110 || i == 301 {
			// Not the engine's shape: the fields come from the columns.
			raw = fmt.Sprintf(`{"id":%s,"type":"message","parentId":%s,"timestamp":"2026-03-01T10:00:00.000Z","message":{"role":"user","content":"m%d"}}`, quoted, parent, i)
		}
		e, err := sessiontree.DecodeEntry([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, e)
		parent = quoted
	}
	if err := st.AppendBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	leaf := batch[n-1].ID
	for _, read := range []func(context.Context, string) ([]sessiontree.Entry, error){st.Path, st.FullPath} {
		got, err := read(ctx, leaf)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(log, got); diff != "" {
			t.Errorf("path differs from the log (-log +path):\n%s", diff)
		}
	}
	if got, err := st.Path(ctx, batch[450].ID); err != nil || len(got) != 451 || got[450].ID != batch[450].ID {
		t.Errorf("Path(entry 451) = %d entries, %v; want 451 ending in it", len(got), err)
	}

	if _, err := rawDB(t, db.Path()).ExecContext(ctx, `DELETE FROM branch WHERE depth = 400`); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Path(ctx, leaf); !errors.Is(err, sessiontree.ErrCorrupt) {
		t.Errorf("Path with a gap in the branch = %v; want %v", err, sessiontree.ErrCorrupt)
	}
}
