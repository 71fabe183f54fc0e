package reliability_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
)

func init() {
	childRoles["writer"] = writerChild
	childRoles["reader"] = readerChild
	childRoles["hold-lock"] = holdLockChild
	childRoles["try-lock"] = tryLockChild
}

// waitStdin blocks until the parent writes a line (or closes stdin).
func waitStdin() {
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

// writerChild appends spec.N messages to a session once the parent says
// go. With spec.Guard each append is guarded by the leaf it read a moment
// before (a stale view, deliberately): a conflict is counted and the
// append retried with the new leaf. The database is opened with default
// options, so a busy database (SQLite) or a locked row (PostgreSQL) must
// be handled inside the engine.
func writerChild(ctx context.Context, spec childSpec) error {
	s, err := openTarget(ctx, spec.DB, false)
	if err != nil {
		return err
	}
	defer s.Close()
	st, err := s.OpenSession(ctx, spec.Session)
	if err != nil {
		return err
	}
	sess := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	rng := rand.New(rand.NewPCG(spec.Seed, 3))
	printLine("ready")
	waitStdin()
	conflicts := 0
	for i := 0; i < spec.N; i++ {
		msg := userMessage(fmt.Sprintf("%s %d", spec.Tag, i))
		if !spec.Guard {
			e, err := sess.AppendMessage(ctx, msg)
			if err != nil {
				return fmt.Errorf("append %d: %w", i, err)
			}
			printLine("ack %s", e.ID)
			continue
		}
		fields, err := sessiontree.Fields("message", msg)
		if err != nil {
			return err
		}
		for {
			leaf, err := st.Leaf(ctx)
			if err != nil {
				return err
			}
			time.Sleep(time.Duration(rng.Int64N(int64(time.Millisecond))))
			e, err := st.Append(ctx, sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: fields}, sessiontree.IfLeaf(leaf))
			var ce *sessiontree.ConflictError
			if errors.As(err, &ce) {
				if ce.Want != leaf || ce.Got == leaf {
					return fmt.Errorf("conflict error %+v for a guard on %q", ce, leaf)
				}
				conflicts++
				continue
			}
			if err != nil {
				return fmt.Errorf("guarded append %d: %w", i, err)
			}
			if e.ParentID != leaf {
				return fmt.Errorf("guarded append on %q landed under %q", leaf, e.ParentID)
			}
			printLine("ack %s", e.ID)
			break
		}
	}
	printLine("done %d", conflicts)
	return nil
}

// readerChild reads a session that other processes are appending to, in a
// loop until stdin closes, and checks that every read sees a consistent
// tree: the path from the leaf reaches the root through existing
// parents, it only grows, counts only grow, the log grows as one chain
// with no gap in sequence numbers, and the context has a message per
// entry of the path.
func readerChild(ctx context.Context, spec childSpec) error {
	s, err := openTarget(ctx, spec.DB, false)
	if err != nil {
		return err
	}
	defer s.Close()
	st, err := s.OpenSession(ctx, spec.Session)
	if err != nil {
		return err
	}
	sess := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	var stop atomic.Bool
	go func() {
		_, _ = bufio.NewReader(os.Stdin).ReadString(0) // until EOF
		stop.Store(true)
	}()
	printLine("ready")
	var reads, prevPath int
	var prevEntries, lastSeq int64
	lastID := ""
	for !stop.Load() {
		leaf, err := st.Leaf(ctx)
		if err != nil {
			return err
		}
		path, err := st.FullPath(ctx, leaf)
		if err != nil {
			return fmt.Errorf("read %d: path from leaf %s: %w", reads, leaf, err)
		}
		for i, e := range path {
			want := ""
			if i > 0 {
				want = path[i-1].ID
			}
			if e.ParentID != want {
				return fmt.Errorf("read %d: path entry %d (%s) has parent %q; want %q", reads, i, e.ID, e.ParentID, want)
			}
		}
		if leaf != "" && (len(path) == 0 || path[len(path)-1].ID != leaf) {
			return fmt.Errorf("read %d: path does not end at the leaf %s", reads, leaf)
		}
		if len(path) < prevPath {
			return fmt.Errorf("read %d: path shrank from %d to %d entries", reads, prevPath, len(path))
		}
		prevPath = len(path)
		stats, err := st.Stats(ctx)
		if err != nil {
			return err
		}
		if stats.Entries < prevEntries || stats.Entries < int64(len(path)) {
			return fmt.Errorf("read %d: %d entries after %d, with a path of %d", reads, stats.Entries, prevEntries, len(path))
		}
		prevEntries = stats.Entries
		more, err := st.Log(ctx, lastSeq, 0)
		if err != nil {
			return err
		}
		for _, e := range more {
			if e.Seq != lastSeq+1 || e.ParentID != lastID {
				return fmt.Errorf("read %d: log entry seq %d (%s, parent %q) after seq %d (%s): a gap or a sibling", reads, e.Seq, e.ID, e.ParentID, lastSeq, lastID)
			}
			lastSeq, lastID = e.Seq, e.ID
		}
		if reads%8 == 0 && leaf != "" {
			c, err := sess.Context(ctx, sessiontree.ContextOptions{From: leaf})
			if err != nil {
				return err
			}
			if len(c.Messages) != len(path) {
				return fmt.Errorf("read %d: context of %d messages for a path of %d", reads, len(c.Messages), len(path))
			}
		}
		reads++
	}
	printLine("reads %d %d", reads, lastSeq)
	return nil
}

