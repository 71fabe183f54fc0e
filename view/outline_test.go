package view_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/view"
)

// countingLog is an engine session that counts the entries its log reads
// return.
type countingLog struct {
	*engine.Storage
	read int
}

func (s *countingLog) Log(ctx context.Context, after int64, limit int) ([]sessiontree.Entry, error) {
	list, err := s.Storage.Log(ctx, after, limit)
	s.read += len(list)
	return list, err
}

func (s *countingLog) LogHeads(context.Context) ([]sessiontree.Entry, error) {
	panic("the folded tree read the log's heads")
}

// treeText draws st's tree, folded unless all.
func treeText(t *testing.T, st sessiontree.Storage, all bool) string {
	t.Helper()
	var buf bytes.Buffer
	if err := view.WriteTree(context.Background(), &buf, st, view.TreeOptions{All: all}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestTreeFromOutline holds the folded tree drawn from the engine's
// outline to the tree drawn from the whole log of the same file, over
// every fixture, folded and with every entry.
func TestTreeFromOutline(t *testing.T) {
	t.Parallel()
	forEachStored(t, func(t *testing.T, _ string, file *jsonl.Storage, stored *engine.Storage) {
		for _, all := range []bool{false, true} {
			if diff := cmp.Diff(treeText(t, file, all), treeText(t, stored, all)); diff != "" {
				t.Errorf("tree (all: %v) from the outline differs from the tree of the log (-log +outline):\n%s", all, diff)
			}
		}
	})
}

// TestTreeFromOutlineRandom draws random sessions (long runs, forks,
// moves, new roots, labels, compactions, branch summaries, context edits)
// from the outline and from the whole log, and checks that the outline
// reads rows in proportion to the lines drawn, not to the session.
func TestTreeFromOutlineRandom(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := engine.Open(ctx, filepath.Join(t.TempDir(), "tree.db"), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			st, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/tree"})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			randomTree(t, st, rand.New(rand.NewPCG(seed, 17)), 400)
			d, err := view.LoadSessionData(ctx, st)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := view.WriteTreeData(&want, d, view.TreeOptions{}); err != nil {
				t.Fatal(err)
			}
			var all bytes.Buffer
			if err := view.WriteTreeData(&all, d, view.TreeOptions{All: true}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(all.String(), treeText(t, st, true)); diff != "" {
				t.Fatalf("tree --all from the outline differs from the tree of the log (-log +outline):\n%s", diff)
			}
			counting := &countingLog{Storage: st}
			got := treeText(t, counting, false)
			if diff := cmp.Diff(want.String(), got); diff != "" {
				t.Fatalf("tree from the outline differs from the tree of the log (-log +outline):\n%s", diff)
			}
			// Each gap read is at most foldMin-1 = 2 entries per drawn line.
			lines := bytes.Count([]byte(got), []byte("\n"))
			if counting.read > 2*lines {
				t.Errorf("the outline's tree read %d log entries for %d lines; want at most %d", counting.read, lines, 2*lines)
			}
			outline, err := st.Outline(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(outline) > 4*lines {
				t.Errorf("outline of %d entries for %d lines; want at most %d", len(outline), lines, 4*lines)
			}
		})
	}
}

// randomTree appends n random entries to st.
func randomTree(t *testing.T, st *engine.Storage, rng *rand.Rand, n int) {
	t.Helper()
	ctx := context.Background()
	var ids []string
	none := sessiontree.AppendOptions{}
	draft := func(typ sessiontree.EntryType, fields map[string]any) sessiontree.Draft {
		b, err := json.Marshal(fields)
		if err != nil {
			t.Fatal(err)
		}
		return sessiontree.Draft{Type: typ, Fields: b}
	}
	pick := func() string { return ids[rng.IntN(len(ids))] }
	for i := range n {
		var d sessiontree.Draft
		r := rng.IntN(100)
		switch {
		case len(ids) > 0 && r < 4:
			if _, err := st.SetLeaf(ctx, pick(), none); err != nil {
				t.Fatal(err)
			}
			continue
		case r < 5:
			if _, err := st.SetLeaf(ctx, "", none); err != nil {
				t.Fatal(err)
			}
			continue
		case len(ids) > 0 && r < 9:
			label := ""
			if rng.IntN(3) > 0 {
				label = fmt.Sprint("l", i)
			}
			d = draft(sessiontree.TypeLabel, map[string]any{"targetId": pick(), "label": label})
		case len(ids) > 0 && r < 11:
			d = draft(sessiontree.TypeCompaction, map[string]any{"summary": "s", "firstKeptEntryId": pick(), "tokensBefore": 1})
		case len(ids) > 0 && r < 12:
			d = draft(sessiontree.TypeBranchSummary, map[string]any{"summary": "b", "fromId": pick()})
		case len(ids) > 0 && r < 15:
			path, err := st.Path(ctx, ids[len(ids)-1])
			if err != nil || len(path) == 0 {
				continue
			}
			leaf, err := st.Leaf(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if leaf == "" {
				continue
			}
			if path, err = st.Path(ctx, leaf); err != nil || len(path) == 0 {
				continue
			}
			target := path[rng.IntN(len(path))]
			if target.Type != sessiontree.TypeMessage {
				continue
			}
			var repl any
			if rng.IntN(2) == 0 {
				repl = map[string]any{"content": "edited"}
			}
			d = draft(sessiontree.TypeContextEdit, map[string]any{"targetId": target.ID, "replacement": repl})
		default:
			d = draft(sessiontree.TypeMessage, map[string]any{"message": map[string]any{"role": "user", "content": fmt.Sprint("m", i)}})
		}
		e, err := st.Append(ctx, d, none)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
}
