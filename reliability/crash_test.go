package reliability_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/cli"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/storetest"
)

func init() {
	childRoles["crash-engine"] = crashEngineChild
	childRoles["crash-jsonl"] = crashJSONLChild
}

// crashEngineChild opens the database (SQLite or PostgreSQL) and runs the
// crash loop on a session.
func crashEngineChild(ctx context.Context, spec childSpec) error {
	s, err := openTarget(ctx, spec.DB, spec.Sync)
	if err != nil {
		return err
	}
	st, err := s.OpenSession(ctx, spec.Session)
	if errors.Is(err, sessiontree.ErrNotFound) {
		// The first round creates the database (SQLite) and the session,
		// so that early kills land in the migrations too.
		st, err = s.Create(ctx, store.CreateOptions{ID: spec.Session, Cwd: "/crash"})
	}
	if err != nil {
		return err
	}
	return crashLoop(ctx, st, spec)
}

// crashJSONLChild opens the session file for writing, recovering a torn
// tail if the last kill left one, and runs the crash loop on it.
func crashJSONLChild(ctx context.Context, spec childSpec) error {
	st, err := jsonl.Open(ctx, spec.File, jsonl.Options{Sync: spec.Sync})
	if err != nil {
		return err
	}
	return crashLoop(ctx, st, spec)
}

// crashLoop writes to st until it is killed, printing "ack <id>" after
// each write returns. The writes are what an agent does: messages (a
// quarter of them tool results with an image of up to spec.Big bytes, so
// that a kill often lands in the middle of a write), labels, names, moves
// of the leaf to an earlier entry (new branches, which rewrite the
// engine's materialized branch) and compactions.
func crashLoop(ctx context.Context, st sessiontree.Storage, spec childSpec) error {
	rng := rand.New(rand.NewPCG(spec.Seed, 8))
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	cur, err := st.Leaf(ctx)
	if err != nil {
		return err
	}
	var recent []string // ids written by this process, newest last
	if cur != "" {
		recent = append(recent, cur)
	}
	printLine("ready")
	for i := 0; ; i++ {
		var e sessiontree.Entry
		var err error
		tag := fmt.Sprintf("%d.%d", spec.Seed, i)
		next := ""
		switch r := rng.IntN(100); {
		case r < 4 && len(recent) > 0:
			e, err = s.SetLabel(ctx, recent[rng.IntN(len(recent))], "label "+tag)
		case r < 7 && len(recent) > 2:
			next = recent[rng.IntN(len(recent)-1)]
			e, err = st.SetLeaf(ctx, next, sessiontree.AppendOptions{})
		case r < 9:
			e, err = s.SetName(ctx, "name "+tag)
		case r < 11 && cur != "":
			e, err = s.AppendCompaction(ctx, sessiontree.Compaction{Summary: "summary " + tag, FirstKeptEntryID: cur, TokensBefore: 1000})
		case r < 36 && spec.Big > 0:
			e, err = s.AppendMessage(ctx, imageResult(tag, 1+rng.IntN(spec.Big)))
		default:
			e, err = s.AppendMessage(ctx, userMessage("message "+tag))
		}
		if err != nil {
			return fmt.Errorf("write %d: %w", i, err)
		}
		printLine("ack %s", e.ID)
		if next == "" {
			next = e.ID
		}
		cur = next
		recent = append(recent, e.ID)
		if len(recent) > 64 {
			recent = recent[1:]
		}
	}
}

// crashMode is one backend and durability setting under test.
type crashMode struct {
	name   string
	engine *dbEngine // nil: JSONL
	sync   bool
}

// crashStats are what a crash test did, for its log.
type crashStats struct {
	rounds, kills, beforeReady int
	beforeAck                  int // kills before the child acknowledged a write (those while opening included)
	acked, checked             int // acknowledged writes; entries checked after the last round
	unacked                    int // entries present though never acknowledged
	torn, sidecars             int // JSONL: torn tails recovered, sidecars written
	files                      int // JSONL: files used
	sessions                   int // engine: sessions used
	aimed                      int // JSONL: kills aimed at a write in progress
}

// TestCrashSafety kills a writing process with SIGKILL at random moments
// and checks, after every kill, that the data is intact and that every
// acknowledged write is there: the SQLite engine with synchronous=NORMAL
// and FULL, the PostgreSQL engine (a client killed in the middle of its
// transaction), the JSONL backend with and without Sync. See the package
// doc for what this proves and what it does not.
func TestCrashSafety(t *testing.T) {
	t.Parallel()
	// -short: 3 rounds, the first of which makes the database or file;
	// each round takes one of the ways to kill at random.
	rounds := pick(3, 20, 100)
	sqlite, postgres := &dbEngines[0], &dbEngines[1]
	modes := []crashMode{
		{name: "engine/synchronous=NORMAL", engine: sqlite},
		{name: "engine/synchronous=FULL", engine: sqlite, sync: true},
		{name: "postgres", engine: postgres},
		{name: "jsonl/no-sync"},
		{name: "jsonl/sync", sync: true},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			st := runCrash(t, m, rounds)
			msg := fmt.Sprintf("%s: %d rounds, %d kills (%d while opening, %d before any write was acknowledged), %d acknowledged writes all present, %d entries checked at the end, %d written but unacknowledged",
				m.name, st.rounds, st.kills, st.beforeReady, st.beforeAck, st.acked, st.checked, st.unacked)
			if m.engine != nil {
				msg += fmt.Sprintf(", %d sessions", st.sessions)
			} else {
				msg += fmt.Sprintf(", %d kills aimed at a write, %d torn tails recovered with %d sidecars, %d files", st.aimed, st.torn, st.sidecars, st.files)
			}
			t.Log(msg)
		})
	}
}

