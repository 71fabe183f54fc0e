package view_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/memory"
	"github.com/sessiontree/sessiontree/view"
)

// TestInfoFirstMessagePages checks that LoadInfo, which reads the log a
// page at a time from the first message, finds the first user text where
// ListInfoOf over the whole log does: past the first pages, and nowhere.
func TestInfoFirstMessagePages(t *testing.T) {
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
