package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sessiontree/sessiontree"
)

func (f *fixture) wantTexts(opts sessiontree.ContextOptions, want ...string) {
	f.t.Helper()
	if diff := cmp.Diff(want, texts(f.context(opts))); diff != "" {
		f.t.Errorf("Context(%+v) messages (-want +got):\n%s", opts.From, diff)
	}
}

var _ = register("AppendAndContextOrder", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	if c := f.context(sessiontree.ContextOptions{}); len(c.Messages) != 0 || c.ThinkingLevel != "off" || c.Model != nil {
		t.Fatalf("empty session context = %+v; want no messages, thinking off, no model", c)
	}
	u1 := f.user("one")
	a1 := f.assistant("two")
	u2 := f.user("three")
	f.wantTexts(sessiontree.ContextOptions{}, "user:one", "assistant:two", "user:three")
	if got := f.path(f.s.Branch(f.ctx, "")); !cmp.Equal(got, []string{u1, a1, u2}) {
		t.Errorf("Branch() = %v; want %v", got, []string{u1, a1, u2})
	}
	e := f.ok(f.st.Entry(f.ctx, a1))
	if e.ParentID != u1 || e.Type != sessiontree.TypeMessage {
		t.Errorf("Entry(%q) = parent %q type %q; want parent %q type message", a1, e.ParentID, e.Type, u1)
	}
	if leaf, _ := f.st.Leaf(f.ctx); leaf != u2 {
		t.Errorf("Leaf() = %q; want %q", leaf, u2)
	}
})

var idPattern = regexp.MustCompile(`^[0-9a-f]{8}$`)

var _ = register("EntryIDsAndTimestamps", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	seen := map[string]bool{}
	for range 50 {
		e := f.ok(f.s.AppendThinkingLevel(f.ctx, "low"))
		if !idPattern.MatchString(e.ID) || seen[e.ID] {
			t.Fatalf("entry id %q: want 8 lowercase hex characters, unused", e.ID)
		}
		seen[e.ID] = true
		if _, err := time.Parse(sessiontree.TimeLayout, e.Timestamp); err != nil {
			t.Fatalf("timestamp %q: %v", e.Timestamp, err)
		}
	}
	id, err := f.st.NewEntryID(f.ctx)
	if err != nil || !idPattern.MatchString(id) || seen[id] {
		t.Errorf("NewEntryID() = %q, %v; want a fresh 8-hex id", id, err)
	}
	meta, err := f.st.Meta(f.ctx)
	if err != nil || meta.ID == "" {
		t.Fatalf("Meta() = %+v, %v", meta, err)
	}
})

var _ = register("DraftWithOwnIDAndDuplicate", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	d := sessiontree.Draft{Type: sessiontree.TypeCustom, ID: "feedc0de0001", Timestamp: "2026-01-02T03:04:05.678Z",
		Fields: json.RawMessage(`{"customType":"x"}`)}
	e := f.ok(f.st.Append(f.ctx, d, sessiontree.AppendOptions{}))
	if e.ID != d.ID || e.Timestamp != d.Timestamp {
		t.Errorf("Append(%+v) = %q at %q; want the draft's id and time", d, e.ID, e.Timestamp)
	}
	var taken *sessiontree.IDTakenError
	if _, err := f.st.Append(f.ctx, d, sessiontree.AppendOptions{}); !errors.Is(err, sessiontree.ErrConflict) || !errors.As(err, &taken) || taken.ID != d.ID {
		t.Errorf("Append(duplicate id) error = %v; want an IDTakenError for %s (ErrConflict)", err, d.ID)
	}
	bad := []sessiontree.Draft{
		{Type: sessiontree.TypeLeaf, Fields: json.RawMessage(`{"targetId":null}`)},
		{Type: sessiontree.TypeModelChange, Fields: json.RawMessage(`{"provider":"p"}`)},
		{Type: sessiontree.TypeCustom, Fields: json.RawMessage(`{"customType":"x","id":"zz"}`)},
		{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":`)},
	}
	for _, d := range bad {
		if _, err := f.st.Append(f.ctx, d, sessiontree.AppendOptions{}); !errors.Is(err, sessiontree.ErrInvalidEntry) {
			t.Errorf("Append(%s %s) error = %v; want ErrInvalidEntry", d.Type, d.Fields, err)
		}
	}
	if n := f.count(); n != 1 {
		t.Errorf("after refused appends the log has %d entries; want 1", n)
	}
})

func (f *fixture) count() int {
	f.t.Helper()
	log, err := f.st.Log(f.ctx, 0, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	return len(log)
}

var _ = register("LosslessEntries", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	msg := json.RawMessage(`{"role":"assistant","content":[{"type":"text","text":"x\u00e9\ud83d\ude42"}],` +
		`"provider":"p","model":"m","usage":{"input":1.0,"output":2e3,"big":12345678901234567890123,` +
		`"cost":{"total":0.10000000000000001}},"unknownField":{"nested":[1,2,{"a":null}]}}`)
	e := f.ok(f.s.AppendMessage(f.ctx, msg))
	fields := json.RawMessage(`{"customType":"k","data":{"n":1.50,"s":"<tag>&amp;"},"extra":[true,false,null]}`)
	c := f.ok(f.s.Append(f.ctx, sessiontree.TypeCustom, fields, sessiontree.AppendOptions{}))
	f.reopen()
	for _, want := range []sessiontree.Entry{e, c} {
		got := f.ok(f.st.Entry(f.ctx, want.ID))
		if string(got.Raw) != string(want.Raw) {
			t.Errorf("Entry(%q).Raw = %s; want %s", want.ID, got.Raw, want.Raw)
		}
	}
	ctx := f.context(sessiontree.ContextOptions{})
	if len(ctx.Messages) != 1 || string(ctx.Messages[0]) != string(msg) {
		t.Errorf("Context().Messages = %s; want the message unchanged: %s", ctx.Messages, msg)
	}
})

var _ = register("ModelAndThinkingTracking", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.user("hi")
	early := f.ok(f.s.AppendThinkingLevel(f.ctx, "high")).ID
	f.ok(f.s.AppendModelChange(f.ctx, "openai", "gpt-5"))
	f.ok(f.s.AppendActiveTools(f.ctx, []string{"read", "bash"}))
	c := f.context(sessiontree.ContextOptions{})
	want := sessiontree.State{ThinkingLevel: "high", Model: &sessiontree.ModelRef{Provider: "openai", ModelID: "gpt-5"}, ActiveToolNames: []string{"read", "bash"}}
	if diff := cmp.Diff(want, c.State); diff != "" {
		t.Errorf("Context().State (-want +got):\n%s", diff)
	}
	f.ok(f.s.AppendMessage(f.ctx, assistantMessage("reply", "google", "gemini")))
	if c := f.context(sessiontree.ContextOptions{}); c.Model == nil || c.Model.ModelID != "gemini" {
		t.Errorf("Context().Model = %+v; want the assistant message's model gemini", c.Model)
	}
	// A branch from before the model change does not see it.
	f.ok(f.st.SetLeaf(f.ctx, early, sessiontree.AppendOptions{}))
	f.user("on a branch")
	c = f.context(sessiontree.ContextOptions{})
	want = sessiontree.State{ThinkingLevel: "high"}
	if diff := cmp.Diff(want, c.State); diff != "" {
		t.Errorf("branch Context().State (-want +got):\n%s", diff)
	}
})