func runCrash(t *testing.T, m crashMode, rounds int) crashStats {
	ctx := context.Background()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	var stats crashStats
	acked := map[string]bool{}
	// The engine's writes take longer under the race detector (SQLite is
	// C translated to Go): give its child more time between kills. Its
	// big entries span many pages (overflow pages, several WAL frames);
	// the JSONL ones make writes long enough to be caught halfway.
	maxDelay := pick[time.Duration](60, 120, 250) * time.Millisecond
	big := pick(512<<10, 1<<20, 4<<20)
	if m.engine != nil {
		if storetest.RaceEnabled {
			maxDelay *= 2
		}
		big = 64 << 10
	}

	spec := childSpec{Sync: m.sync, Big: big}
	prev := map[string]bool{} // ids of the sessions filled before
	var verify func(round int)
	if m.engine != nil {
		// A session is replaced by a new one in the same database once it
		// has maxEntries entries, so that checking it after each kill does
		// not grow without end; the child creates it.
		maxEntries := 4000
		spec.Role, spec.DB = "crash-engine", m.engine.target(t)
		newSession := func() {
			id, err := sessiontree.NewSessionID()
			if err != nil {
				t.Fatal(err)
			}
			spec.Session = id
			stats.sessions++
		}
		newSession()
		verify = func(round int) {
			s := checkTarget(t, spec.DB, spec.Session)
			defer s.Close()
			st, err := s.OpenSession(ctx, spec.Session)
			if errors.Is(err, sessiontree.ErrNotFound) {
				return // killed before the session was made
			}
			if err != nil {
				t.Fatal(err)
			}
			log := logOf(t, st)
			stats.checked, stats.unacked = checkAcked(t, round, log, acked, prev)
			if len(log) > maxEntries {
				for _, e := range log {
					prev[e.ID] = true
				}
				newSession()
			}
		}
	} else {
		spec.Role = "crash-jsonl"
		maxFile := int64(pick(2, 4, 64) << 20)
		newFile := func() {
			stats.files++
			spec.File = filepath.Join(dir, fmt.Sprintf("session-%d.jsonl", stats.files))
			st, err := jsonl.Create(ctx, spec.File, sessiontree.SessionMeta{Cwd: "/crash"}, jsonl.Options{})
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
		}
		newFile()
		verify = func(round int) {
			log := verifyJSONL(t, spec.File, m.sync, acked, &stats)
			stats.checked, stats.unacked = checkAcked(t, round, log, acked, prev)
			if fi, err := os.Stat(spec.File); err == nil && fi.Size() > maxFile {
				for _, e := range log {
					prev[e.ID] = true
				}
				newFile()
			}
		}
	}

	for round := 1; round <= rounds; round++ {
		spec.Seed = uint64(round)
		c := startChild(t, spec)
		switch {
		case rng.IntN(8) == 0:
			// Now and then, kill during the open: the engine's connection
			// setup, the JSONL torn-tail recovery.
			time.Sleep(time.Duration(rng.Int64N(int64(300 * time.Millisecond))))
			stats.beforeReady++
		case m.engine == nil && rng.IntN(2) == 0:
			// Aim: kill the moment the file ends inside a line, that is
			// in the middle of a write, which a random moment rarely hits
			// (most of an append's time is spent outside the write).
			c.expect(t, "ready", time.Minute, nil)
			if waitMidLine(spec.File, 3*time.Second) {
				stats.aimed++
			}
		default:
			c.expect(t, "ready", time.Minute, nil)
			time.Sleep(time.Duration(rng.Int64N(int64(maxDelay))))
		}
		c.kill()
		stats.kills++
		err := c.wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: child exited by itself (%v), not by the kill\nstderr:\n%s", round, err, c.errb)
		}
		lines := c.rest()
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "ack ") }) {
			stats.beforeAck++
		}
		for _, line := range lines {
			switch {
			case strings.HasPrefix(line, "ack "):
				acked[strings.TrimPrefix(line, "ack ")] = true
				stats.acked++
			case strings.HasPrefix(line, "error "):
				t.Fatalf("round %d: child: %s", round, line)
			}
		}
		verify(round)
		stats.rounds++
	}
	if m.engine != nil {
		// Every session of the database, and the command line's check
		// agrees.
		checkTarget(t, spec.DB, "").Close()
		if out := cliOK(t, "", "--db", spec.DB, "check"); !strings.HasPrefix(out, "ok:") {
			t.Errorf("sessiontree check = %q; want ok", out)
		}
	} else {
		if out := cliOK(t, "", "check", spec.File); !strings.HasPrefix(out, "ok:") {
			t.Errorf("sessiontree check %s = %q; want ok", spec.File, out)
		}
	}
	return stats
}