// TestConcurrentWriters runs N writer processes of M appends each on one
// session of one database, with reader processes checking what they see
// all along; then the same with the leaf guard; on each engine.
func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	writers, each, readers := pick(2, 4, 8), pick(15, 40, 400), pick(1, 2, 4)
	for _, eng := range dbEngines {
		for _, guard := range []bool{false, true} {
			name := eng.name + "/unguarded"
			if guard {
				name = eng.name + "/guarded"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				n := each
				if guard {
					n = max(each/2, 1) // every conflict costs a retry
				}
				runWriters(t, eng.target(t), writers, n, readers, guard)
			})
		}
	}
}

func runWriters(t *testing.T, path string, writers, each, readers int, guard bool) {
	ctx := context.Background()
	s, err := openTarget(ctx, path, false)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Create(ctx, store.CreateOptions{Cwd: "/concurrent"})
	if err != nil {
		t.Fatal(err)
	}
	id := st.ID()
	s.Close()

	var ws, rs []*child
	for i := range writers {
		ws = append(ws, startChild(t, childSpec{Role: "writer", DB: path, Session: id, N: each, Tag: fmt.Sprintf("w%d", i), Guard: guard, Seed: uint64(i + 1)}))
	}
	for range readers {
		rs = append(rs, startChild(t, childSpec{Role: "reader", DB: path, Session: id}))
	}
	for _, c := range append(ws[:len(ws):len(ws)], rs...) {
		c.expect(t, "ready", time.Minute, nil)
	}
	start := time.Now()
	for _, c := range ws {
		if _, err := c.stdin.Write([]byte("go\n")); err != nil {
			t.Fatal(err)
		}
	}
	acked := map[string]bool{}
	conflicts := 0
	for i, c := range ws {
		for _, line := range c.finish(t, 3*time.Minute) {
			switch f := strings.Fields(line); {
			case len(f) == 2 && f[0] == "ack":
				acked[f[1]] = true
			case len(f) == 2 && f[0] == "done":
				n, _ := strconv.Atoi(f[1])
				conflicts += n
			case len(f) > 0 && f[0] == "error":
				t.Fatalf("writer %d: %s", i, line)
			}
		}
	}
	elapsed := time.Since(start)
	totalReads := 0
	for i, c := range rs {
		for _, line := range c.finish(t, time.Minute) {
			var n, seq int
			if _, err := fmt.Sscanf(line, "reads %d %d", &n, &seq); err == nil {
				totalReads += n
			} else if strings.HasPrefix(line, "error") {
				t.Fatalf("reader %d: %s", i, line)
			}
		}
	}

	s = checkTarget(t, path, "")
	defer s.Close()
	st, err = s.OpenSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	log := logOf(t, st)
	if len(log) != writers*each {
		t.Fatalf("%d entries; want exactly %d×%d = %d", len(log), writers, each, writers*each)
	}
	checkChain(t, st, log)
	perWriter := map[string]int{}
	for _, e := range log {
		if !acked[e.ID] {
			t.Errorf("entry %s was never acknowledged", e.ID)
		}
		m, _ := e.Field("message")
		text := string(m)
		if i := strings.Index(text, `"content":"`); i >= 0 {
			text = text[i+len(`"content":"`):]
			perWriter[strings.Fields(text)[0]]++
		}
	}
	for i := range writers {
		if got := perWriter[fmt.Sprintf("w%d", i)]; got != each {
			t.Errorf("writer w%d has %d entries; want %d", i, got, each)
		}
	}
	if len(acked) != writers*each {
		t.Errorf("%d acknowledged appends; want %d", len(acked), writers*each)
	}
	t.Logf("%d writer processes × %d appends (guard %v): %d entries in one chain in %v, %d conflicts retried, %d consistent reads by %d reader processes",
		writers, each, guard, len(log), elapsed.Round(time.Millisecond), conflicts, totalReads, readers)
}

// TestStaleWriterConflict is the leaf guard made deterministic: a writer
// reads the leaf, another connection (as another process would) appends,
// and the first writer's guarded append fails with ErrConflict, writing
// nothing; the other's entry is intact and a retry on the new leaf
// succeeds. On each engine.
func TestStaleWriterConflict(t *testing.T) {
	t.Parallel()
	for _, eng := range dbEngines {
		t.Run(eng.name, func(t *testing.T) { staleWriterConflict(t, eng.target(t)) })
	}
}