var _ = register("BranchByMovingLeaf", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	u1 := f.user("one")
	f.assistant("two")
	f.user("three")
	leafEntry := f.ok(f.st.SetLeaf(f.ctx, u1, sessiontree.AppendOptions{}))
	if leafEntry.Type != sessiontree.TypeLeaf || leafEntry.TargetID() != u1 {
		t.Errorf("SetLeaf(%q) = %s; want a leaf entry targeting it", u1, leafEntry.Raw)
	}
	alt := f.assistant("alt")
	f.wantTexts(sessiontree.ContextOptions{}, "user:one", "assistant:alt")
	if e := f.ok(f.st.Entry(f.ctx, alt)); e.ParentID != u1 {
		t.Errorf("after moving to %q the next entry's parent = %q", u1, e.ParentID)
	}
	if n := f.count(); n != 5 {
		t.Errorf("log has %d entries; want 5 (nothing truncated, leaf entry kept)", n)
	}
	if _, err := f.st.SetLeaf(f.ctx, "deadbeef", sessiontree.AppendOptions{}); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("SetLeaf(missing) error = %v; want ErrNotFound", err)
	}
	if _, err := f.s.Branch(f.ctx, "deadbeef"); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("Branch(missing) error = %v; want ErrNotFound", err)
	}
})

var _ = register("MoveToNil", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.user("one")
	f.assistant("two")
	if _, err := f.s.MoveTo(f.ctx, "", nil); err != nil {
		t.Fatal(err)
	}
	if c := f.context(sessiontree.ContextOptions{}); len(c.Messages) != 0 {
		t.Errorf("context after MoveTo(nil) has %d messages; want 0", len(c.Messages))
	}
	if leaf, _ := f.st.Leaf(f.ctx); leaf != "" {
		t.Errorf("Leaf() after MoveTo(nil) = %q; want empty", leaf)
	}
	root := f.ok(f.st.Entry(f.ctx, f.user("fresh")))
	if root.ParentID != "" {
		t.Errorf("first entry after MoveTo(nil) has parent %q; want null", root.ParentID)
	}
	f.wantTexts(sessiontree.ContextOptions{}, "user:fresh")
})

var _ = register("CompactionFirstKept", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.user("1")
	f.assistant("2")
	third := f.user("3")
	f.assistant("4")
	comp := f.ok(f.s.AppendCompaction(f.ctx, sessiontree.Compaction{Summary: "S", FirstKeptEntryID: third, TokensBefore: 1234}))
	f.user("5")
	f.wantTexts(sessiontree.ContextOptions{}, "compactionSummary:S", "user:3", "assistant:4", "user:5")
	c := f.context(sessiontree.ContextOptions{})
	tm, _ := comp.Time()
	want := mustJSON(map[string]any{"role": "compactionSummary", "summary": "S", "tokensBefore": 1234, "timestamp": tm.UnixMilli()})
	if !jsonEqual(c.Messages[0], want) {
		t.Errorf("compaction message = %s; want %s", c.Messages[0], want)
	}
	if got := f.path(f.s.Branch(f.ctx, "")); len(got) != 4 || got[0] != third {
		t.Errorf("Branch() = %v; want 4 entries from %q (cut at the compaction)", got, third)
	}
	if got := f.path(f.s.FullBranch(f.ctx, "")); len(got) != 6 {
		t.Errorf("FullBranch() = %v; want all 6 entries", got)
	}
})

var _ = register("CompactionRetainedTail", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.user("1")
	f.assistant("2")
	tail := []json.RawMessage{userMessage("kept-u"), assistantMessage("kept-a", "p", "m")}
	comp := f.ok(f.s.AppendCompaction(f.ctx, sessiontree.Compaction{Summary: "S", RetainedTail: tail, TokensBefore: 9}))
	f.user("after")
	f.wantTexts(sessiontree.ContextOptions{}, "compactionSummary:S", "user:kept-u", "assistant:kept-a", "user:after")
	if got := f.path(f.s.Branch(f.ctx, "")); len(got) != 2 || got[0] != comp.ID {
		t.Errorf("Branch() = %v; want the compaction first, then one entry", got)
	}
	both := sessiontree.Compaction{Summary: "both", FirstKeptEntryID: comp.ID, RetainedTail: tail}
	if _, err := f.s.AppendCompaction(f.ctx, both); !errors.Is(err, sessiontree.ErrInvalidEntry) {
		t.Errorf("AppendCompaction with both firstKeptEntryId and retainedTail error = %v; want ErrInvalidEntry", err)
	}
})

var _ = register("CompactionRetainNone", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.user("1")
	f.assistant("2")
	comp := f.ok(f.s.AppendCompaction(f.ctx, sessiontree.Compaction{Summary: "none kept"}))
	if keep := sessiontree.FirstKeptEntryID(comp); keep != comp.ID {
		t.Errorf("retain-none compaction firstKeptEntryId = %q; want its own id %q", keep, comp.ID)
	}
	f.user("after")
	f.wantTexts(sessiontree.ContextOptions{}, "compactionSummary:none kept", "user:after")
})

var _ = register("CompactionSystemSnapshot", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.ok(f.s.AppendMessage(f.ctx, json.RawMessage(`{"role":"system","content":"base","sections":{"a":"A","b":"B"},`+
		`"toolsAdded":[{"name":"read","description":"r1"},{"name":"bash","description":"b"}],"timestamp":5}`)))
	keep := f.user("1")
	f.ok(f.s.AppendMessage(f.ctx, json.RawMessage(`{"role":"system","content":[{"type":"text","text":"more"}],`+
		`"sections":{"a":null,"c":"C","b":"B2"},"toolsRemoved":[{"name":"bash"}],"toolsAdded":[{"name":"read","description":"r2"}],"timestamp":9}`)))
	f.assistant("2")
	comp := f.ok(f.s.AppendCompaction(f.ctx, sessiontree.Compaction{Summary: "S", FirstKeptEntryID: keep}))
	tm, _ := comp.Time()
	want := fmt.Sprintf(`{"role":"system","content":"base\n\nmore","sections":{"b":"B2","c":"C"},`+
		`"toolsAdded":[{"name":"read","description":"r2"}],"timestamp":%d}`, tm.UnixMilli())
	if got, _ := comp.Field("systemMessage"); string(got) != want {
		t.Errorf("compaction systemMessage = %s; want %s", got, want)
	}
	f.user("3")
	// The snapshot replaces the system messages of the kept range.
	f.wantTexts(sessiontree.ContextOptions{}, "system:base\n\nmore", "compactionSummary:S", "user:1", "assistant:2", "user:3")
	plain := newFixture(t, h)
	k := plain.user("x")
	if c := plain.ok(plain.s.AppendCompaction(plain.ctx, sessiontree.Compaction{Summary: "S", FirstKeptEntryID: k})); bytes.Contains(c.Raw, []byte("systemMessage")) {
		t.Errorf("compaction without system messages = %s; want no systemMessage", c.Raw)
	}
})

var _ = register("NewestCompactionOnly", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	u1 := f.user("1")
	f.ok(f.s.AppendCompaction(f.ctx, sessiontree.Compaction{Summary: "old", FirstKeptEntryID: u1}))
	u2 := f.user("2")
	f.ok(f.s.AppendCompaction(f.ctx, sessiontree.Compaction{Summary: "new", FirstKeptEntryID: u2}))
	f.user("3")
	f.wantTexts(sessiontree.ContextOptions{}, "compactionSummary:new", "user:2", "user:3")
})

