package reliability_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/storetest"
)

// A randomized concurrent schedule on one SQLite store: goroutines of
// this process and a child process append at random (messages, batches,
// labels, leaf moves, compactions, names; some under a context that ends
// while the append runs) to the same sessions, while other goroutines
// fork, export, import files, check, index and search, delete forks and
// list, and the sessiontree command checks and exports. Every outcome is
// recorded in a ledger, and at the end, with the store opened again, the
// ledger must be what the database holds: each session holds exactly the
// entries its appends were told were stored, byte for byte (a failed
// append left nothing), every count agrees with a recount, every export
// taken along the way is a prefix of its session's final log, every fork
// a whole tree, every entry is found by a search.

func init() {
	childRoles["schedule"] = scheduleChild
}

// scheduleSeed is SESSIONTREE_SCHEDULE_SEED, or a new seed.
func scheduleSeed() uint64 {
	if s, err := strconv.ParseUint(os.Getenv("SESSIONTREE_SCHEDULE_SEED"), 10, 64); err == nil {
		return s
	}
	return uint64(time.Now().UnixNano())
}

// digest is an entry's JSON's SHA-256, in hex.
func digest(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// scheduleWriter makes a schedule's random writes to sessions.
type scheduleWriter struct {
	s        *store.Store
	sessions []string
	handles  map[string]sessiontree.DatabaseSession
	rng      *rand.Rand
	tag      string              // this writer's part of every marker
	n        int                 // markers made
	known    map[string][]string // per session, the ids this writer stored
	// doomed is a session another goroutine deletes: a write to it may
	// find it gone, and the writer then leaves it.
	doomed string
	// lost counts the writes that failed cleanly (their context ended,
	// their guard no longer held), which must have left nothing.
	lost int
	// ack is told of each entry stored, with its marker ("" for none).
	ack func(session string, e sessiontree.Entry, marker string)
}

// newScheduleWriter makes a writer to the sessions of ids: ids separated
// by commas, then "|" and the doomed session.
func newScheduleWriter(s *store.Store, ids string, seed uint64, tag string, ack func(string, sessiontree.Entry, string)) *scheduleWriter {
	shared, doomed, _ := strings.Cut(ids, "|")
	return &scheduleWriter{s: s, sessions: append(strings.Split(shared, ","), doomed), doomed: doomed,
		handles: map[string]sessiontree.DatabaseSession{}, rng: rand.New(rand.NewPCG(seed, 7)), tag: tag,
		known: map[string][]string{}, ack: ack}
}

// marker is a new word found in no other entry.
func (w *scheduleWriter) marker() string {
	w.n++
	return fmt.Sprintf("zq%sx%dzq", w.tag, w.n)
}

// session returns the handle of session id, opened once.
func (w *scheduleWriter) session(ctx context.Context, id string) (sessiontree.DatabaseSession, error) {
	if st := w.handles[id]; st != nil {
		return st, nil
	}
	st, err := w.s.OpenSession(ctx, id)
	if err == nil {
		w.handles[id] = st
	}
	return st, err
}

// write does one random write. A write that failed because its context
// ended or its guard no longer held is a write that must have left
// nothing (the final check holds the session to the ledger); any other
// error is returned and fails the test.
func (w *scheduleWriter) write(ctx context.Context) error {
	sid := w.sessions[w.rng.IntN(len(w.sessions))]
	st, err := w.session(ctx, sid)
	if err != nil {
		return w.gone(sid, "open", err)
	}
	opCtx, ended := ctx, false
	if w.rng.IntN(8) == 0 {
		var cancel context.CancelFunc
		opCtx, cancel = context.WithTimeout(ctx, time.Duration(w.rng.IntN(500))*time.Microsecond)
		defer cancel()
		ended = true
	}
	what, stored, markers, err := w.apply(opCtx, st)
	if err != nil {
		if ended && opCtx.Err() != nil && errors.Is(err, opCtx.Err()) || errors.Is(err, sessiontree.ErrConflict) {
			w.lost++
			return nil
		}
		return w.gone(sid, what, err)
	}
	for i, e := range stored {
		m := ""
		if i < len(markers) {
			m = markers[i]
		}
		w.known[sid] = append(w.known[sid], e.ID)
		w.ack(sid, e, m)
	}
	return nil
}

// gone returns nil when err says that the doomed session sid is gone,
// and leaves it; otherwise it returns err, which fails the test.
func (w *scheduleWriter) gone(sid, what string, err error) error {
	if sid != w.doomed || !errors.Is(err, sessiontree.ErrNotFound) {
		return fmt.Errorf("%s on session %s: %w", what, sid, err)
	}
	w.sessions = slices.DeleteFunc(w.sessions, func(id string) bool { return id == sid })
	w.lost++
	return nil
}

// apply makes one random write on st and returns what it was, what it
// stored, and the markers of the entries stored (by position).
func (w *scheduleWriter) apply(ctx context.Context, st sessiontree.DatabaseSession) (what string, stored []sessiontree.Entry, markers []string, err error) {
	sess := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	known := w.known[st.ID()]
	var e sessiontree.Entry
	switch r := w.rng.IntN(100); {
	case r < 45:
		m := w.marker()
		e, err = sess.AppendMessage(ctx, userMessage("schedule "+m))
		return "append", []sessiontree.Entry{e}, []string{m}, err
	case r < 65:
		drafts := make([]sessiontree.Draft, 2+w.rng.IntN(4))
		for i := range drafts {
			m := w.marker()
			markers = append(markers, m)
			drafts[i] = sessiontree.Draft{Type: sessiontree.TypeMessage,
				Fields: []byte(`{"message":` + string(userMessage("batch "+m)) + `}`)}
		}
		stored, err = st.AppendAll(ctx, drafts, sessiontree.AppendOptions{})
		return "append batch", stored, markers, err
	case r < 75 && len(known) > 0:
		e, err = sess.SetLabel(ctx, known[w.rng.IntN(len(known))], w.marker())
		return "label", []sessiontree.Entry{e}, nil, err
	case r < 85 && len(known) > 0:
		e, err = st.SetLeaf(ctx, known[w.rng.IntN(len(known))], sessiontree.AppendOptions{})
		return "move leaf", []sessiontree.Entry{e}, nil, err
	case r < 90:
		e, err = sess.AppendCompaction(ctx, sessiontree.Compaction{Summary: "summary " + w.marker(), TokensBefore: 1000})
		return "compaction", []sessiontree.Entry{e}, nil, err
	case r < 95 && len(known) > 0:
		return "refused batch", nil, nil, w.refusedBatch(ctx, st, known)
	default:
		e, err = sess.SetName(ctx, "name "+w.marker())
		return "name", []sessiontree.Entry{e}, nil, err
	}
}

// refusedBatch appends a batch whose last draft takes an id the session
// holds: refused with ErrConflict after its first drafts were written,
// which in a group of appends makes the group run again with each append
// in a savepoint (engine/group.go). Nothing of it may stay, and the
// others' appends must; it returns the refusal, or another error for
// write to judge.
func (w *scheduleWriter) refusedBatch(ctx context.Context, st sessiontree.DatabaseSession, known []string) error {
	drafts := make([]sessiontree.Draft, 1+w.rng.IntN(3))
	for i := range drafts {
		drafts[i] = sessiontree.Draft{Type: sessiontree.TypeMessage,
			Fields: []byte(`{"message":` + string(userMessage("refused "+w.marker())) + `}`)}
	}
	drafts = append(drafts, sessiontree.Draft{Type: sessiontree.TypeMessage, ID: known[w.rng.IntN(len(known))],
		Fields: []byte(`{"message":` + string(userMessage("taken id")) + `}`)})
	stored, err := st.AppendAll(ctx, drafts, sessiontree.AppendOptions{})
	if errors.Is(err, sessiontree.ErrConflict) || endedBy(ctx, err) || errors.Is(err, sessiontree.ErrNotFound) {
		return err // write tells which is expected (the doomed session gone)
	}
	return fmt.Errorf("a batch ending in a taken id = %d entries, %v; want ErrConflict", len(stored), err)
}

// scheduleChild makes spec.N random writes to the sessions of spec.Tag
// (see newScheduleWriter) once the parent says go, says "ack <session>
// <id> <digest> <marker>" for each entry stored and, at the end, "lost
// <n>" for the writes that failed cleanly.
func scheduleChild(ctx context.Context, spec childSpec) error {
	s, err := store.Open(ctx, spec.DB, store.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	w := newScheduleWriter(s, spec.Tag, spec.Seed, "c", func(sid string, e sessiontree.Entry, m string) {
		printLine("ack %s %s %s %s", sid, e.ID, digest(e.Raw), m)
	})
	printLine("ready")
	waitStdin()
	for range spec.N {
		if err := w.write(ctx); err != nil {
			return err
		}
	}
	printLine("lost %d", w.lost)
	return nil
}

// ledger is what the schedule's operations were told.
type ledger struct {
	mu sync.Mutex
	// acked holds, per session, the digest of every entry stored.
	acked map[string]map[string]string
	// marked lists the message entries stored by their marker.
	marked  []markedEntry
	exports []exportTaken
	deleted map[string]bool
	forks   []string            // the forks not deleted
	forked  map[string]forkMade // every fork made, by id
	lost    int                 // writes that failed cleanly
}

type markedEntry struct{ marker, session, id string }

// forkMade is a fork made while others wrote.
type forkMade struct {
	src  string
	tree bool
}

// exportTaken is a session's export taken while others wrote: its
// header line and entry lines.
type exportTaken struct {
	session, by string
	lines       [][]byte
}

func newLedger() *ledger {
	return &ledger{acked: map[string]map[string]string{}, deleted: map[string]bool{}, forked: map[string]forkMade{}}
}

// made records a session made, with no entry yet.
func (l *ledger) made(session string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.acked[session] == nil {
		l.acked[session] = map[string]string{}
	}
}

// ack records an entry stored.
func (l *ledger) ack(session, id, sum, marker string) {
	l.made(session)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.acked[session][id] = sum
	if marker != "" {
		l.marked = append(l.marked, markedEntry{marker, session, id})
	}
}

// ackEntry is ack of an entry of this process.
func (l *ledger) ackEntry(session string, e sessiontree.Entry, marker string) {
	l.ack(session, e.ID, digest(e.Raw), marker)
}

// someMarked returns an entry marked before the call, if any.
func (l *ledger) someMarked(rng *rand.Rand) (markedEntry, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.marked) == 0 {
		return markedEntry{}, false
	}
	return l.marked[rng.IntN(len(l.marked))], true
}

// schedule is one run of the randomized schedule.
type schedule struct {
	t        *testing.T
	path     string
	s        *store.Store
	sessions []string // the sessions the writers share
	doomed   string   // a session they share too, which doomer deletes
	writes   int      // how many writes each writer makes
	seed     uint64
	led      *ledger
	stop     atomic.Bool  // set when the writers are done
	cmdMarks atomic.Int64 // markers made for sessiontree append
	cmdRuns  atomic.Int64 // sessiontree commands run
	errs     chan error
}

// TestConcurrentSchedule runs the randomized schedule (see the top of
// this file). SESSIONTREE_SCHEDULE_SEED=K repeats the choices of a run
// (the interleaving is the scheduler's).
func TestConcurrentSchedule(t *testing.T) {
	t.Parallel()
	seed := scheduleSeed()
	t.Logf("seed %d (SESSIONTREE_SCHEDULE_SEED=%d repeats its choices)", seed, seed)
	// The watchdog gives each phase, the schedule and then its
	// verification, a deadline of its own: a deadlock stops either, while
	// a loaded machine (a race run beside other tests took 4 minutes
	// over both) slows both.
	deadline := pick(2*time.Minute, 4*time.Minute, 10*time.Minute)
	phase := "the schedule"
	var phaseMu sync.Mutex
	watchdog := time.AfterFunc(deadline, func() {
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 2)
		phaseMu.Lock()
		defer phaseMu.Unlock()
		panic(fmt.Sprintf("TestConcurrentSchedule (seed %d): %s did not finish within %v: a deadlock? goroutines above", seed, phase, deadline))
	})
	defer watchdog.Stop()
	ctx := context.Background()
	sc := &schedule{t: t, path: filepath.Join(t.TempDir(), "sessions.db"), seed: seed, led: newLedger(), errs: make(chan error, 64)}
	var err error
	if sc.s, err = store.Open(ctx, sc.path, store.Options{}); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		st, err := sc.s.Create(ctx, store.CreateOptions{Cwd: "/work/schedule"})
		if err != nil {
			t.Fatal(err)
		}
		sc.sessions = append(sc.sessions, st.ID())
		sc.led.made(st.ID())
	}
	sc.sessions, sc.doomed = sc.sessions[:4], sc.sessions[4]
	writers := 3
	sc.writes = pick(20, 200, 2000) // -short: enough to delete the doomed session while others write to it
	if storetest.RaceEnabled && currentLevel() != levelFull {
		sc.writes /= 4
	}
	ch := startChild(t, childSpec{Role: "schedule", DB: sc.path, Tag: sc.writerIDs(), Seed: seed + 100, N: sc.writes})
	ch.expect(t, "ready", time.Minute, nil)
	if _, err := ch.stdin.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	var wg, others sync.WaitGroup
	for i := range writers {
		wg.Go(func() { sc.writer(ctx, i) })
	}
	for i, fn := range []func(context.Context, *rand.Rand){sc.forker, sc.exporter, sc.importer, sc.checker, sc.searcher, sc.lister, sc.command, sc.doomer} {
		others.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(20+i)))
			for !sc.stop.Load() {
				fn(ctx, rng)
				time.Sleep(time.Duration(rng.IntN(5)) * time.Millisecond)
			}
		})
	}
	wg.Wait()
	for _, line := range ch.finish(t, time.Minute) {
		sc.childLine(line)
	}
	sc.stop.Store(true)
	others.Wait()
	close(sc.errs)
	for err := range sc.errs {
		t.Error(err)
	}
	if err := sc.s.Close(); err != nil {
		t.Fatal(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	phaseMu.Lock()
	phase = "its verification"
	phaseMu.Unlock()
	watchdog.Reset(deadline)
	sc.verify(ctx)
}

// fail records an error of a goroutine of the schedule.
func (sc *schedule) fail(format string, a ...any) {
	err := fmt.Errorf("seed %d: "+format, append([]any{sc.seed}, a...)...)
	select {
	case sc.errs <- err:
	default:
	}
}

// writerIDs is the writers' sessions as newScheduleWriter takes them.
func (sc *schedule) writerIDs() string { return strings.Join(sc.sessions, ",") + "|" + sc.doomed }

// writer is the i-th writer of this process.
func (sc *schedule) writer(ctx context.Context, i int) {
	w := newScheduleWriter(sc.s, sc.writerIDs(), sc.seed+uint64(i), "g"+strconv.Itoa(i), sc.led.ackEntry)
	defer func() {
		sc.led.mu.Lock()
		sc.led.lost += w.lost
		sc.led.mu.Unlock()
	}()
	for range sc.writes {
		if err := w.write(ctx); err != nil {
			sc.fail("writer %d: %v", i, err)
			return
		}
	}
}

// doomer deletes the doomed session once the writers have made about a
// third of their writes, while they write to it.
func (sc *schedule) doomer(ctx context.Context, _ *rand.Rand) {
	sc.led.mu.Lock()
	due := !sc.led.deleted[sc.doomed] && len(sc.led.acked[sc.doomed]) > sc.writes/8
	sc.led.mu.Unlock()
	if !due {
		return
	}
	if n, err := sc.s.Delete(ctx, sc.doomed); err != nil || n != 1 {
		sc.fail("delete the session %s while others write to it = %d, %v; want 1", sc.doomed, n, err)
		return
	}
	sc.led.mu.Lock()
	sc.led.deleted[sc.doomed] = true
	sc.led.mu.Unlock()
}

// childLine records an "ack" line of the child (the others are go
// test's).
func (sc *schedule) childLine(line string) {
	f := strings.Fields(line)
	if len(f) == 2 && f[0] == "lost" {
		n, _ := strconv.Atoi(f[1])
		sc.led.lost += n
	}
	if len(f) < 4 || f[0] != "ack" {
		return
	}
	m := ""
	if len(f) > 4 {
		m = f[4]
	}
	sc.led.ack(f[1], f[2], f[3], m)
}

// ending returns ctx, or one time in four a context that ends 0-2 ms
// in, and whether it is one.
func ending(ctx context.Context, rng *rand.Rand) (context.Context, context.CancelFunc, bool) {
	if rng.IntN(4) > 0 {
		return ctx, func() {}, false
	}
	c, cancel := context.WithTimeout(ctx, time.Duration(rng.IntN(2000))*time.Microsecond)
	return c, cancel, true
}

// endedBy tells whether err is the error of c, a context that ended.
func endedBy(c context.Context, err error) bool {
	return c.Err() != nil && errors.Is(err, c.Err())
}

// forker forks a shared session, under a context that may end, and reads
// the fork: one tree, each entry's parent before it; a fork that failed
// must not exist. Now and then it deletes an earlier fork.
func (sc *schedule) forker(ctx context.Context, rng *rand.Rand) {
	src := sc.sessions[rng.IntN(len(sc.sessions))]
	id := fmt.Sprintf("0190c000-0000-7000-8000-%012x", rng.Uint64()>>16)
	fctx, cancel, _ := ending(ctx, rng)
	tree := rng.IntN(2) == 0
	fork, err := sc.s.Fork(fctx, src, store.ForkOptions{ID: id, Tree: tree})
	cancel()
	switch {
	case err != nil && endedBy(fctx, err):
		if _, err := sc.s.OpenSession(ctx, id); !errors.Is(err, sessiontree.ErrNotFound) {
			sc.fail("a fork of %s whose context ended failed, and then open %s = %v; want ErrNotFound", src, id, err)
		}
		return
	case err != nil:
		sc.fail("fork %s: %v", src, err)
		return
	}
	log, err := fork.Log(ctx, 0, 0)
	if err != nil {
		sc.fail("log of fork %s: %v", fork.ID(), err)
		return
	}
	sc.led.made(fork.ID())
	seen := map[string]bool{}
	for _, e := range log {
		if e.ParentID != "" && !seen[e.ParentID] {
			sc.fail("fork %s of %s: entry %s's parent %s is not before it", fork.ID(), src, e.ID, e.ParentID)
		}
		seen[e.ID] = true
		sc.led.ackEntry(fork.ID(), e, "")
	}
	sc.led.mu.Lock()
	sc.led.forks = append(sc.led.forks, fork.ID())
	sc.led.forked[fork.ID()] = forkMade{src: src, tree: tree}
	sc.led.mu.Unlock()
	if rng.IntN(2) == 0 {
		sc.deleteFork(ctx, rng)
	}
}

// deleteFork deletes a fork, under a context that may end: a delete that
// failed must have deleted nothing.
func (sc *schedule) deleteFork(ctx context.Context, rng *rand.Rand) {
	sc.led.mu.Lock()
	k := rng.IntN(len(sc.led.forks))
	victim := sc.led.forks[k]
	sc.led.mu.Unlock()
	dctx, cancel, _ := ending(ctx, rng)
	n, err := sc.s.Delete(dctx, victim)
	cancel()
	switch {
	case err != nil && endedBy(dctx, err):
		if _, err := sc.s.OpenSession(ctx, victim); err != nil {
			sc.fail("a delete of %s whose context ended failed, and then open = %v; want the session", victim, err)
		}
		return
	case err != nil || n != 1:
		sc.fail("delete fork %s = %d, %v; want 1", victim, n, err)
		return
	}
	sc.led.mu.Lock()
	sc.led.deleted[victim] = true
	sc.led.forks = slices.DeleteFunc(sc.led.forks, func(id string) bool { return id == victim })
	sc.led.mu.Unlock()
	if _, err := sc.s.OpenSession(ctx, victim); !errors.Is(err, sessiontree.ErrNotFound) {
		sc.fail("open the deleted fork %s: %v; want ErrNotFound", victim, err)
	}
}

// exporter exports a shared session and keeps its lines.
func (sc *schedule) exporter(ctx context.Context, rng *rand.Rand) {
	src := sc.sessions[rng.IntN(len(sc.sessions))]
	var b bytes.Buffer
	if err := sc.s.Export(ctx, src, &b, store.ExportOptions{}); err != nil {
		sc.fail("export %s: %v", src, err)
		return
	}
	sc.keepExport(src, "Export", b.Bytes())
}

// keepExport records an export of session src.
func (sc *schedule) keepExport(src, by string, out []byte) {
	lines := bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
	sc.led.mu.Lock()
	defer sc.led.mu.Unlock()
	sc.led.exports = append(sc.led.exports, exportTaken{session: src, by: by, lines: lines})
}

// importer writes a pi file of a new session, imports it, makes it grow
// and imports it again; every entry of the file is then stored.
func (sc *schedule) importer(ctx context.Context, rng *rand.Rand) {
	dir := filepath.Join(filepath.Dir(sc.path), "import")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		sc.fail("%v", err)
		return
	}
	sid := fmt.Sprintf("0190b000-0000-7000-8000-%012x", rng.Uint64()>>16)
	path := filepath.Join(dir, sid+".jsonl")
	lines := []string{string(jsonl.HeaderLine(sessiontree.SessionMeta{ID: sid, Version: 3,
		CreatedAt: "2026-01-01T00:00:00.000Z", Cwd: "/work/imported"}))}
	for round := range 2 {
		for i := range 3 + rng.IntN(8) {
			id := fmt.Sprintf("%08x", len(lines))
			parent := "null"
			if len(lines) > 1 {
				parent = strconv.Quote(fmt.Sprintf("%08x", len(lines)-1))
			}
			m := fmt.Sprintf("zqi%sr%dn%dzq", sid[24:], round, i)
			lines = append(lines, fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-01-01T00:00:01.000Z","message":%s}`,
				id, parent, userMessage("imported "+m)))
		}
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			sc.fail("%v", err)
			return
		}
		if !sc.importFile(ctx, rng, path) {
			return
		}
		for _, l := range lines[1:] {
			e, err := sessiontree.DecodeEntry([]byte(l))
			if err != nil {
				sc.fail("%v", err)
				return
			}
			sc.led.ackEntry(sid, e, "")
		}
	}
}