// checkAcked checks that every acknowledged id is in the log (or in prev,
// the ids of earlier sessions) and that at most one write per kill is
// present without acknowledgement (the one in flight). It returns the
// number of entries checked and of unacknowledged ones.
func checkAcked(t *testing.T, round int, log []sessiontree.Entry, acked, prev map[string]bool) (checked, unacked int) {
	t.Helper()
	present := make(map[string]bool, len(log)+len(prev))
	for id := range prev {
		present[id] = true
	}
	seen := make(map[string]bool, len(log))
	for _, e := range log {
		if seen[e.ID] {
			t.Fatalf("round %d: id %s appears twice", round, e.ID)
		}
		seen[e.ID] = true
		present[e.ID] = true
	}
	for id := range acked {
		if !present[id] {
			t.Fatalf("round %d: acknowledged entry %s is lost (%d acknowledged, %d present)", round, id, len(acked), len(present))
		}
	}
	// Every entry is acknowledged but the ones the parent wrote itself
	// (JSONL: one per round, also acknowledged) and at most one per kill.
	unacked = len(present) - len(acked)
	if unacked > round {
		t.Fatalf("round %d: %d entries present without acknowledgement; at most one per kill", round, unacked)
	}
	return len(present), unacked
}

// verifyJSONL checks a session file after a kill: it opens it for
// writing, which recovers a torn tail into a sidecar; the parent's own
// next append must then land on a clean line, and the whole file must
// read in Strict mode and pass `sessiontree check`'s tree check. It
// returns the file's log.
func verifyJSONL(t *testing.T, path string, sync bool, acked map[string]bool, stats *crashStats) []sessiontree.Entry {
	t.Helper()
	ctx := context.Background()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := jsonl.Open(ctx, path, jsonl.Options{Sync: sync})
	if err != nil {
		t.Fatalf("open for writing after a kill: %v", err)
	}
	torn := st.Report().Torn
	if torn != nil {
		stats.torn++
		side, err := os.ReadFile(torn.Sidecar)
		if err != nil {
			t.Fatalf("torn tail's sidecar: %v", err)
		}
		stats.sidecars++
		if !bytes.Equal(side, before[torn.Offset:]) || len(side) != torn.Size {
			t.Fatalf("sidecar %s holds %d bytes; want the %d torn bytes at offset %d", torn.Sidecar, len(side), torn.Size, torn.Offset)
		}
		if torn.Offset > 0 && before[torn.Offset-1] != '\n' {
			t.Fatalf("torn tail at offset %d does not start a line", torn.Offset)
		}
	}
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	e, err := s.AppendMessage(ctx, userMessage("after the kill"))
	if err != nil {
		t.Fatalf("append after a kill: %v", err)
	}
	acked[e.ID] = true
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	line := append(append([]byte{'\n'}, e.Raw...), '\n')
	if !bytes.HasSuffix(data, line) {
		t.Fatalf("the append after the kill is not a clean last line: file ends %q", tail(data, 200))
	}
	clean, err := jsonl.Open(ctx, path, jsonl.Options{ReadOnly: true, Mode: jsonl.Strict})
	if err != nil {
		t.Fatalf("strict open after recovery: %v", err)
	}
	defer clean.Close()
	if r := clean.Report(); len(r.Warnings) != 0 || r.Torn != nil {
		t.Fatalf("strict open after recovery reports %+v", r)
	}
	if leaf, _ := clean.Leaf(ctx); leaf != e.ID {
		t.Fatalf("leaf after recovery = %s; want the new entry %s", leaf, e.ID)
	}
	// What `sessiontree check FILE` checks after reading the file (the
	// command itself runs once at the end of the test).
	if problems, err := cli.CheckStorage(ctx, clean); err != nil || len(problems) != 0 {
		t.Fatalf("CheckStorage after recovery = %v, %v", problems, err)
	}
	return logOf(t, clean)
}

// waitMidLine polls the end of the file at path until its last byte is
// not a newline, a write caught in the middle, and reports whether it saw
// one before timeout.
func waitMidLine(path string, timeout time.Duration) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var last [1]byte
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		fi, err := f.Stat()
		if err != nil {
			return false
		}
		if n := fi.Size(); n > 0 {
			if _, err := f.ReadAt(last[:], n-1); err == nil && last[0] != '\n' {
				return true
			}
		}
	}
	return false
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