var _ = register("StateHoldsAcrossCompaction", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.ok(f.s.AppendThinkingLevel(f.ctx, "medium"))
	f.ok(f.s.AppendModelChange(f.ctx, "anthropic", "opus"))
	f.user("1")
	keep := f.user("2")
	f.ok(f.s.AppendCompaction(f.ctx, sessiontree.Compaction{Summary: "S", FirstKeptEntryID: keep}))
	f.user("3")
	c := f.context(sessiontree.ContextOptions{})
	if c.ThinkingLevel != "medium" || c.Model == nil || c.Model.ModelID != "opus" {
		t.Errorf("state after compaction = %+v; want thinking medium and model opus", c.State)
	}
})

var _ = register("MoveToWithSummary", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	u1 := f.user("one")
	a1 := f.assistant("two")
	id, err := f.s.MoveTo(f.ctx, u1, &sessiontree.BranchSummary{Summary: "left it"})
	if err != nil || id == "" {
		t.Fatalf("MoveTo(%q, summary) = %q, %v", u1, id, err)
	}
	sum := f.ok(f.st.Entry(f.ctx, id))
	if from, _ := sum.String("fromId"); sum.ParentID != u1 || from != a1 || sum.Type != sessiontree.TypeBranchSummary {
		t.Errorf("summary entry = %s; want a branch_summary under %q with fromId %q", sum.Raw, u1, a1)
	}
	if leaf, _ := f.st.Leaf(f.ctx); leaf != id {
		t.Errorf("Leaf() = %q; want the summary %q", leaf, id)
	}
	u3 := f.user("three")
	f.wantTexts(sessiontree.ContextOptions{}, "user:one", "branchSummary:left it", "user:three")
	tm, _ := sum.Time()
	want := mustJSON(map[string]any{"role": "branchSummary", "summary": "left it", "fromId": a1, "timestamp": tm.UnixMilli()})
	if c := f.context(sessiontree.ContextOptions{}); !jsonEqual(c.Messages[1], want) {
		t.Errorf("branch summary message = %s; want %s", c.Messages[1], want)
	}
	id, err = f.s.MoveTo(f.ctx, "", &sessiontree.BranchSummary{Summary: "from scratch"})
	if err != nil {
		t.Fatal(err)
	}
	sum = f.ok(f.st.Entry(f.ctx, id))
	if from, _ := sum.String("fromId"); sum.ParentID != "" || from != u3 {
		t.Errorf("summary at root = %s; want parentId null and fromId %q", sum.Raw, u3)
	}
	f.wantTexts(sessiontree.ContextOptions{}, "branchSummary:from scratch")
	if _, err := f.s.MoveTo(f.ctx, "", nil); err != nil {
		t.Fatal(err)
	}
	id, err = f.s.MoveTo(f.ctx, u1, &sessiontree.BranchSummary{Summary: "from nothing"})
	if err != nil {
		t.Fatal(err)
	}
	if from, _ := f.ok(f.st.Entry(f.ctx, id)).String("fromId"); from != "root" {
		t.Errorf("summary leaving a null leaf has fromId %q; want \"root\"", from)
	}
	if _, err := f.s.MoveTo(f.ctx, "", nil); err != nil {
		t.Fatal(err)
	}
	if id, err := f.s.MoveTo(f.ctx, u1, &sessiontree.BranchSummary{}); err != nil {
		t.Fatal(err)
	} else if f.ok(f.st.Entry(f.ctx, id)).Type != sessiontree.TypeBranchSummary {
		t.Errorf("empty summary was not written")
	}
	f.wantTexts(sessiontree.ContextOptions{}, "user:one")
	// Leaving no leaf at all: fromId is "root".
	empty := newFixture(t, h)
	id, err = empty.s.MoveTo(empty.ctx, "", &sessiontree.BranchSummary{Summary: "nothing yet"})
	if err != nil {
		t.Fatal(err)
	}
	sum = empty.ok(empty.st.Entry(empty.ctx, id))
	if from, _ := sum.String("fromId"); sum.ParentID != "" || from != "root" {
		t.Errorf("summary in an empty session = %s; want parentId null and fromId \"root\"", sum.Raw)
	}
})

// A move with a summary is one write, as pi's branchWithSummary is one
// append: the branch_summary under the target, no leaf entry before it,
// so no failure (a bad summary, a moved leaf, a crash between two
// writes) can leave the leaf moved without its summary.
var _ = register("MoveToWithSummaryIsOneWrite", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	u1 := f.user("one")
	a1 := f.assistant("two")
	n := f.count()
	if _, err := f.s.MoveTo(f.ctx, u1, &sessiontree.BranchSummary{Summary: "s", Details: json.RawMessage(`{bad`)}); err == nil {
		t.Errorf("MoveTo with details that are not JSON succeeded")
	}
	if leaf, _ := f.st.Leaf(f.ctx); leaf != a1 || f.count() != n {
		t.Errorf("after a refused move with a summary: leaf %q, %d entries; want %q, %d (nothing written)", leaf, f.count(), a1, n)
	}
	id, err := f.s.MoveTo(f.ctx, u1, &sessiontree.BranchSummary{Summary: "left it"})
	if err != nil {
		t.Fatal(err)
	}
	log, err := f.st.Log(f.ctx, int64(n), 0)
	if err != nil || len(log) != 1 || log[0].ID != id || log[0].ParentID != u1 {
		t.Fatalf("log after a move with a summary = %d entries (%v); want one, the summary %s under %s", len(log), err, id, u1)
	}
	d := sessiontree.Draft{Type: sessiontree.TypeBranchSummary, Fields: json.RawMessage(`{"fromId":"x","summary":"s"}`)}
	if _, err := f.st.AppendUnder(f.ctx, u1, d, sessiontree.IfLeaf(a1)); !errors.Is(err, sessiontree.ErrConflict) {
		t.Errorf("AppendUnder guarded on a leaf that moved = %v; want ErrConflict", err)
	}
	if _, err := f.st.AppendUnder(f.ctx, "feedbeef", d, sessiontree.AppendOptions{}); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("AppendUnder a missing parent = %v; want ErrNotFound", err)
	}
	if leaf, _ := f.st.Leaf(f.ctx); leaf != id || f.count() != n+1 {
		t.Errorf("after refused AppendUnder: leaf %q, %d entries; want %q, %d", leaf, f.count(), id, n+1)
	}
	if h.Reopen != nil {
		f.reopen()
	}
	if leaf, _ := f.st.Leaf(f.ctx); leaf != id {
		t.Errorf("Leaf() after reopening = %q; want the summary %q", leaf, id)
	}
	f.user("three")
	f.wantTexts(sessiontree.ContextOptions{}, "user:one", "branchSummary:left it", "user:three")
})

var _ = register("CustomMessagesInContext", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.user("hi")
	e := f.ok(f.s.AppendCustomMessage(f.ctx, sessiontree.CustomMessage{CustomType: "reminder",
		Content: json.RawMessage(`"do the tests"`), Display: true, Details: json.RawMessage(`{"k":1}`)}))
	f.ok(f.s.AppendCustomMessage(f.ctx, sessiontree.CustomMessage{CustomType: "note",
		Content: json.RawMessage(`[{"type":"text","text":"blocks"}]`)}))
	c := f.context(sessiontree.ContextOptions{})
	tm, _ := e.Time()
	want := mustJSON(map[string]any{"role": "custom", "customType": "reminder", "content": "do the tests",
		"display": true, "details": map[string]any{"k": 1}, "timestamp": tm.UnixMilli()})
	if len(c.Messages) != 3 || !jsonEqual(c.Messages[1], want) {
		t.Fatalf("custom message = %s; want %s", c.Messages, want)
	}
	var second map[string]any
	_ = json.Unmarshal(c.Messages[2], &second)
	if _, has := second["details"]; has || second["display"] != false {
		t.Errorf("custom message without details = %s; want no details key and display false", c.Messages[2])
	}
})