// importFile imports the file at path, under a context that may end;
// an import that failed so is done again, and must then import the
// rest.
func (sc *schedule) importFile(ctx context.Context, rng *rand.Rand, path string) bool {
	ictx, cancel, _ := ending(ctx, rng)
	defer cancel()
	for _, c := range []context.Context{ictx, ctx} {
		rep, err := sc.s.Import(c, []string{path}, store.ImportOptions{})
		if err == nil && len(rep.Files) == 1 {
			err = rep.Files[0].Err
		}
		if err == nil {
			return true
		}
		if c == ctx || !endedBy(ictx, err) {
			sc.fail("import %s: %+v, %v", path, rep.Files, err)
			return false
		}
	}
	return false
}

// checker checks the whole store, or one session.
func (sc *schedule) checker(ctx context.Context, rng *rand.Rand) {
	id := ""
	if rng.IntN(2) == 0 {
		id = sc.sessions[rng.IntN(len(sc.sessions))]
	}
	if err := sc.s.Check(ctx, id); err != nil {
		sc.fail("check %q while others write: %v", id, err)
	}
}

// searcher brings the index up to date, or not, and searches for an
// entry stored before: a search sees every committed entry.
func (sc *schedule) searcher(ctx context.Context, rng *rand.Rand) {
	if rng.IntN(3) == 0 {
		ictx, cancel, _ := ending(ctx, rng)
		_, err := sc.s.Index(ictx, store.IndexOptions{})
		cancel()
		if err != nil && !endedBy(ictx, err) {
			sc.fail("index while others write: %v", err)
			return
		}
	}
	m, ok := sc.led.someMarked(rng)
	if !ok {
		return
	}
	if err := searchFinds(ctx, sc.s, m); err != nil && (m.session != sc.doomed || !errors.Is(err, sessiontree.ErrNotFound)) {
		sc.fail("%v", err)
	}
}

