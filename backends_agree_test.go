package sessiontree_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/storetest"
)

// TestBackendsAgreeOnRandomTrees stores random logs in every backend with
// one batch and compares, at every entry, the projection, the context and
// the state each backend answers with what pi's rules give over the full
// path walked from the log (sessiontree.WalkPath, ContextEntries,
// Projection, State.Apply), and the leaf, name, labels, stats and tree
// counts with the replayed log. The logs hold what the pi fixtures rarely do: branches,
// leaf moves, compactions whose firstKeptEntryId is off the path, the
// compaction itself, missing, or named twice, retained tails, system
// snapshots, branch summaries at the root, context edits of any entry,
// system messages, null contents, unknown types. Most entries end off the
// active branch, so the engine reads their paths both ways. Then the leaf
// moves about and entries go under it, and each backend's answers are
// compared with pi's rules over its log again.
func TestBackendsAgreeOnRandomTrees(t *testing.T) {
	t.Parallel()
	seeds := uint64(200)
	if testing.Short() {
		seeds = 16 // fewer than the race run's 25
	}
	if storetest.RaceEnabled { // 200 seeds took 145 s under the race detector
		seeds /= 8
	}
	for seed := range seeds {
		log := randomLog(t, rand.New(rand.NewPCG(seed, 7)), 60)
		want := piAnswers(t, log)
		for _, b := range backends {
			st := b.harness().New(t)
			if err := st.(sessiontree.BatchAppender).AppendBatch(context.Background(), log); err != nil {
				t.Fatalf("seed %d, %s: %v", seed, b.name, err)
			}
			what := fmt.Sprintf("seed %d, %s", seed, b.name)
			checkAnswers(t, what, st, log, want)
			moved := moveAndAppend(t, what, rand.New(rand.NewPCG(seed, 8)), st, log)
			checkAnswers(t, what+", moved", st, moved, piAnswers(t, moved))
		}
	}
}

// moveAndAppend moves the leaf of st, whose log is log, to random entries
// (or before the first) and appends under it, and returns the log after.
func moveAndAppend(t *testing.T, what string, rng *rand.Rand, st sessiontree.Storage, log []sessiontree.Entry) []sessiontree.Entry {
	t.Helper()
	ctx := context.Background()
	ids := make([]string, 0, len(log))
	for _, e := range log {
		if e.Type != sessiontree.TypeLeaf {
			ids = append(ids, e.ID)
		}
	}
	for i := range 12 {
		target := ids[rng.IntN(len(ids))]
		if rng.IntN(10) == 0 {
			target = ""
		}
		if _, err := st.SetLeaf(ctx, target, sessiontree.AppendOptions{}); err != nil {
			t.Fatalf("%s: SetLeaf(%q): %v", what, target, err)
		}
		for j := range rng.IntN(4) {
			id := fmt.Sprintf("m%02d%d", i, j)
			typ, fields := randomEntry(rng, id, target, ids)
			if typ == sessiontree.TypeLeaf {
				continue
			}
			d := sessiontree.Draft{Type: typ, ID: id, Timestamp: "2026-03-02T10:00:00.000Z", Fields: json.RawMessage(fields)}
			e, err := st.Append(ctx, d, sessiontree.AppendOptions{})
			if err != nil {
				t.Fatalf("%s: Append(%s): %v", what, fields, err)
			}
			ids, target = append(ids, e.ID), e.ID
		}
	}
	after, err := st.Log(ctx, 0, 0)
	if err != nil {
		t.Fatalf("%s: Log: %v", what, err)
	}
	return after
}

// answers is what a session answers at an entry, as compared.
type answers struct {
	Projection sessiontree.Projected
	State      sessiontree.State
}