var _ = register("CustomEntriesAndProjectors", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.user("hi")
	f.ok(f.s.AppendCustom(f.ctx, "todo", json.RawMessage(`{"n":1}`)))
	f.ok(f.s.AppendCustom(f.ctx, "other", nil))
	f.wantTexts(sessiontree.ContextOptions{}, "user:hi")
	todo := func(e sessiontree.Entry) ([]json.RawMessage, error) {
		return []json.RawMessage{userMessage("todo projected")}, nil
	}
	f.wantTexts(sessiontree.ContextOptions{Projectors: map[string]sessiontree.Projector{"todo": todo}}, "user:hi", "user:todo projected")
	// Per session, and a call's own projector wins.
	f.s = sessiontree.NewSession(f.st, sessiontree.SessionOptions{Projectors: map[string]sessiontree.Projector{"todo": todo}})
	f.wantTexts(sessiontree.ContextOptions{}, "user:hi", "user:todo projected")
	other := func(e sessiontree.Entry) ([]json.RawMessage, error) {
		return []json.RawMessage{userMessage("call's own")}, nil
	}
	f.wantTexts(sessiontree.ContextOptions{Projectors: map[string]sessiontree.Projector{"todo": other}}, "user:hi", "user:call's own")
	failing := func(e sessiontree.Entry) ([]json.RawMessage, error) { return nil, errors.New("boom") }
	if _, err := f.s.Context(f.ctx, sessiontree.ContextOptions{Projectors: map[string]sessiontree.Projector{"todo": failing}}); err == nil {
		t.Errorf("Context with a failing projector succeeded; want its error")
	}
})

var _ = register("EntryTransforms", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.user("a")
	f.assistant("b")
	f.user("c")
	dropAssistant := func(ctx context.Context, es []sessiontree.Entry) ([]sessiontree.Entry, error) {
		var out []sessiontree.Entry
		for _, e := range es {
			if sessiontree.MessageInfoOf(e).Role != "assistant" {
				out = append(out, e)
			}
		}
		return out, nil
	}
	lastOnly := func(ctx context.Context, es []sessiontree.Entry) ([]sessiontree.Entry, error) {
		return es[len(es)-1:], nil
	}
	f.wantTexts(sessiontree.ContextOptions{Transforms: []sessiontree.EntryTransform{dropAssistant}}, "user:a", "user:c")
	f.s = sessiontree.NewSession(f.st, sessiontree.SessionOptions{Transforms: []sessiontree.EntryTransform{dropAssistant}})
	f.wantTexts(sessiontree.ContextOptions{}, "user:a", "user:c")
	// The session's transforms run first, then the call's.
	f.wantTexts(sessiontree.ContextOptions{Transforms: []sessiontree.EntryTransform{lastOnly}}, "user:c")
	es, err := f.s.ContextEntries(f.ctx, sessiontree.ContextOptions{})
	if err != nil || len(es) != 2 {
		t.Errorf("ContextEntries() = %d entries, %v; want 2", len(es), err)
	}
})

var _ = register("LabelsAndName", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	u := f.user("one")
	a := f.assistant("two")
	f.ok(f.s.SetLabel(f.ctx, u, "  first  "))
	f.ok(f.s.SetLabel(f.ctx, a, "second"))
	f.ok(f.s.SetLabel(f.ctx, a, ""))
	f.ok(f.s.SetName(f.ctx, "  my\nsession\r\n\r\nname "))
	f.wantTexts(sessiontree.ContextOptions{}, "user:one", "assistant:two")
	// Labels are kept as written: pi does not trim them.
	want := map[string]string{u: "  first  "}
	if got, _ := f.st.Labels(f.ctx); !cmp.Equal(got, want) {
		t.Errorf("Labels() = %v; want %v", got, want)
	}
	if got, _ := f.st.Label(f.ctx, a); got != "" {
		t.Errorf("Label(%q) = %q; want cleared", a, got)
	}
	if got, _ := f.st.Name(f.ctx); got != "my session name" {
		t.Errorf("Name() = %q; want %q", got, "my session name")
	}
	_, err := f.s.SetLabel(f.ctx, "0badc0de", "x")
	var nf *sessiontree.EntryNotFoundError
	if !errors.Is(err, sessiontree.ErrNotFound) || !errors.As(err, &nf) || nf.Error() != "Entry 0badc0de not found" {
		t.Errorf("SetLabel(missing) error = %v; want \"Entry 0badc0de not found\"", err)
	}
	f.ok(f.s.SetName(f.ctx, " "))
	if got, _ := f.st.Name(f.ctx); got != "" {
		t.Errorf("Name() after clearing = %q; want empty", got)
	}
})

// LabelOfMissingEntry: a label entry is a node of the tree whatever it
// points at. pi keeps one whose target does not exist (written before it)
// and shows its label on no entry; so does every backend, by a batch (a
// file's import), and after a reopen: the entry is stored, the leaf moves
// to it, entries hang under it, and it neither sets nor clears a label.
// An append writing such a label now is refused, as in pi. (pi would show l2's label on a1, written after
// it; sessiontree applies a label only to an entry before it, see
// sessiontree.CheckTarget.)
var _ = register("LabelOfMissingEntry", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	const ts = `"timestamp":"2026-12-01T10:00:0%d.000Z"`
	lines := []string{
		`{"type":"message","id":"u1","parentId":null,` + fmt.Sprintf(ts, 1) + `,"message":{"role":"user","content":"first","timestamp":1}}`,
		`{"type":"label","id":"l1","parentId":"u1",` + fmt.Sprintf(ts, 2) + `,"targetId":"gone","label":"on a missing entry"}`,
		`{"type":"label","id":"l2","parentId":"l1",` + fmt.Sprintf(ts, 3) + `,"targetId":"a1","label":"on a later entry"}`,
		`{"type":"message","id":"a1","parentId":"l2",` + fmt.Sprintf(ts, 4) + `,"message":{"role":"user","content":"second","timestamp":2}}`,
		`{"type":"label","id":"l3","parentId":"a1",` + fmt.Sprintf(ts, 5) + `,"targetId":"u1","label":"kept"}`,
		`{"type":"label","id":"l4","parentId":"l3",` + fmt.Sprintf(ts, 6) + `,"targetId":"gone2","label":""}`,
	}
	var entries []sessiontree.Entry
	for _, l := range lines {
		entries = append(entries, f.decode(l))
	}
	ba, ok := f.st.(sessiontree.BatchAppender)
	if !ok {
		t.Skip("the backend takes no batches")
	}
	if err := ba.AppendBatch(f.ctx, entries); err != nil {
		t.Fatalf("AppendBatch(labels of missing entries) = %v; want them stored, as pi keeps them", err)
	}
	// Written now, a label of a missing entry is refused, as pi's
	// appendLabelChange refuses it.
	_, err := f.st.Append(f.ctx, sessiontree.Draft{Type: sessiontree.TypeLabel, Fields: json.RawMessage(`{"targetId":"gone3","label":"x"}`)}, sessiontree.AppendOptions{})
	var nf *sessiontree.EntryNotFoundError
	if !errors.Is(err, sessiontree.ErrNotFound) || !errors.As(err, &nf) || nf.ID != "gone3" {
		t.Errorf("Append(label of a missing entry) = %v; want Entry gone3 not found", err)
	}
	u2 := f.user("after the labels")
	check := func() {
		t.Helper()
		want := []string{"u1", "l1", "l2", "a1", "l3", "l4", u2}
		if got := f.path(f.st.FullPath(f.ctx, u2)); !cmp.Equal(got, want) {
			t.Errorf("FullPath(%s) = %v; want %v", u2, got, want)
		}
		if got, err := f.st.Labels(f.ctx); err != nil || !cmp.Equal(got, map[string]string{"u1": "kept"}) {
			t.Errorf("Labels() = %v, %v; want u1's label alone, none of an entry missing when labelled", got, err)
		}
		for _, id := range []string{"gone", "gone2", "gone3", "a1"} {
			if got, err := f.st.Label(f.ctx, id); err != nil || got != "" {
				t.Errorf("Label(%s) = %q, %v; want none", id, got, err)
			}
		}
	}
	check()
	f.reopen()
	check()
})

