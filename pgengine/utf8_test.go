package pgengine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestEntryNotUTF8 checks that an entry whose JSON is not UTF-8 (kept
// byte for byte from a pi file, testdata/piedge/invalid-utf8) is refused
// as an invalid entry naming it, by a batch (an import, a push) and by an
// append: PostgreSQL's text cannot hold it, and the server's refusal was a
// storage failure, which callers take for the server being away (the
// watch imports such a file again at every rescan) and which named no
// entry.
func TestEntryNotUTF8(t *testing.T) {
	t.Parallel()
	db, _ := openDB(t)
	ctx := context.Background()
	st := newSession(t, db)
	good := sessiontree.Entry{Type: sessiontree.TypeMessage, ID: "a1", Timestamp: "2026-12-01T10:00:00.000Z",
		Raw: []byte(`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-12-01T10:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1}}`)}
	bad := sessiontree.Entry{Type: sessiontree.TypeMessage, ID: "b2", ParentID: "a1", Timestamp: "2026-12-01T10:00:01.000Z",
		Raw: []byte("{\"type\":\"message\",\"id\":\"b2\",\"parentId\":\"a1\",\"timestamp\":\"2026-12-01T10:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"bad \xff\xc3 end\",\"timestamp\":2}}")}
	err := st.AppendBatch(ctx, []sessiontree.Entry{good, bad})
	var inv *sessiontree.InvalidEntryError
	if !errors.As(err, &inv) || inv.EntryID != "b2" || errors.Is(err, sessiontree.ErrStorage) || !strings.Contains(err.Error(), "UTF-8") {
		t.Fatalf("AppendBatch = %v; want an invalid entry b2, not UTF-8, and no storage failure", err)
	}
	if n, err := st.Log(ctx, 0, 10); err != nil || len(n) != 0 {
		t.Fatalf("after the refused batch the log holds %d entries (%v); want none", len(n), err)
	}
	_, err = st.Append(ctx, sessiontree.Draft{Type: sessiontree.TypeCustom, Fields: json.RawMessage("{\"customType\":\"x\",\"data\":\"\xff\"}")}, sessiontree.AppendOptions{})
	if !errors.Is(err, sessiontree.ErrInvalidEntry) || errors.Is(err, sessiontree.ErrStorage) {
		t.Fatalf("Append of a draft not UTF-8 = %v; want an invalid entry, no storage failure", err)
	}
}
