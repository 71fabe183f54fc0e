package view_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/view"
)

// logOnly hides the engine's OutlineReader: the tree is drawn from the
// whole log, as before the outline.
type logOnly struct{ sessiontree.Storage }

// BenchmarkTree draws the folded tree of linear sessions of 10k and 100k
// entries stored in the engine, from the outline and from the whole log,
// side by side: from the outline the cost does not grow with the session.
func BenchmarkTree(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10_000, 100_000} {
		db, err := engine.Open(ctx, filepath.Join(b.TempDir(), "tree.db"), engine.Options{})
		if err != nil {
			b.Fatal(err)
		}
		st, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/bench"})
		if err != nil {
			b.Fatal(err)
		}
		if err := st.AppendBatch(ctx, linearLog(b, n)); err != nil {
			b.Fatal(err)
		}
		for _, from := range []struct {
			name string
			st   sessiontree.Storage
		}{{"outline", st}, {"log", logOnly{st}}} {
			b.Run(fmt.Sprintf("n=%d/from=%s", n, from.name), func(b *testing.B) {
				for b.Loop() {
					if err := view.WriteTree(ctx, io.Discard, from.st, view.TreeOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		db.Close()
	}
}