// piAnswers computes, for every entry of log, its answers by pi's rules
// over the full path.
func piAnswers(t *testing.T, log []sessiontree.Entry) map[string]string {
	t.Helper()
	ctx := context.Background()
	byID := map[string]sessiontree.Entry{}
	for _, e := range log {
		byID[e.ID] = e
	}
	lookup := func(id string) (sessiontree.Entry, bool) { e, ok := byID[id]; return e, ok }
	want := map[string]string{}
	for _, e := range log {
		full, err := sessiontree.WalkPath(ctx, e.ID, true, len(log), lookup)
		if err != nil {
			t.Fatal(err)
		}
		a := answers{State: sessiontree.DefaultState()}
		for _, p := range full {
			a.State.Apply(p)
		}
		if a.Projection, err = sessiontree.Projection(sessiontree.ContextEntries(full), nil); err != nil {
			t.Fatal(err)
		}
		want[e.ID] = marshal(t, a)
	}
	return want
}

// checkAnswers compares what st answers with want and the replayed log.
func checkAnswers(t *testing.T, what string, st sessiontree.Storage, log []sessiontree.Entry, want map[string]string) {
	t.Helper()
	ctx := context.Background()
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	for _, e := range log {
		opts := sessiontree.ContextOptions{From: e.ID}
		proj, err := s.Projection(ctx, opts)
		if err != nil {
			t.Fatalf("%s: Projection at %s: %v", what, e.ID, err)
		}
		c, err := s.Context(ctx, opts)
		if err != nil {
			t.Fatalf("%s: Context at %s: %v", what, e.ID, err)
		}
		if diff := cmp.Diff(want[e.ID], marshal(t, answers{proj, c.State})); diff != "" {
			t.Errorf("%s: at %s (-pi +backend):\n%s", what, e.ID, diff)
		}
		if got, want := marshal(t, c.Messages), marshal(t, proj.Messages()); got != want {
			t.Errorf("%s: at %s the context's messages are not the projection's:\n%s\n%s", what, e.ID, got, want)
		}
	}
	var r sessiontree.Replayer
	var tally sessiontree.Tally
	for _, e := range log {
		f := sessiontree.EffectsOf(e, "")
		r.Apply(e, &f)
		tally.Add(e)
	}
	if stats, err := st.Stats(ctx); err != nil || !cmp.Equal(stats, tally.Stats()) {
		t.Errorf("%s: Stats = %+v, %v; want %+v", what, stats, err, tally.Stats())
	}
	if sr, ok := st.(sessiontree.SummaryReader); ok {
		sum, err := sr.Summary(ctx)
		if want := sessiontree.ShapeOf(log, r.Labels); err != nil || sum.Shape != want {
			t.Errorf("%s: Summary().Shape = %+v, %v; want %+v", what, sum.Shape, err, want)
		}
	}
	leaf, err1 := st.Leaf(ctx)
	name, err2 := st.Name(ctx)
	labels, err3 := st.Labels(ctx)
	if leaf != r.Leaf || name != r.Name || len(labels)+len(r.Labels) > 0 && !cmp.Equal(labels, r.Labels) {
		t.Errorf("%s: leaf %q, name %q, labels %v (%v, %v, %v); want %q, %q, %v", what, leaf, name, labels,
			err1, err2, err3, r.Leaf, r.Name, r.Labels)
	}
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// randomLog makes a valid log of n entries: each under the entry before
// it mostly, else under any earlier entry or none (a new root).
func randomLog(t *testing.T, rng *rand.Rand, n int) []sessiontree.Entry {
	t.Helper()
	var log []sessiontree.Entry
	var ids []string
	for i := range n {
		id := fmt.Sprintf("e%04d", i)
		parent := ""
		if r := rng.IntN(10); len(ids) > 0 && r < 9 {
			parent = ids[len(ids)-1]
			if r >= 7 {
				parent = ids[rng.IntN(len(ids))]
			}
		}
		typ, fields := randomEntry(rng, id, parent, ids)
		e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: typ, Fields: json.RawMessage(fields)}, id, parent,
			fmt.Sprintf("2026-03-01T10:%02d:%02d.000Z", i/60%60, i%60))
		if err != nil {
			t.Fatal(fields, err)
		}
		log = append(log, e)
		ids = append(ids, id)
	}
	return log
}