func staleWriterConflict(t *testing.T, target string) {
	ctx := context.Background()
	a := openTargetStore(t, target)
	b := openTargetStore(t, target)
	sa, err := a.Create(ctx, store.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.OpenSession(ctx, sa.ID())
	if err != nil {
		t.Fatal(err)
	}
	first, err := sessiontree.NewSession(sa, sessiontree.SessionOptions{}).AppendMessage(ctx, userMessage("first"))
	if err != nil {
		t.Fatal(err)
	}
	stale, err := sa.Leaf(ctx)
	if err != nil || stale != first.ID {
		t.Fatalf("Leaf() = %q, %v; want %s", stale, err, first.ID)
	}
	other, err := sessiontree.NewSession(sb, sessiontree.SessionOptions{}).AppendMessage(ctx, userMessage("other process"))
	if err != nil {
		t.Fatal(err)
	}
	fields, _ := sessiontree.Fields("message", userMessage("stale"))
	d := sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: fields}
	_, err = sa.Append(ctx, d, sessiontree.IfLeaf(stale))
	var ce *sessiontree.ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, sessiontree.ErrConflict) || ce.Want != stale || ce.Got != other.ID {
		t.Fatalf("Append(IfLeaf(%s)) = %v; want a ConflictError{Want: %s, Got: %s}", stale, err, stale, other.ID)
	}
	if _, err := sa.SetLeaf(ctx, first.ID, sessiontree.IfLeaf(stale)); !errors.Is(err, sessiontree.ErrConflict) {
		t.Fatalf("SetLeaf(IfLeaf(%s)) = %v; want ErrConflict", stale, err)
	}
	log := logOf(t, sb)
	if len(log) != 2 || log[0].ID != first.ID || log[1].ID != other.ID || !bytes.Equal(log[1].Raw, other.Raw) {
		t.Fatalf("log after the conflict = %v; want the two entries, the other process's intact", log)
	}
	e, err := sa.Append(ctx, d, sessiontree.IfLeaf(other.ID))
	if err != nil || e.ParentID != other.ID {
		t.Fatalf("retry on the new leaf = %+v, %v; want it under %s", e, err, other.ID)
	}
}

// holdLockChild opens a session file for writing, which takes its lock,
// appends one entry, and holds the file until stdin closes.
func holdLockChild(ctx context.Context, spec childSpec) error {
	st, err := jsonl.Open(ctx, spec.File, jsonl.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	e, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).AppendMessage(ctx, userMessage("holder"))
	if err != nil {
		return err
	}
	printLine("locked %s", e.ID)
	waitStdin()
	return nil
}

// tryLockChild tries to open a session file for writing and says how it
// went: "refused locked <error>" for the lock error, "opened" otherwise.
func tryLockChild(ctx context.Context, spec childSpec) error {
	st, err := jsonl.Open(ctx, spec.File, jsonl.Options{})
	switch {
	case errors.Is(err, sessiontree.ErrLocked):
		printLine("refused locked %s", strings.ReplaceAll(err.Error(), "\n", " "))
		return nil
	case err != nil:
		return err
	}
	st.Close()
	printLine("opened")
	return nil
}

// TestJSONLSecondWriterRefused holds a session file's write lock in one
// process; a second writer, in another process and in this one, is
// refused with the lock error, and the file is not changed; readers (a
// read-only open, the command line) are not blocked. Once the holder dies (SIGKILL: no
// chance to unlock), the lock is gone with it and a writer gets in.
func TestJSONLSecondWriterRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	st, err := jsonl.Create(ctx, path, sessiontree.SessionMeta{Cwd: "/lock"}, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()

	holder := startChild(t, childSpec{Role: "hold-lock", File: path})
	line := holder.expect(t, "locked ", time.Minute, nil)
	held := strings.TrimPrefix(line, "locked ")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	other := startChild(t, childSpec{Role: "try-lock", File: path})
	if got := other.expect(t, "", time.Minute, nil); !strings.HasPrefix(got, "refused locked") || !strings.Contains(got, "locked by another writer") {
		t.Errorf("second writer process: %q; want the lock error", got)
	}
	other.finish(t, time.Minute)

	if _, err := jsonl.Open(ctx, path, jsonl.Options{}); !errors.Is(err, sessiontree.ErrLocked) {
		t.Errorf("Open for writing in this process = %v; want ErrLocked", err)
	}
	// The command line reads session files without the lock (and never
	// writes them), so it is not blocked either.
	if out := cliOK(t, "", "branch", path, "--json"); !strings.Contains(out, held) {
		t.Errorf("sessiontree branch while locked = %q; want the holder's entry %s", out, held)
	}
	ro, err := jsonl.Open(ctx, path, jsonl.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open while locked = %v", err)
	}
	if leaf, _ := ro.Leaf(ctx); leaf != held {
		t.Errorf("reader sees leaf %q; want the holder's %s", leaf, held)
	}
	ro.Close()
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Errorf("the refused writers changed the file")
	}

	holder.kill()
	st, err = jsonl.Open(ctx, path, jsonl.Options{})
	if err != nil {
		t.Fatalf("Open for writing after the holder died = %v", err)
	}
	defer st.Close()
	if _, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).AppendMessage(ctx, userMessage("next")); err != nil {
		t.Fatal(err)
	}
}