var _ = register("ReopenKeepsEverything", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	u := f.user("one")
	f.assistant("two")
	f.ok(f.s.SetLabel(f.ctx, u, "start"))
	f.ok(f.s.SetName(f.ctx, "named"))
	f.ok(f.s.AppendThinkingLevel(f.ctx, "high"))
	if _, err := f.s.MoveTo(f.ctx, u, nil); err != nil {
		t.Fatal(err)
	}
	f.assistant("alt")
	before := f.context(sessiontree.ContextOptions{})
	leaf, _ := f.st.Leaf(f.ctx)
	stats, _ := f.st.Stats(f.ctx)
	meta, _ := f.st.Meta(f.ctx)
	if _, err := f.s.MoveTo(f.ctx, u, nil); err != nil {
		t.Fatal(err)
	}
	f.reopen()
	if got, _ := f.st.Leaf(f.ctx); got != u {
		t.Errorf("after reopen Leaf() = %q; want the moved leaf %q", got, u)
	}
	if _, err := f.s.MoveTo(f.ctx, leaf, nil); err != nil {
		t.Fatal(err)
	}
	f.reopen()
	after := f.context(sessiontree.ContextOptions{})
	if diff := cmp.Diff(texts(before), texts(after)); diff != "" || after.ThinkingLevel != before.ThinkingLevel {
		t.Errorf("context after reopen differs (-before +after):\n%s", diff)
	}
	if got, _ := f.st.Labels(f.ctx); got[u] != "start" {
		t.Errorf("Labels() after reopen = %v", got)
	}
	if got, _ := f.st.Name(f.ctx); got != "named" {
		t.Errorf("Name() after reopen = %q", got)
	}
	got, _ := f.st.Stats(f.ctx)
	if got.TotalMessages != stats.TotalMessages || got.Tokens != stats.Tokens || got.Entries != stats.Entries+2 {
		t.Errorf("Stats() after reopen = %+v; want %+v with 2 more entries", got, stats)
	}
	if m, _ := f.st.Meta(f.ctx); m.ID != meta.ID || m.Cwd != meta.Cwd {
		t.Errorf("Meta() after reopen = %+v; want %+v", m, meta)
	}
})

var _ = register("LogWithCursor", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	var want []string
	for i := range 7 {
		want = append(want, f.user(string(rune('a'+i))))
	}
	var got []string
	var after int64
	for {
		page, err := f.st.Log(f.ctx, after, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		if len(page) > 3 {
			t.Fatalf("Log(%d, 3) returned %d entries", after, len(page))
		}
		for _, e := range page {
			if e.Seq <= after {
				t.Fatalf("Log(%d, 3) returned seq %d", after, e.Seq)
			}
			after = e.Seq
			got = append(got, e.ID)
		}
	}
	if !cmp.Equal(got, want) {
		t.Errorf("paged Log = %v; want %v", got, want)
	}
	all, _ := f.st.Log(f.ctx, 0, 0)
	if len(all) != 7 || all[0].Seq != 1 || all[6].Seq != 7 {
		t.Errorf("Log(0, 0) = %d entries, seqs %d..%d; want 7, 1..7", len(all), all[0].Seq, all[len(all)-1].Seq)
	}
	if rest, _ := f.st.Log(f.ctx, 7, 10); len(rest) != 0 {
		t.Errorf("Log(7, 10) = %d entries; want 0", len(rest))
	}
})

var _ = register("EntriesByTypeAndStats", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.user("a")
	a1 := f.assistant("b")
	f.ok(f.s.AppendModelChange(f.ctx, "x", "y"))
	a2 := f.assistant("c")
	f.ok(f.s.AppendCompaction(f.ctx, sessiontree.Compaction{Summary: "s", FirstKeptEntryID: a2,
		Usage: json.RawMessage(`{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"cost":{"total":0.5}}`)}))
	f.ok(f.s.AppendMessage(f.ctx, json.RawMessage(`{"role":"assistant","usage":"malformed"}`)))
	f.ok(f.s.AppendUsage(f.ctx, sessiontree.UsageRecord{Kind: "cache_warm", Provider: "x", Model: "y",
		Usage: json.RawMessage(`{"input":10,"output":0,"cacheRead":1000,"cacheWrite":0,"cost":{"total":0.1}}`)}))
	f.ok(f.s.AppendMessage(f.ctx, json.RawMessage(`{"role":"toolResult","content":[],"usage":{"input":3,"output":4,"cost":{"total":0.05}}}`)))
	f.ok(f.s.AppendMessage(f.ctx, json.RawMessage(`{"role":"assistant","provider":"anthropic","model":"m","responseModel":"claude-sonnet-4-5",`+
		`"content":[{"type":"toolCall","id":"1"},{"type":"text","text":"t"},{"type":"toolCall","id":"2"}],"usage":{"input":1,"output":1,"cost":{"total":0}}}`)))
	got, err := f.st.EntriesByType(f.ctx, sessiontree.TypeMessage)
	if err != nil || len(got) != 6 || got[1].ID != a1 || got[2].ID != a2 {
		t.Errorf("EntriesByType(message) = %v, %v; want 6 in append order", ids(got), err)
	}
	st, _ := f.st.Stats(f.ctx)
	want := sessiontree.Stats{Entries: 9, UserMessages: 1, AssistantMessages: 4, ToolCalls: 2, ToolResults: 1,
		TotalMessages: 6, Cost: 1.15,
		Tokens: sessiontree.TokenStats{Input: 215, Output: 47, CacheRead: 1013, CacheWrite: 18, Total: 1293},
		Breakdown: []sessiontree.UsageBucket{{Key: sessiontree.ToolsBucket, Cost: 0.55, Tokens: 17},
			{Key: "anthropic/claude-sonnet-4", Cost: 0.5, Tokens: 264}, {Key: "x/y", Cost: 0.1, Tokens: 1010},
			{Key: "anthropic/claude-sonnet-4-5", Cost: 0, Tokens: 2}}}
	if diff := cmp.Diff(want, st, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("Stats() (-want +got):\n%s", diff)
	}
})

