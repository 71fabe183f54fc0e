package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// batchChain returns n messages in a chain under parent, ids prefix0000...
func batchChain(t *testing.T, prefix, parent string, n int) []sessiontree.Entry {
	t.Helper()
	out := make([]sessiontree.Entry, 0, n)
	for i := range n {
		id := fmt.Sprintf("%s%04d", prefix, i)
		d := sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":` + string(userMsg(id)) + `}`)}
		e, err := sessiontree.BuildEntry(d, id, parent, "2026-03-01T10:00:00.000Z")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
		parent = id
	}
	return out
}

// labelWithoutTarget is an invalid entry: a label needs a targetId.
func labelWithoutTarget(id, parent string) sessiontree.Entry {
	p := `null`
	if parent != "" {
		p = `"` + parent + `"`
	}
	const ts = "2026-03-01T10:00:00.000Z"
	raw := `{"type":"label","id":"` + id + `","parentId":` + p + `,"timestamp":"` + ts + `"}`
	return sessiontree.Entry{Type: sessiontree.TypeLabel, ID: id, ParentID: parent, Timestamp: ts, Raw: json.RawMessage(raw)}
}

// relinked rebuilds e with another id or parent ("": keep e's).
func relinked(t *testing.T, e sessiontree.Entry, id, parent string) sessiontree.Entry {
	t.Helper()
	if id == "" {
		id = e.ID
	}
	if parent == "" {
		parent = e.ParentID
	}
	msg, _ := e.Field("message")
	d := sessiontree.Draft{Type: e.Type, Fields: json.RawMessage(`{"message":` + string(msg) + `}`)}
	out, err := sessiontree.BuildEntry(d, id, parent, e.Timestamp)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLargeBatchRefusals checks batches of several thousand entries, whose
// entries are validated while earlier ones are being written: an invalid
// entry anywhere is reported (before any other problem, naming it), and a
// refused batch keeps nothing, alone or in a caller's transaction, which
// can go on and commit.
func TestLargeBatchRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	st := newSession(t, db)
	if err := st.AppendBatch(ctx, batchChain(t, "a", "", 2)); err != nil {
		t.Fatal(err)
	}
	const n = 3000
	invalidAt := func(i int) []sessiontree.Entry {
		b := batchChain(t, "x", "a0001", n)
		b[i] = labelWithoutTarget(b[i].ID, b[i].ParentID)
		return b
	}
	dupEarlyInvalidLate := invalidAt(n - 1)
	dupEarlyInvalidLate[5] = relinked(t, dupEarlyInvalidLate[5], "a0000", "") // stored already, and entry 7 loses its parent
	missingParent := batchChain(t, "x", "a0001", n)
	missingParent[n-10] = relinked(t, missingParent[n-10], "", "nowhere")
	tests := []struct {
		name  string
		batch []sessiontree.Entry
		want  error
		entry int // the entry the error names
	}{
		{"invalid first", invalidAt(0), sessiontree.ErrInvalidEntry, 1},
		{"invalid in a later chunk", invalidAt(n / 2), sessiontree.ErrInvalidEntry, n/2 + 1},
		{"invalid last", invalidAt(n - 1), sessiontree.ErrInvalidEntry, n},
		{"invalid after refused entries", dupEarlyInvalidLate, sessiontree.ErrInvalidEntry, n},
		{"missing parent late", missingParent, sessiontree.ErrNotFound, n - 9},
	}
	for _, tt := range tests {
		check := func(how string, err error, st *engine.Storage, want int) {
			t.Helper()
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), fmt.Sprintf("entry %d:", tt.entry)) {
				t.Errorf("%s(%s) = %v; want %v naming entry %d", how, tt.name, err, tt.want, tt.entry)
			}
			if log, _ := st.Log(ctx, 0, 0); len(log) != want {
				t.Errorf("after %s(%s) the log has %d entries; want %d", how, tt.name, len(log), want)
			}
		}
		check("AppendBatch", st.AppendBatch(ctx, tt.batch), st, 2)

		inTx := newSession(t, db)
		var batchErr error
		err := db.Update(ctx, func(tx *engine.Tx) error {
			if err := tx.AppendBatch(inTx, batchChain(t, "a", "", 2)); err != nil {
				return err
			}
			batchErr = tx.AppendBatch(inTx, tt.batch)
			// The transaction goes on and commits: what the refused
			// batch wrote must be gone.
			return tx.AppendBatch(inTx, batchChain(t, "ok", "a0001", 1))
		})
		if err != nil {
			t.Fatal(err)
		}
		check("Tx.AppendBatch", batchErr, inTx, 3)
		if leaf, err := inTx.Leaf(ctx); err != nil || leaf != "ok0000" {
			t.Errorf("after Tx.AppendBatch(%s) the leaf is %q, %v; want ok0000", tt.name, leaf, err)
		}
	}
}
