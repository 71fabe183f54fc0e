package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestDeepJSON: SQLite's JSON functions (the search index reads every
// message) refuse documents nested more than 1000 deep. Such an entry is
// refused as invalid before it reaches SQL (by Append, and by DecodeEntry
// for AppendBatch), instead of failing inside the insert as "malformed
// JSON"; one at the limit is stored and read back whole (issue 8).
func TestDeepJSON(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	st := newSession(t, db)
	// The entry object and its message are two levels; details adds n.
	message := func(n int) json.RawMessage {
		return json.RawMessage(`{"message":{"role":"user","content":"deep","details":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}`)
	}
	e, err := st.Append(ctx, sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: message(998)}, sessiontree.AppendOptions{})
	if err != nil {
		t.Fatalf("Append(1000 levels) = %v; want it stored", err)
	}
	got, err := st.Entry(ctx, e.ID)
	if err != nil || string(got.Raw) != string(e.Raw) {
		t.Fatalf("Entry(%s) = %v; want it back whole", e.ID, err)
	}
	_, err = st.Append(ctx, sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: message(999)}, sessiontree.AppendOptions{})
	if !errors.Is(err, sessiontree.ErrInvalidEntry) {
		t.Errorf("Append(1001 levels) = %v; want ErrInvalidEntry", err)
	}
	// Batches come from DecodeEntry (the import's reader), which refuses
	// the same.
	raw := `{"type":"message","id":"dddddddd","parentId":"` + e.ID + `","timestamp":"2026-01-01T00:00:00.000Z",` + string(message(999))[1:]
	if _, err := sessiontree.DecodeEntry([]byte(raw)); !errors.Is(err, sessiontree.ErrInvalidEntry) {
		t.Errorf("DecodeEntry(1001 levels) = %v; want ErrInvalidEntry", err)
	}
}
