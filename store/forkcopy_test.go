package store_test

import (
	"context"
	"fmt"
	"github.com/sessiontree/sessiontree/internal/testdb"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// TestForkTreeStoresWhatAppendStores holds the engine's whole-log copy
// (engine.Tx.CopyLog, which a whole-tree fork uses) to what appending the
// same log stores: every row the session owns (entries with their keys
// relative to the session, materialized branch, labels, usage by day)
// and every counter of its session row, on a generated pi session with
// branches, labels, compactions and usage. The store's cleanup then
// checks the database, the copy included.
func TestForkTreeStoresWhatAppendStores(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	// More entries than one statement of the engine's copyRows (4096)
	// copies; under -short, fewer, in one statement.
	n := 5000
	if testing.Short() {
		n = 300
	}
	meta, entries, err := genEntries(newPiGen(7), "/home/dev/copy", n, 0.15)
	if err != nil {
		t.Fatal(err)
	}
	// The generator writes no labels: label two entries, then relabel one.
	for i, target := range []int{10, 20, 10} {
		f, err := sessiontree.Fields("targetId", entries[target].ID, "label", fmt.Sprint("mark ", i))
		if err != nil {
			t.Fatal(err)
		}
		last := entries[len(entries)-1]
		e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: sessiontree.TypeLabel, Fields: f},
			fmt.Sprintf("label%03d", i), last.ID, last.Timestamp)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	appended := func(id string) string {
		st, err := s.Create(ctx, store.CreateOptions{ID: id, Cwd: meta.Cwd})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.AppendBatch(ctx, entries); err != nil {
			t.Fatal(err)
		}
		return id
	}
	src := appended("src")
	// What appending stored, read before the fork, is what the fork
	// must store: a second session appended to compare with cost a
	// third of the test.
	want := sessionRows(t, s, src)
	fork, err := s.Fork(ctx, src, store.ForkOptions{Tree: true, ID: "fork"})
	if err != nil {
		t.Fatal(err)
	}
	got := sessionRows(t, s, fork.ID())
	if len(want["entries"]) != len(entries) || len(want["labels"]) == 0 || len(want["usage_days"]) == 0 {
		t.Fatalf("generated session has %d entries, %d labels, %d usage days; want %d, some, some",
			len(want["entries"]), len(want["labels"]), len(want["usage_days"]), len(entries))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tree fork rows differ from appending the log (-append +fork):\n%s", diff)
	}
}

// sessionRows dumps what the engine keeps of session id, keys made
// relative to the session's and its last change to its creation (a
// session made after its entries' times was last changed then), one
// string per row, by table.
func sessionRows(t testing.TB, s *store.Store, id string) map[string][]string {
	t.Helper()
	queries := map[string]string{
		"session": `SELECT leaf_pk - (pk << 32), leaf_id, leaf_depth, boundary_depth, entry_count, message_count,
       user_messages, assistant_messages, tool_results, tool_calls, input_tokens, output_tokens,
       cache_read_tokens, cache_write_tokens, cost, usage_buckets, name, first_user_text,
       CASE WHEN updated_at = created_at THEN 'created_at' ELSE updated_at END,
       branch_count, root_count, compaction_count, label_count
FROM sessions WHERE pk = ?1`,
		"entries": `SELECT pk - (session << 32), seq, id, parent_id, parent_pk - (session << 32), type, timestamp,
       depth, start_depth, thinking_pk - (session << 32), model_pk - (session << 32), tools_pk - (session << 32),
       target_id, custom_type, role, raw, canonical, checksum
FROM entries WHERE session = ?1 ORDER BY pk`,
		"branch":     `SELECT depth, entry - (session << 32) FROM branch WHERE session = ?1 ORDER BY depth`,
		"labels":     `SELECT target_id, label, entry - (session << 32) FROM labels WHERE session = ?1 ORDER BY target_id`,
		"usage_days": `SELECT day, bucket, input, output, cache_read, cache_write, cost FROM usage_days WHERE session = ?1 ORDER BY day, bucket`,
	}
	out := map[string][]string{}
	err := testdb.View(context.Background(), s.Path(), func(tx *sqlx.Tx) error {
		var pk int64
		if err := tx.Get(&pk, `SELECT pk FROM sessions WHERE id = ?`, id); err != nil {
			return err
		}
		for table, q := range queries {
			rows, err := tx.Queryx(q, pk)
			if err != nil {
				return fmt.Errorf("%s: %w", table, err)
			}
			for rows.Next() {
				vals, err := rows.SliceScan()
				if err != nil {
					rows.Close()
					return err
				}
				out[table] = append(out[table], fmt.Sprintf("%q", vals))
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