var _ = register("LeafGuard", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	u := f.user("a")
	stale := sessiontree.IfLeaf("")
	d := sessiontree.Draft{Type: sessiontree.TypeCustom, Fields: json.RawMessage(`{"customType":"x"}`)}
	if _, err := f.st.Append(f.ctx, d, stale); !errors.Is(err, sessiontree.ErrConflict) {
		t.Errorf("Append with stale guard error = %v; want ErrConflict", err)
	}
	if _, err := f.st.SetLeaf(f.ctx, "", stale); !errors.Is(err, sessiontree.ErrConflict) {
		t.Errorf("SetLeaf with stale guard error = %v; want ErrConflict", err)
	}
	e := f.ok(f.st.Append(f.ctx, d, sessiontree.IfLeaf(u)))
	if e.ParentID != u {
		t.Errorf("guarded append parent = %q; want %q", e.ParentID, u)
	}
	if n := f.count(); n != 2 {
		t.Errorf("log has %d entries; want 2", n)
	}
})

var _ = register("PathFromAnyEntry", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	a := f.user("a")
	b := f.assistant("b")
	c := f.user("c")
	f.ok(f.s.AppendCompaction(f.ctx, sessiontree.Compaction{Summary: "s", FirstKeptEntryID: b}))
	f.user("d")
	if got := f.path(f.s.Branch(f.ctx, c)); !cmp.Equal(got, []string{a, b, c}) {
		t.Errorf("Branch(%q) = %v; want %v", c, got, []string{a, b, c})
	}
	if got := f.path(f.s.Branch(f.ctx, b)); !cmp.Equal(got, []string{a, b}) {
		t.Errorf("Branch(%q) = %v", b, got)
	}
	f.wantTexts(sessiontree.ContextOptions{From: c}, "user:a", "assistant:b", "user:c")
	if got := f.path(f.st.Path(f.ctx, "")); len(got) != 0 {
		t.Errorf("Path(\"\") = %v; want empty", got)
	}
})

var _ = register("ConcurrentAppends", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	const workers, each = 4, 25
	errs := make(chan error, workers)
	for range workers {
		go func() {
			for range each {
				if _, err := f.s.AppendMessage(f.ctx, userMessage("x")); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	full := f.path(f.s.FullBranch(f.ctx, ""))
	if len(full) != workers*each || f.count() != workers*each {
		t.Errorf("after %d concurrent appends the chain has %d entries (log %d); want one chain of all", workers*each, len(full), f.count())
	}
})

var _ = register("CorruptDataIsReported", func(t *testing.T, h Harness) {
	if h.LoadUnchecked == nil {
		t.Fatal("harness has no LoadUnchecked")
	}
	ts := "2026-01-01T00:00:00.000Z"
	entry := func(id, parent string) sessiontree.Entry {
		e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: sessiontree.TypeMessage,
			Fields: json.RawMessage(`{"message":{"role":"user","content":"` + id + `"}}`)}, id, parent, ts)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	tests := []struct {
		name    string
		entries []sessiontree.Entry
	}{
		{"missing parent", []sessiontree.Entry{entry("aaaaaaaa", ""), entry("bbbbbbbb", "cccccccc")}},
		{"cycle", []sessiontree.Entry{entry("aaaaaaaa", "bbbbbbbb"), entry("bbbbbbbb", "aaaaaaaa")}},
		{"self parent", []sessiontree.Entry{entry("aaaaaaaa", "aaaaaaaa")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- corruptPaths(h, t, tt.entries) }()
			select {
			case err := <-done:
				if !errors.Is(err, sessiontree.ErrCorrupt) {
					t.Errorf("reading %s: error = %v; want ErrCorrupt", tt.name, err)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("reading %s did not finish: a hang", tt.name)
			}
		})
	}
})

// corruptPaths loads broken entries and walks from the last one; it
// returns the first error met.
func corruptPaths(h Harness, t testing.TB, entries []sessiontree.Entry) error {
	meta := sessiontree.SessionMeta{ID: "0190a000-0000-7000-8000-000000000000", Version: 3, CreatedAt: "2026-01-01T00:00:00.000Z", Cwd: "/tmp"}
	st, err := h.LoadUnchecked(t, meta, entries)
	if err != nil {
		return err
	}
	ctx := context.Background()
	last := entries[len(entries)-1].ID
	if _, err := st.Path(ctx, last); err != nil {
		return err
	}
	if _, err := st.FullPath(ctx, last); err != nil {
		return err
	}
	_, err = sessiontree.NewSession(st, sessiontree.SessionOptions{}).Context(ctx, sessiontree.ContextOptions{From: last})
	return err
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return cmp.Equal(x, y)
}

// unknownFields are the fields of an entry of a type nobody knows: nested
// values, numbers in unusual forms, and members that would count in the
// stats or the context on a known type (a message, a usage), which they
// must not here.
const unknownFields = `{"message":{"role":"assistant","content":[{"type":"toolCall","id":"t"}],` +
	`"usage":{"input":100,"output":5,"cacheRead":1,"cacheWrite":1,"cost":{"total":1}}},` +
	`"usage":{"input":7,"output":7,"cost":{"total":2}},"provider":"p","model":"m",` +
	`"payload":{"deep":[1,2.50,{"x":null,"s":"\u00e9<&>"}],"big":12345678901234567890,"e":1e3}}`

var _ = register("UnknownEntryTypes", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	u := f.user("before")
	x := f.ok(f.st.Append(f.ctx, sessiontree.Draft{Type: "future_thing", Fields: json.RawMessage(unknownFields)}, sessiontree.AppendOptions{}))
	if x.ParentID != u || x.Type != "future_thing" {
		t.Errorf("Append(future_thing) = parent %q type %q; want parent %q, the type as given", x.ParentID, x.Type, u)
	}
	if leaf, _ := f.st.Leaf(f.ctx); leaf != x.ID {
		t.Errorf("Leaf() after an unknown entry = %q; want it, %q", leaf, x.ID)
	}
	y := f.user("after")
	if e := f.ok(f.st.Entry(f.ctx, y)); e.ParentID != x.ID {
		t.Errorf("the entry after an unknown one has parent %q; want %q", e.ParentID, x.ID)
	}
	want := []sessiontree.Entry{x}
	if ba, ok := f.st.(sessiontree.BatchAppender); ok {
		// Keys in an unusual order, as a hand-written or newer file may
		// have them.
		b1 := f.decode(`{"id":"0dd00001","type":"other_thing","timestamp":"2026-01-02T03:04:05.678Z","parentId":"` + y + `","v":[[],{}]}`)
		b2 := f.decode(`{"type":"future_thing","id":"0dd00002","parentId":"0dd00001","timestamp":"2026-01-02T03:04:06.000Z","payload":"<tag>&amp;"}`)
		if err := ba.AppendBatch(f.ctx, []sessiontree.Entry{b1, b2}); err != nil {
			t.Fatalf("AppendBatch(unknown types) = %v; want them taken", err)
		}
		if leaf, _ := f.st.Leaf(f.ctx); leaf != b2.ID {
			t.Errorf("Leaf() after a batch of unknown entries = %q; want %q", leaf, b2.ID)
		}
		want = append(want, b1, b2)
	}
	z := f.user("last")
	twin := newFixture(t, h)
	for _, text := range []string{"before", "after", "last"} {
		twin.user(text)
	}
	f.checkUnknown(want, z, twin)
	f.reopen()
	f.checkUnknown(want, z, twin)
})

