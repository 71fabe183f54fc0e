package view_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/memory"
	"github.com/sessiontree/sessiontree/storetest"
	"github.com/sessiontree/sessiontree/view"
)

// TestInfoFirstMessagePages checks that LoadInfo, which reads the log a
// page at a time from the first message, finds the first user text where
// ListInfoOf over the whole log does: past the first pages, and nowhere.
func TestInfoFirstMessagePages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, before := range map[string]int{"first page": 3, "third page": 150, "none": -1} {
		t.Run(name, func(t *testing.T) {
			st, err := memory.New(sessiontree.SessionMeta{ID: "s", Version: 3, Cwd: "/x"}, memory.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
			for i := range max(before, 200) + 1 {
				msg := map[string]any{"role": "user", "content": ""} // no text: not a first message
				if i == before {
					msg["content"] = fmt.Sprintf("the first text, at %d", i)
				}
				raw, _ := json.Marshal(msg)
				if _, err := s.AppendMessage(ctx, raw); err != nil {
					t.Fatal(err)
				}
			}
			log, err := st.Log(ctx, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			info, err := view.LoadInfo(ctx, st)
			if err != nil {
				t.Fatal(err)
			}
			want := sessiontree.ListInfoOf(log)
			if info.FirstMessage != want.FirstMessage || info.MessageCount != want.MessageCount {
				t.Errorf("LoadInfo: first message %q, %d messages; want %q, %d", info.FirstMessage, info.MessageCount, want.FirstMessage, want.MessageCount)
			}
		})
	}
}

// TestInfoFromCounters holds the info of every fixture stored in the
// engine, read from its counters without the log (storetest.NoLog), to the info of
// the same file counted over its log.
func TestInfoFromCounters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	forEachStored(t, func(t *testing.T, _ string, file *jsonl.Storage, stored *engine.Storage) {
		want, err := view.LoadInfo(ctx, file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := view.LoadInfo(ctx, storetest.NoLog{SummaryStorage: stored, T: t})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("LoadInfo(engine) differs from LoadInfo(file) (-file +engine):\n%s", diff)
		}
	})
}

// TestInfoUpdatedAtOfFork: a session whose entries are older than its
// header, as a fork pi writes (createBranchedSession: a header of now,
// the entries copied), was last changed when it was made; one with an
// entry after its header, at that entry; one without entries has none.
func TestInfoUpdatedAtOfFork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	entry := func(ts string) sessiontree.Entry {
		e, err := sessiontree.DecodeEntry([]byte(`{"type":"message","id":"u1","parentId":null,"timestamp":"` + ts + `","message":{"role":"user","content":"hi"}}`))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, c := range []struct {
		entries []sessiontree.Entry
		want    any
	}{
		{[]sessiontree.Entry{entry("2026-01-02T00:00:00.000Z")}, "2026-12-01T00:00:00.000Z"},
		{[]sessiontree.Entry{entry("2026-12-02T00:00:00.000Z")}, "2026-12-02T00:00:00.000Z"},
		{nil, nil},
	} {
		st, err := memory.NewUnchecked(sessiontree.SessionMeta{ID: "f", Version: 3, CreatedAt: "2026-12-01T00:00:00.000Z"}, c.entries)
		if err != nil {
			t.Fatal(err)
		}
		info, err := view.LoadInfo(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		var got any
		if info.UpdatedAt != nil {
			got = *info.UpdatedAt
		}
		if got != c.want {
			t.Errorf("LoadInfo(%d entries).UpdatedAt = %v; want %v", len(c.entries), got, c.want)
		}
	}
}