// searchFinds searches for m's marker in its session and wants m's
// entry, alone.
func searchFinds(ctx context.Context, s *store.Store, m markedEntry) error {
	res, err := s.Search(ctx, m.marker, store.SearchOptions{SessionID: m.session, Literal: true})
	if err != nil {
		return fmt.Errorf("search %s: %w", m.marker, err)
	}
	if len(res.Hits) != 1 || res.Hits[0].EntryID != m.id {
		return fmt.Errorf("search %s in session %s = %d hits %+v; want entry %s", m.marker, m.session, len(res.Hits), res.Hits, m.id)
	}
	return nil
}

// lister lists every session: the shared ones are there, and no fork
// deleted before the listing began.
func (sc *schedule) lister(ctx context.Context, _ *rand.Rand) {
	sc.led.mu.Lock()
	gone := make([]string, 0, len(sc.led.deleted))
	for id := range sc.led.deleted {
		gone = append(gone, id)
	}
	sc.led.mu.Unlock()
	list, err := sc.s.ListN(ctx, store.ListOptions{}, 0)
	if err != nil {
		sc.fail("list: %v", err)
		return
	}
	listed := map[string]bool{}
	for _, in := range list {
		listed[in.ID] = true
	}
	for _, id := range sc.sessions {
		if !listed[id] {
			sc.fail("list misses session %s", id)
		}
	}
	for _, id := range gone {
		if listed[id] {
			sc.fail("list holds the deleted session %s", id)
		}
	}
}