// moveTo moves the leaf to target without a summary.
func (f *fixture) moveTo(target string) {
	f.t.Helper()
	if _, err := f.s.MoveTo(f.ctx, target, nil); err != nil {
		f.t.Fatal(err)
	}
}

// decode reads an entry from its JSON line.
func (f *fixture) decode(line string) sessiontree.Entry {
	f.t.Helper()
	e, err := sessiontree.DecodeEntry([]byte(line))
	if err != nil {
		f.t.Fatal(err)
	}
	return e
}

// checkUnknown checks a session holding the unknown entries want (in
// append order, all on the path to leaf) among user messages: they come
// back byte for byte from every read, sit on the path and in the tree,
// and contribute nothing to the context, the projection or the stats,
// which equal those of twin, a session of the same user messages alone.
func (f *fixture) checkUnknown(want []sessiontree.Entry, leaf string, twin *fixture) {
	t := f.t
	t.Helper()
	byType := map[sessiontree.EntryType][]string{}
	for _, w := range want {
		if got := f.ok(f.st.Entry(f.ctx, w.ID)); string(got.Raw) != string(w.Raw) || got.Type != w.Type {
			t.Errorf("Entry(%q) = %s %s; want %s %s", w.ID, got.Type, got.Raw, w.Type, w.Raw)
		}
		byType[w.Type] = append(byType[w.Type], string(w.Raw))
	}
	for typ, raws := range byType {
		got, err := f.st.EntriesByType(f.ctx, typ)
		if err != nil {
			t.Fatal(err)
		}
		var gotRaws []string
		for _, e := range got {
			gotRaws = append(gotRaws, string(e.Raw))
		}
		if diff := cmp.Diff(raws, gotRaws); diff != "" {
			t.Errorf("EntriesByType(%q) (-want +got):\n%s", typ, diff)
		}
	}
	log, err := f.st.Log(f.ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	inLog := map[string]string{}
	for _, e := range log {
		inLog[e.ID] = string(e.Raw)
	}
	for _, w := range want {
		if inLog[w.ID] != string(w.Raw) {
			t.Errorf("Log() has %q as %s; want %s", w.ID, inLog[w.ID], w.Raw)
		}
	}
	full := f.path(f.st.FullPath(f.ctx, leaf))
	if got := f.path(f.st.Path(f.ctx, leaf)); !cmp.Equal(got, full) || len(full) != len(log) {
		t.Errorf("Path(%q) = %v, FullPath = %v; want one chain of all %d entries", leaf, got, full, len(log))
	}
	onPath := map[string]bool{}
	for _, id := range full {
		onPath[id] = true
	}
	inTree := map[string]bool{}
	for stack := sessiontree.BuildTree(log, nil); len(stack) > 0; {
		n := stack[len(stack)-1]
		stack = append(stack[:len(stack)-1], n.Children...)
		inTree[n.Entry.ID] = true
	}
	for _, w := range want {
		if !onPath[w.ID] || !inTree[w.ID] {
			t.Errorf("unknown entry %q: on the path %v, in the tree %v; want both", w.ID, onPath[w.ID], inTree[w.ID])
		}
	}
	f.wantTexts(sessiontree.ContextOptions{}, "user:before", "user:after", "user:last")
	proj, err := f.s.Projection(f.ctx, sessiontree.ContextOptions{})
	if err != nil {
		t.Fatal(err)
	}
	unknown := map[string]bool{}
	for _, w := range want {
		unknown[w.ID] = true
	}
	seen := 0
	for _, pe := range proj {
		if unknown[pe.SourceID] {
			seen++
			if pe.Messages == nil || len(pe.Messages) != 0 {
				t.Errorf("Projection() entry %q has messages %v; want none (an empty list)", pe.SourceID, pe.Messages)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("Projection() lists %d of the %d unknown entries; want all", seen, len(want))
	}
	got, err := f.st.Stats(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	base, err := twin.st.Stats(twin.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Entries != int64(len(log)) || got.Entries != base.Entries+int64(len(want)) {
		t.Errorf("Stats().Entries = %d; want %d, every entry", got.Entries, len(log))
	}
	if diff := cmp.Diff(base, got, cmpopts.IgnoreFields(sessiontree.Stats{}, "Entries"), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Stats() differ from those of the same messages without the unknown entries (-without +with):\n%s", diff)
	}
}

var _ = register("ContextEditsBranchLocal", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	u1 := f.user("one")
	a1 := f.assistant("two")
	u2 := f.user("three")
	a2 := f.assistant("four")
	e1 := f.ok(f.s.EditContext(f.ctx, a1, json.RawMessage(`"edited two"`)))
	e2 := f.ok(f.s.EditContext(f.ctx, u2, nil))
	// A later edit of the same target wins.
	e3 := f.ok(f.s.EditContext(f.ctx, a1, json.RawMessage(`[{"type":"text","text":"again"}]`)))
	if e1.ParentID != a2 || e3.ParentID != e2.ID {
		t.Errorf("edits hang at %q and %q; want under %q and %q (the append rule)", e1.ParentID, e3.ParentID, a2, e2.ID)
	}
	f.moveTo(a1)
	sib := f.user("sibling")
	// An edit on the sibling branch, of an entry both branches share.
	e4 := f.ok(f.s.EditContext(f.ctx, u1, json.RawMessage(`"edited one"`)))
	check := func(when string) {
		t.Helper()
		for _, p := range []struct {
			from string
			want []string
		}{
			{e3.ID, []string{"user:one", "assistant:again", "assistant:four"}},
			{e1.ID, []string{"user:one", "assistant:edited two", "user:three", "assistant:four"}},
			{a2, []string{"user:one", "assistant:two", "user:three", "assistant:four"}},
			{sib, []string{"user:one", "assistant:two", "user:sibling"}},
			{e4.ID, []string{"user:edited one", "assistant:two", "user:sibling"}},
		} {
			if diff := cmp.Diff(p.want, texts(f.context(sessiontree.ContextOptions{From: p.from}))); diff != "" {
				t.Errorf("%s: Context(From %q) messages (-want +got):\n%s", when, p.from, diff)
			}
		}
		proj, err := f.s.Projection(f.ctx, sessiontree.ContextOptions{From: e3.ID})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, pe := range proj {
			got = append(got, fmt.Sprintf("%s:%d", pe.SourceID, len(pe.Messages)))
		}
		want := []string{u1 + ":1", a1 + ":1", u2 + ":0", a2 + ":1", e1.ID + ":0", e2.ID + ":0", e3.ID + ":0"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: Projection(From %q) sources:messages (-want +got):\n%s", when, e3.ID, diff)
		}
	}
	check("before reopening")
	f.reopen()
	check("after reopening")
})

// piEditRefusal is the message pi 1.6.0 refuses an edit with.
func piEditRefusal(r sessiontree.EditRefusal, id string) string {
	switch r {
	case sessiontree.EditBadReplacement:
		return "Context edit replacement must be null or contain string/array content"
	case sessiontree.EditOffBranch:
		return "Entry " + id + " is not on the active branch"
	}
	return "Entry " + id + " does not contribute editable model content"
}

var _ = register("EditContextRefusals", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	sys := f.ok(f.s.AppendMessage(f.ctx, json.RawMessage(`{"role":"system","content":"be brief","timestamp":1}`))).ID
	u1 := f.user("one")
	a1 := f.assistant("two")
	comp := f.ok(f.s.AppendCompaction(f.ctx, sessiontree.Compaction{Summary: "S", FirstKeptEntryID: u1, TokensBefore: 10})).ID
	mc := f.ok(f.s.AppendModelChange(f.ctx, "p", "m")).ID
	u2 := f.user("three")
	f.moveTo(u1)
	sib := f.assistant("sibling")
	f.moveTo(u2)
	before := f.count()
	str := json.RawMessage(`"x"`)
	for _, tc := range []struct {
		target string
		repl   json.RawMessage
		want   sessiontree.EditRefusal // 0: the target is missing
	}{
		// The replacement is checked first, whatever the target.
		{"0badc0de", json.RawMessage(`{"content":"x"}`), sessiontree.EditBadReplacement},
		{sib, json.RawMessage(`42`), sessiontree.EditBadReplacement},
		{sys, json.RawMessage(`"unterminated`), sessiontree.EditBadReplacement},
		{u1, json.RawMessage(` `), sessiontree.EditBadReplacement},
		// Then the target exists, then it is on the active branch.
		{"0badc0de", str, 0},
		{"0badc0de", nil, 0},
		{sib, str, sessiontree.EditOffBranch},
		{sib, nil, sessiontree.EditOffBranch},
		// Then it contributes editable content.
		{sys, str, sessiontree.EditNotEditable},
		{comp, nil, sessiontree.EditNotEditable},
		{mc, str, sessiontree.EditNotEditable},
	} {
		_, err := f.s.EditContext(f.ctx, tc.target, tc.repl)
		var refused *sessiontree.EditRefusedError
		var nf *sessiontree.EntryNotFoundError
		switch {
		case tc.want == 0:
			if !errors.Is(err, sessiontree.ErrNotFound) || !errors.As(err, &nf) || nf.Error() != "Entry "+tc.target+" not found" ||
				errors.Is(err, sessiontree.ErrEditRefused) {
				t.Errorf("EditContext(%s, %s) = %v; want pi's \"Entry %s not found\" matching ErrNotFound", tc.target, tc.repl, err, tc.target)
			}
		case !errors.Is(err, sessiontree.ErrEditRefused) || !errors.As(err, &refused) || refused.Reason != tc.want ||
			refused.Error() != piEditRefusal(tc.want, tc.target) || errors.Is(err, sessiontree.ErrNotFound):
			t.Errorf("EditContext(%s, %s) = %v; want pi's %q matching ErrEditRefused", tc.target, tc.repl, err, piEditRefusal(tc.want, tc.target))
		}
	}
	if n := f.count(); n != before {
		t.Errorf("after refused edits the log has %d entries; want %d", n, before)
	}
	if leaf, _ := f.st.Leaf(f.ctx); leaf != u2 {
		t.Errorf("Leaf() after refused edits = %q; want %q", leaf, u2)
	}
	// A string replacement is one text block for an assistant target and
	// stays a string for a user target, as pi stores them.
	for _, tc := range []struct{ target, want string }{
		{a1, `[{"type":"text","text":"short"}]`},
		{u1, `"short"`},
	} {
		e := f.ok(f.s.EditContext(f.ctx, tc.target, json.RawMessage(`"short"`)))
		edit, ok := sessiontree.ContextEditOf(e)
		if !ok || edit.TargetID != tc.target || edit.Omit || string(edit.Content) != tc.want {
			t.Errorf("EditContext(%s, \"short\") stored %s; want the content %s", tc.target, e.Raw, tc.want)
		}
	}
	// The compaction's snapshot of the system message comes first.
	f.wantTexts(sessiontree.ContextOptions{}, "system:be brief", "compactionSummary:S", "user:short", "assistant:short", "user:three")
})

var _ = register("BatchAgainIsConflict", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	ba, ok := f.st.(sessiontree.BatchAppender)
	if !ok {
		t.Skip("the backend takes no batches")
	}
	batch := batchChain(t, "again", "", 3)
	if err := ba.AppendBatch(f.ctx, batch); err != nil {
		t.Fatal(err)
	}
	// A batch sent again (a retry after an unknown commit) conflicts with
	// what is stored, as an Append of a stored id does: the data is not
	// corrupt, and the error names the first stored entry.
	for _, again := range []struct {
		entries []sessiontree.Entry
		stored  string
	}{
		{batch, "again0000"},
		{batch[2:], "again0002"},
		{append(batchChain(t, "fresh", "again0002", 1), batch[1]), "again0001"},
	} {
		err := ba.AppendBatch(f.ctx, again.entries)
		var taken *sessiontree.IDTakenError
		if !errors.Is(err, sessiontree.ErrConflict) || errors.Is(err, sessiontree.ErrCorrupt) || !errors.As(err, &taken) || taken.ID != again.stored {
			t.Errorf("AppendBatch(%d entries, %s stored) = %v; want an IDTakenError for %s (ErrConflict, not ErrCorrupt)", len(again.entries), again.stored, err, again.stored)
		}
	}
	if n := f.count(); n != 3 {
		t.Errorf("after the refused batches the log has %d entries; want 3", n)
	}
	// Twice the same id inside one batch is bad data, as in a file.
	dup := batchChain(t, "dup", "again0002", 1)
	dup = append(dup, batchChain(t, "dup", dup[0].ID, 1)...) // dup0000 again
	if err := ba.AppendBatch(f.ctx, dup); !errors.Is(err, sessiontree.ErrCorrupt) {
		t.Errorf("AppendBatch(an id twice) = %v; want ErrCorrupt", err)
	}
})

var _ = register("BatchUnknownParentIsCallerError", func(t *testing.T, h Harness) {
	f := newFixture(t, h)
	ba, ok := f.st.(sessiontree.BatchAppender)
	if !ok {
		t.Skip("the backend takes no batches")
	}
	if err := ba.AppendBatch(f.ctx, batchChain(t, "kept", "", 2)); err != nil {
		t.Fatal(err)
	}
	// A batch naming a parent the session does not hold is the caller's
	// mistake, as an AppendUnder of a missing parent is: the stored data
	// is sound, so the error is an EntryNotFoundError naming the parent
	// (ErrNotFound), not ErrCorrupt. So is a parent that comes later in
	// the batch, after its child.
	later := batchChain(t, "late", "", 2)
	later[0], later[1] = later[1], later[0]
	for _, tc := range []struct {
		what    string
		entries []sessiontree.Entry
		parent  string
	}{
		{"a missing parent", batchChain(t, "orphan", "nosuch00", 2), "nosuch00"},
		{"a missing parent after a good entry", append(batchChain(t, "good", "kept0001", 1), batchChain(t, "orphan", "nosuch01", 1)...), "nosuch01"},
		{"a parent later in the batch", later, "late0000"},
	} {
		err := ba.AppendBatch(f.ctx, tc.entries)
		var nf *sessiontree.EntryNotFoundError
		if !errors.Is(err, sessiontree.ErrNotFound) || errors.Is(err, sessiontree.ErrCorrupt) || !errors.As(err, &nf) || nf.ID != tc.parent {
			t.Errorf("AppendBatch(%s) = %v; want an EntryNotFoundError for %s (ErrNotFound, not ErrCorrupt)", tc.what, err, tc.parent)
		}
	}
	if n := f.count(); n != 2 {
		t.Errorf("after the refused batches the log has %d entries; want 2", n)
	}
	if leaf, _ := f.st.Leaf(f.ctx); leaf != "kept0001" {
		t.Errorf("Leaf() after the refused batches = %q; want kept0001", leaf)
	}
})
