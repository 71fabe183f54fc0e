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

// TestEntryWithNUL checks that an entry holding a NUL where the engine
// stores it as text of its own (its id, parent, type, timestamp, target,
// or an assistant's provider or model, the key of its usage row) is
// refused as an invalid entry naming it, by an append and by a batch:
// PostgreSQL's text cannot hold a NUL, and the server's refusal was a
// storage failure naming no entry ("invalid byte sequence for encoding
// UTF8: 0x00"). A NUL elsewhere in the JSON is stored as it came.
func TestEntryWithNUL(t *testing.T) {
	t.Parallel()
	db, _ := openDB(t)
	ctx := context.Background()
	st := newSession(t, db)
	for _, d := range []sessiontree.Draft{
		{Type: sessiontree.TypeMessage, ID: "a\x00b", Fields: json.RawMessage(`{"message":{"role":"user","content":"x"}}`)},
		{Type: "wid\x00get", Fields: json.RawMessage(`{}`)},
		{Type: sessiontree.TypeMessage, Timestamp: "2026-12-01T10:00:00.000Z\x00", Fields: json.RawMessage(`{"message":{"role":"user","content":"x"}}`)},
		{Type: sessiontree.TypeLabel, Fields: json.RawMessage(`{"targetId":"zz\u0000","label":"x"}`)},
		{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":{"role":"assistant","content":[],"provider":"p\u0000","model":"m","usage":{"input":1,"output":1,"cost":{"total":1}}}}`)},
		{Type: sessiontree.TypeUsage, Fields: json.RawMessage(`{"kind":"k","provider":"p","model":"m\u0000","usage":{"input":1,"output":1}}`)},
	} {
		e, err := st.Append(ctx, d, sessiontree.AppendOptions{})
		if !errors.Is(err, sessiontree.ErrInvalidEntry) || errors.Is(err, sessiontree.ErrStorage) || !strings.Contains(err.Error(), "NUL") {
			t.Errorf("Append(%q %s) = %v; want an invalid entry, a NUL, no storage failure", d.Type, d.Fields, err)
		}
		if e.ID != "" || e.Raw != nil {
			t.Errorf("Append(%q %s) = entry %q, %v; want the zero Entry with the error", d.Type, d.Fields, e.ID, err)
		}
	}
	good := sessiontree.Entry{Type: sessiontree.TypeMessage, ID: "a1", Timestamp: "2026-12-01T10:00:00.000Z",
		Raw: []byte(`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-12-01T10:00:00.000Z","message":{"role":"user","content":"nul \u0000 kept","timestamp":1}}`)}
	bad := sessiontree.Entry{Type: sessiontree.TypeCustom, ID: "b\x002", ParentID: "a1", Timestamp: "2026-12-01T10:00:01.000Z",
		Raw: []byte(`{"type":"custom","id":"b\u00002","parentId":"a1","timestamp":"2026-12-01T10:00:01.000Z"}`)}
	var inv *sessiontree.InvalidEntryError
	if err := st.AppendBatch(ctx, []sessiontree.Entry{good, bad}); !errors.As(err, &inv) || inv.EntryID != bad.ID ||
		errors.Is(err, sessiontree.ErrStorage) {
		t.Errorf("AppendBatch = %v; want an invalid entry naming %q, no storage failure", err, bad.ID)
	}
	if err := st.AppendBatch(ctx, []sessiontree.Entry{good}); err != nil {
		t.Errorf("AppendBatch(a NUL in a message's content) = %v; want it stored", err)
	}
	// On a session with entries the batch first looks up which of its ids
	// the session holds: the NUL must be refused before that query, which
	// the server fails naming no entry.
	if err := st.AppendBatch(ctx, []sessiontree.Entry{bad}); !errors.As(err, &inv) || inv.EntryID != bad.ID ||
		errors.Is(err, sessiontree.ErrStorage) {
		t.Errorf("AppendBatch(after an entry) = %v; want an invalid entry naming %q, no storage failure", err, bad.ID)
	}
	if log, err := st.Log(ctx, 0, 0); err != nil || len(log) != 1 || string(log[0].Raw) != string(good.Raw) {
		t.Errorf("Log = %v, %v; want the good entry alone, byte for byte", log, err)
	}
}
