package jsonl_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/storetest"
)

// TestCancelWrites runs storetest.RunWriteCancel on a session file: a
// batch and a move of the leaf cancelled at each point they check their
// context leave the file holding what the session holds, every line
// whole (a strict read of it agrees).
func TestCancelWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	st, err := jsonl.Create(ctx, path, sessiontree.SessionMeta{Cwd: "/w"}, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	points := 400
	if testing.Short() {
		points = 12
	}
	storetest.RunWriteCancel(t, st, func(ctx context.Context) error {
		want, err := st.Log(ctx, 0, 0)
		if err != nil {
			return err
		}
		again, err := jsonl.Open(ctx, path, jsonl.Options{Mode: jsonl.Strict, ReadOnly: true})
		if err != nil {
			return err
		}
		defer again.Close()
		got, err := again.Log(ctx, 0, 0)
		if err != nil {
			return err
		}
		if len(got) != len(want) {
			return fmt.Errorf("the file holds %d entries, the session %d", len(got), len(want))
		}
		return nil
	}, points)
}
