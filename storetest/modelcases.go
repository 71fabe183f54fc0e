package storetest

import (
	"errors"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// Cases found by RunModel's random sequences, kept as fixed cases.

// An entry no session file can hold (a second session header, an empty
// type, id or timestamp) is refused on every backend, by a batch as by
// Append, and nothing of its batch is stored: taken, it made a JSONL file
// that the backend's own strict reader refused ("a second session
// header", `missing "type"`) and a database its Check called corrupt.
var _ = register("RefusesEntriesNoFileHolds", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	first := f.user("first")
	good := mustEntry(t, `{"type":"custom","id":"b0000001","parentId":"`+first+`","timestamp":"2026-03-01T10:00:00.000Z","customType":"x"}`)
	ba, batches := f.st.(sessiontree.BatchAppender)
	for _, bad := range []sessiontree.Entry{
		mustEntry(t, `{"type":"session","id":"b0000002","parentId":"b0000001","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/"}`),
		{Type: "", ID: "b0000003", ParentID: "b0000001", Timestamp: "2026-03-01T10:00:00.000Z",
			Raw: []byte(`{"type":"","id":"b0000003","parentId":"b0000001","timestamp":"2026-03-01T10:00:00.000Z"}`)},
		{Type: "custom", ID: "", ParentID: "b0000001", Timestamp: "2026-03-01T10:00:00.000Z",
			Raw: []byte(`{"type":"custom","id":"","parentId":"b0000001","timestamp":"2026-03-01T10:00:00.000Z"}`)},
		{Type: "custom", ID: "b0000004", ParentID: "b0000001", Timestamp: "",
			Raw: []byte(`{"type":"custom","id":"b0000004","parentId":"b0000001","timestamp":""}`)},
	} {
		if !batches {
			break
		}
		if err := ba.AppendBatch(f.ctx, []sessiontree.Entry{good, bad}); !errors.Is(err, sessiontree.ErrInvalidEntry) {
			t.Errorf("AppendBatch(%s) = %v; want ErrInvalidEntry", bad.Raw, err)
		}
	}
	if _, err := f.st.Append(f.ctx, sessiontree.Draft{Type: ""}, sessiontree.AppendOptions{}); !errors.Is(err, sessiontree.ErrInvalidEntry) {
		t.Errorf("Append(a draft without a type) = %v; want ErrInvalidEntry", err)
	}
	if log, err := f.st.Log(f.ctx, 0, 0); err != nil || len(log) != 1 {
		t.Errorf("Log = %d entries, %v; want the first alone", len(log), err)
	}
})

func mustEntry(t testing.TB, raw string) sessiontree.Entry {
	t.Helper()
	e, err := sessiontree.DecodeEntry([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return e
}