// command runs the sessiontree command, another process, every 100 ms
// or so: a check, an export, a search (which indexes first) or an
// append.
func (sc *schedule) command(_ context.Context, rng *rand.Rand) {
	time.Sleep(time.Duration(50+rng.IntN(100)) * time.Millisecond)
	if sc.stop.Load() {
		return
	}
	src := sc.sessions[rng.IntN(len(sc.sessions))]
	sc.cmdRuns.Add(1)
	switch rng.IntN(4) {
	case 0:
		if r := runCLI(sc.t, "", "--db", sc.path, "check"); r.code != 0 || !strings.HasPrefix(r.stdout, "ok:") {
			sc.fail("sessiontree check while others write: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	case 1:
		r := runCLI(sc.t, "", "--db", sc.path, "export", src)
		if r.code != 0 {
			sc.fail("sessiontree export %s while others write: exit %d\n%s", src, r.code, r.stderr)
			return
		}
		sc.keepExport(src, "sessiontree export", []byte(r.stdout))
	case 2:
		sc.commandSearch(rng)
	default:
		sc.commandAppend(src, rng)
	}
}

// commandSearch searches with sessiontree search for an entry stored
// before, which it must find, alone.
func (sc *schedule) commandSearch(rng *rand.Rand) {
	m, ok := sc.led.someMarked(rng)
	if !ok || m.session == sc.doomed {
		return
	}
	r := runCLI(sc.t, "", "--db", sc.path, "search", m.marker, "--literal", "--session", m.session, "--json")
	var hits []store.Hit
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &hits) != nil || len(hits) != 1 || hits[0].EntryID != m.id {
		sc.fail("sessiontree search %s --session %s while others write: exit %d, %s%s; want entry %s", m.marker, m.session, r.code, r.stdout, r.stderr, m.id)
	}
}

// commandAppend appends 1-3 messages to session src with sessiontree
// append, which prints each one's id once committed. They are recorded
// by their marker ("marker:" and it in place of a digest: the command
// does not print the JSON it stored).
func (sc *schedule) commandAppend(src string, rng *rand.Rand) {
	var in strings.Builder
	var markers []string
	for range 1 + rng.IntN(3) {
		m := fmt.Sprintf("zqcmd%dzq", sc.cmdMarks.Add(1))
		markers = append(markers, m)
		fmt.Fprintf(&in, `{"type":"message","message":%s}`+"\n", userMessage("command "+m))
	}
	r := runCLI(sc.t, in.String(), "--db", sc.path, "append", src)
	ids := strings.Fields(r.stdout)
	if r.code != 0 || len(ids) != len(markers) {
		sc.fail("sessiontree append %s while others write: exit %d, %d ids for %d entries\n%s%s", src, r.code, len(ids), len(markers), r.stdout, r.stderr)
		return
	}
	for i, id := range ids {
		sc.led.ack(src, id, "marker:"+markers[i], markers[i])
	}
}

// verify opens the store again and holds it to the ledger.
func (sc *schedule) verify(ctx context.Context) {
	t := sc.t
	s := checkTarget(t, sc.path, "")
	defer s.Close()
	logs := map[string][]sessiontree.Entry{}
	for sid, want := range sc.led.acked {
		if sc.led.deleted[sid] {
			if _, err := s.OpenSession(ctx, sid); !errors.Is(err, sessiontree.ErrNotFound) {
				t.Errorf("session %s was deleted; open = %v, want ErrNotFound", sid, err)
			}
			continue
		}
		logs[sid] = sc.verifySession(ctx, s, sid, want)
	}
	for _, sid := range sc.sessions {
		verifyAppendRule(t, sid, logs[sid])
	}
	sc.verifyList(ctx, s, logs)
	for _, ex := range sc.led.exports {
		verifyExport(t, ex, logs[ex.session])
	}
	for id, f := range sc.led.forked {
		if !sc.led.deleted[id] {
			verifyFork(t, id, f, logs[id], logs[f.src])
		}
	}
	if _, err := s.Index(ctx, store.IndexOptions{}); err != nil {
		t.Fatal(err)
	}
	var backlog int64
	err := s.Database().View(ctx, func(tx sessiontree.DatabaseTx) (err error) {
		backlog, err = tx.IndexBacklog()
		return err
	})
	if err != nil || backlog != 0 {
		t.Errorf("after Index, %d entries are left to index, %v; want none", backlog, err)
	}
	for i, m := range sc.led.marked {
		if i%max(1, len(sc.led.marked)/pick(50, 200, 2000)) == 0 && !sc.led.deleted[m.session] {
			if err := searchFinds(ctx, s, m); err != nil {
				t.Error(err)
			}
		}
	}
	byCommand := 0
	for _, ex := range sc.led.exports {
		if ex.by != "Export" {
			byCommand++
		}
	}
	t.Logf("%d sessions, %d entries acknowledged, %d writes failed cleanly, %d exports (%d by the command) and %d forks taken while writing, %d sessions deleted, %d sessiontree commands run",
		len(logs), sc.acked(), sc.led.lost, len(sc.led.exports), byCommand, len(sc.led.forked), len(sc.led.deleted), sc.cmdRuns.Load())
}

func (sc *schedule) acked() int {
	n := 0
	for _, m := range sc.led.acked {
		n += len(m)
	}
	return n
}

// verifySession wants session sid to hold exactly the entries of want
// (id to digest), its counts to be those of its log, and returns the log.
func (sc *schedule) verifySession(ctx context.Context, s *store.Store, sid string, want map[string]string) []sessiontree.Entry {
	t := sc.t
	st, err := s.OpenSession(ctx, sid)
	if err != nil {
		t.Errorf("session %s, acknowledged: %v", sid, err)
		return nil
	}
	log := logOf(t, st)
	messages := 0
	for _, e := range log {
		sum, ok := want[e.ID]
		marker, byCommand := strings.CutPrefix(sum, "marker:")
		switch {
		case !ok:
			t.Errorf("session %s holds entry %s, which no append acknowledged: %s", sid, e.ID, head(e.Raw))
		case byCommand:
			if !bytes.Contains(e.Raw, []byte(marker)) {
				t.Errorf("session %s: entry %s, appended by the command with %s, is %s", sid, e.ID, marker, head(e.Raw))
			}
		case sum != digest(e.Raw):
			t.Errorf("session %s: entry %s is not what was stored: %s", sid, e.ID, head(e.Raw))
		}
		if e.Type == sessiontree.TypeMessage {
			messages++
		}
	}
	if len(log) != len(want) {
		t.Errorf("session %s holds %d entries; %d were acknowledged", sid, len(log), len(want))
	}
	in, err := s.Info(ctx, sid)
	if err != nil || in.Entries != int64(len(log)) || in.Messages != int64(messages) {
		t.Errorf("Info(%s) = %d entries, %d messages, %v; the log holds %d and %d", sid, in.Entries, in.Messages, err, len(log), messages)
	}
	if stats, err := st.Stats(ctx); err != nil || stats.Entries != int64(len(log)) || stats.TotalMessages != int64(messages) {
		t.Errorf("Stats() of %s = %d entries, %d messages, %v; the log holds %d and %d", sid, stats.Entries, stats.TotalMessages, err, len(log), messages)
	}
	if leaf, err := st.Leaf(ctx); err != nil || leaf != in.Leaf {
		t.Errorf("session %s: Leaf() = %s, %v; Info says %s", sid, leaf, err, in.Leaf)
	}
	return log
}

// verifyList wants the list to hold exactly the sessions of logs.
func (sc *schedule) verifyList(ctx context.Context, s *store.Store, logs map[string][]sessiontree.Entry) {
	list, err := s.ListN(ctx, store.ListOptions{}, 0)
	if err != nil {
		sc.t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, in := range list {
		listed[in.ID] = true
		if _, ok := logs[in.ID]; !ok {
			sc.t.Errorf("list holds session %s, which the schedule did not make or deleted", in.ID)
		}
	}
	for id := range logs {
		if !listed[id] {
			sc.t.Errorf("list misses session %s", id)
		}
	}
}

// verifyExport wants an export taken while others wrote to be a
// snapshot: a prefix of the session's final log, byte for byte.
func verifyExport(t *testing.T, ex exportTaken, log []sessiontree.Entry) {
	t.Helper()
	entries := ex.lines[1:]
	if len(entries) > len(log) {
		t.Errorf("%s of %s took %d entries; the session holds %d", ex.by, ex.session, len(entries), len(log))
		return
	}
	for i, l := range entries {
		if !bytes.Equal(l, log[i].Raw) {
			t.Errorf("%s of %s: line %d is %s; the log's entry %d is %s: not a prefix of the log", ex.by, ex.session, i+2, head(l), i+1, head(log[i].Raw))
			return
		}
	}
}

// verifyFork wants a fork made while others wrote to be of one state of
// its source: a whole-tree fork a prefix of the source's final log, byte
// for byte; a path fork's entries, but for its fresh label entries,
// entries of the source.
func verifyFork(t *testing.T, id string, f forkMade, log, src []sessiontree.Entry) {
	t.Helper()
	if f.tree {
		if len(log) > len(src) {
			t.Errorf("tree fork %s of %s holds %d entries; the source %d", id, f.src, len(log), len(src))
			return
		}
		for i, e := range log {
			if !bytes.Equal(e.Raw, src[i].Raw) {
				t.Errorf("tree fork %s of %s: entry %d is %s; the source's is %s: not a prefix of the source", id, f.src, i+1, head(e.Raw), head(src[i].Raw))
				return
			}
		}
		return
	}
	inSrc := map[string]bool{}
	for _, e := range src {
		inSrc[e.ID] = true
	}
	for _, e := range log {
		if e.Type != sessiontree.TypeLabel && !inSrc[e.ID] {
			t.Errorf("path fork %s of %s holds entry %s, which the source does not", id, f.src, e.ID)
		}
	}
}

// verifyAppendRule wants each entry of a session the writers shared to
// have been appended under the leaf of the entries before it (in the
// log's order, which is the commits'): a writer of this process or the
// other that appended under a leaf it remembered from before another's
// commit would show here, and nowhere else (the tree is still a tree).
// The leaf is the last entry appended, or the target of a leaf entry.
func verifyAppendRule(t *testing.T, sid string, log []sessiontree.Entry) {
	t.Helper()
	leaf := ""
	for i, e := range log {
		if e.ParentID != leaf {
			t.Errorf("session %s: entry %d (%s, %s) has parent %q; the leaf then was %q", sid, i+1, e.ID, e.Type, e.ParentID, leaf)
			return
		}
		leaf = e.ID
		if e.Type == sessiontree.TypeLeaf {
			var f struct {
				TargetID *string `json:"targetId"`
			}
			if err := json.Unmarshal(e.Raw, &f); err != nil || f.TargetID == nil {
				t.Errorf("session %s: leaf entry %s: %s, %v", sid, e.ID, head(e.Raw), err)
				return
			}
			leaf = *f.TargetID
		}
	}
}
