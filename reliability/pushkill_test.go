package reliability_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/storetest"
)

func init() { childRoles["push"] = pushChild }

// pushChild pushes every session of spec.DB to the database spec.File
// names, spec.N entries a batch, printing "batch" after each and "done"
// at the end.
func pushChild(ctx context.Context, spec childSpec) error {
	from, err := openTarget(ctx, spec.DB, false)
	if err != nil {
		return err
	}
	defer from.Close()
	to, err := openTarget(ctx, spec.File, false)
	if err != nil {
		return err
	}
	defer to.Close()
	rep, err := store.Push(ctx, from, to, store.PushOptions{BatchEntries: spec.N, Progress: func(p store.PushProgress) {
		printLine("batch %d", p.Entries)
	}})
	if err != nil {
		return err
	}
	if !rep.OK() {
		return fmt.Errorf("push: %+v", rep.Results)
	}
	printLine("done")
	return nil
}

// pushSource fills a SQLite database with sessions to push: messages,
// a quarter of them tool results with a large image, so that a kill often
// lands in a batch's commit. It returns the path and the session ids.
func pushSource(t *testing.T, sessions, entries int) (string, []string) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "source.db")
	s := openStore(t, path, store.Options{})
	var ids []string
	for i := range sessions {
		st, err := s.Create(ctx, store.CreateOptions{Cwd: "/push"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, st.ID())
		drafts := make([]sessiontree.Draft, entries)
		for j := range drafts {
			msg := userMessage(fmt.Sprintf("session %d message %d", i, j))
			if j%4 == 3 {
				msg = imageResult(fmt.Sprintf("%d_%d", i, j), 64<<10)
			}
			drafts[j] = sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: []byte(`{"message":` + string(msg) + `}`)}
		}
		all, ok := st.(interface {
			AppendAll(context.Context, []sessiontree.Draft, sessiontree.AppendOptions) ([]sessiontree.Entry, error)
		})
		if !ok {
			t.Fatalf("%T has no AppendAll", st)
		}
		if _, err := all.AppendAll(ctx, drafts, sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		st.Close()
	}
	return path, ids
}

// TestPushKilled kills a push (a child process) after a random number of
// its batches and a random moment more, again and again until a push
// finishes: after every kill each session on the target is a prefix of
// the source's, byte for byte, and passes every check; at the end the
// target holds every session whole, as one uninterrupted push leaves it.
func TestPushKilled(t *testing.T) {
	t.Parallel()
	for _, e := range dbEngines {
		t.Run("to-"+e.name, func(t *testing.T) {
			t.Parallel()
			sessions, entries := 3, 200
			if storetest.RaceEnabled || testing.Short() { // a third of the batches: each round's checks (and its child) are the cost
				entries = 64
			}
			src, ids := pushSource(t, sessions, entries)
			srcLogs := sourceLogs(t, src, ids)
			target := e.target(t)
			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
			var held []int // the target's entries after each kill
			for len(held) < 100 {
				c := startChild(t, childSpec{Role: "push", DB: src, File: target, N: 16})
				if pushBatches(t, c, 2+rng.IntN(4)) {
					c.finish(t, time.Minute)
					wantPrefixes(t, srcLogs, target, ids, true)
					t.Logf("the target held %v entries after the kills, then all %d", held, sessions*entries)
					return
				}
				time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
				c.kill()
				held = append(held, wantPrefixes(t, srcLogs, target, ids, false))
			}
			t.Fatalf("no push finished in %d rounds: the target held %v", len(held), held)
		})
	}
}

// pushBatches waits until the push child c has said "batch" n times (its
// first is before the first batch), or "done", which it reports.
func pushBatches(t *testing.T, c *child, n int) (done bool) {
	t.Helper()
	for range n {
		if line := c.expect(t, "", time.Minute, nil); line == "done" {
			return true
		}
	}
	return false
}

// sourceLogs reads the logs of the sessions ids of the source database
// src, which no push changes: read once, they are what every check of a
// target after a push wants (wantPrefixes).
func sourceLogs(t *testing.T, src string, ids []string) map[string][]sessiontree.Entry {
	t.Helper()
	ctx := context.Background()
	from, err := openTarget(ctx, src, false)
	if err != nil {
		t.Fatal(err)
	}
	defer from.Close()
	logs := map[string][]sessiontree.Entry{}
	for _, id := range ids {
		a, err := from.OpenSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		logs[id] = logOf(t, a)
		a.Close()
	}
	return logs
}

// wantPrefixes checks the target after a push: every check passes, and
// each session is there as a prefix of the source's (whole when whole),
// whose logs are srcLogs (sourceLogs). It returns how many entries the
// target holds.
func wantPrefixes(t *testing.T, srcLogs map[string][]sessiontree.Entry, target string, ids []string, whole bool) int {
	t.Helper()
	ctx := context.Background()
	to := checkTarget(t, target, "")
	defer to.Close()
	n := 0
	for _, id := range ids {
		want := srcLogs[id]
		b, err := to.OpenSession(ctx, id)
		if err != nil {
			if whole || !errors.Is(err, sessiontree.ErrNotFound) {
				t.Fatalf("target session %s: %v", id, err)
			}
			continue
		}
		got := logOf(t, b)
		b.Close()
		n += len(got)
		if len(got) > len(want) || whole && len(got) != len(want) {
			t.Fatalf("target session %s has %d entries; want %d (at most, but at the end)", id, len(got), len(want))
		}
		for i := range got {
			if got[i].ID != want[i].ID || string(got[i].Raw) != string(want[i].Raw) {
				t.Fatalf("target session %s entry %d is %s; want %s", id, i+1, got[i].ID, want[i].ID)
			}
		}
	}
	return n
}

// TestPushTwoAtOnce runs two pushes of the same sessions into one target
// at once, two processes: both finish without a conflict (each takes the
// other's batches as its own progress), and the target holds every
// session whole.
func TestPushTwoAtOnce(t *testing.T) {
	t.Parallel()
	for _, e := range dbEngines {
		t.Run("to-"+e.name, func(t *testing.T) {
			t.Parallel()
			// Three sessions of 200 entries: with the fix of 2552a73
			// undone (a push planning again at most 3 times), 3 runs of
			// 3 failed; of 64 entries, 2 of 3, enough for -short's smoke run.
			entries := 200
			if testing.Short() {
				entries = 64
			}
			src, ids := pushSource(t, 3, entries)
			target := e.target(t)
			a := startChild(t, childSpec{Role: "push", DB: src, File: target, N: 8})
			b := startChild(t, childSpec{Role: "push", DB: src, File: target, N: 8})
			for _, c := range []*child{a, b} {
				c.expect(t, "done", 5*time.Minute, nil)
				c.finish(t, time.Minute)
			}
			wantPrefixes(t, sourceLogs(t, src, ids), target, ids, true)
		})
	}
}