// randomEntry picks the type and fields of entry id under parent, with
// ids the entries before it.
func randomEntry(rng *rand.Rand, id, parent string, ids []string) (sessiontree.EntryType, string) {
	if len(ids) == 0 {
		return randomMessage(rng, id)
	}
	pick := func() string { return ids[rng.IntN(len(ids))] }
	switch rng.IntN(14) {
	case 0:
		return randomCompaction(rng, id, parent, pick)
	case 1:
		summary := "b" + id
		if rng.IntN(3) == 0 {
			summary = ""
		}
		return sessiontree.TypeBranchSummary, `{"fromId":"` + pick() + `","summary":"` + summary + `"}`
	case 2:
		repl := `null`
		if rng.IntN(2) == 0 {
			repl = `{"content":"edited ` + id + `"}`
		}
		return sessiontree.TypeContextEdit, `{"targetId":"` + pick() + `","replacement":` + repl + `}`
	case 3:
		label := []string{`"l` + id + `"`, `""`, `null`, `" spaced "`}[rng.IntN(4)]
		return sessiontree.TypeLabel, `{"targetId":"` + pick() + `","label":` + label + `}`
	case 4:
		return sessiontree.TypeModelChange, `{"provider":"q","modelId":"m` + id + `"}`
	case 5:
		return sessiontree.TypeThinkingLevelChange, `{"thinkingLevel":"t` + id + `"}`
	case 6:
		target := `"` + pick() + `"`
		if rng.IntN(5) == 0 {
			target = `null`
		}
		return sessiontree.TypeLeaf, `{"targetId":` + target + `}`
	case 7:
		return "widget", `{"message":{"role":"user","content":"not a message"}}`
	case 8:
		return sessiontree.TypeCustomMessage, `{"customType":"c","content":"cm` + id + `","display":true}`
	case 9:
		name := []string{`"n` + id + `"`, `""`, `" two\r\nlines "`}[rng.IntN(3)]
		return sessiontree.TypeSessionInfo, `{"name":` + name + `}`
	}
	return randomMessage(rng, id)
}

// randomMessage is a message of any role pi 1.x writes, its content
// sometimes null.
func randomMessage(rng *rand.Rand, id string) (sessiontree.EntryType, string) {
	role := []string{"user", "assistant", "system", "toolResult"}[rng.IntN(4)]
	content := `"t` + id + `"`
	if rng.IntN(6) == 0 {
		content = `null`
	}
	extra := ""
	if role == "assistant" {
		extra = `,"provider":"p","model":"m` + id + `"`
	}
	return sessiontree.TypeMessage, `{"message":{"role":"` + role + `","content":` + content + extra + `,"timestamp":1}}`
}

// randomCompaction keeps from any entry, itself, its parent, an entry
// that does not exist or none, sometimes named twice, sometimes with a
// retained tail or a system snapshot.
func randomCompaction(rng *rand.Rand, id, parent string, pick func() string) (sessiontree.EntryType, string) {
	keep := ""
	switch rng.IntN(5) {
	case 0:
		keep = `,"firstKeptEntryId":"` + pick() + `"`
	case 1:
		keep = `,"firstKeptEntryId":"` + id + `"`
	case 2:
		keep = `,"firstKeptEntryId":"nope"`
	case 3:
		keep = `,"firstKeptEntryId":"` + parent + `"`
	}
	if rng.IntN(4) == 0 {
		keep = `,"firstKeptEntryId":"` + pick() + `"` + keep
	}
	if rng.IntN(6) == 0 {
		keep += `,"retainedTail":[{"role":"user","content":"kept"}]`
	}
	if rng.IntN(2) == 0 {
		keep += `,"systemMessage":{"role":"system","content":"snapshot ` + id + `"}`
	}
	return sessiontree.TypeCompaction, `{"summary":"s` + id + `","tokensBefore":5` + keep + `}`
}
