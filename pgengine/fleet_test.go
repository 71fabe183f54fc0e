package pgengine_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/childenv"
	"github.com/sessiontree/sessiontree/internal/pgtest"
	"github.com/sessiontree/sessiontree/pgengine"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/storetest"
)

// The fleet test: several clients, each its own pgengine.Open of one
// database (as machines of a fleet are; some in child processes, one
// through a proxy cutting connections), open it at once at an older
// migration, then run random mixes of operations at once on their own
// sessions and on shared ones: appends (alone, in batches, through
// claims taken with leases short enough to expire mid-write), forks,
// exports, imports, Check (of a session and of the whole database),
// search, deletes, and Opens (the migrations' fast path). Each client
// logs what it was told: every write acknowledged, refused, failed or of
// unknown outcome, every claim granted, what each fork and export read.
// At the end the database must hold each acknowledged entry exactly once
// with its bytes, each of unknown outcome at most once, no refused or
// failed one; Check finds it sound, each session's counters agree with
// its log, no fence was granted twice, in each shared session's log the
// writes made under claims run in the order of their fences (two holders
// never both wrote under a claim at once), and each fork and export is
// the start of its session's log. The seed of the operations is
// printed; SESSIONTREE_FLEET_SEED runs one again (the schedule of the
// clients is the scheduler's).

const (
	fleetChildEnv = "PGENGINE_TEST_FLEET_CHILD"
	fleetSeedEnv  = "SESSIONTREE_FLEET_SEED"
)

// fleetSpec is what a client is to do: Workers goroutines on its pool,
// Ops operations each.
type fleetSpec struct {
	URL     string
	Seed    uint64
	Client  int
	Workers int
	Ops     int
	Shared  []string
	Dir     string // for its export and import files
	Out     string // a child writes its log here
	// Faulty is a client whose connections go through a proxy cutting
	// some (fleetFaults): its failures of storage are no problem, and an
	// append may fail with its outcome unknown.
	Faulty bool
}

// fleetWrite is a write a client made: the session, the marker its text
// holds (unique in the fleet), and the stored entry when acknowledged.
type fleetWrite struct {
	Session, Marker, ID, Raw string
}

// fleetGrant is a claim a client was granted.
type fleetGrant struct {
	Session, Holder string
	Fence           int64
}

// fleetSnapshot is what a fork or an export read of a session: its
// first N entries, whose JSON, a line each, has the SHA-256 Sum.
type fleetSnapshot struct {
	What, Session string
	N             int
	Sum           string
}

// snapshotSum is the Sum of a fleetSnapshot of raws.
func snapshotSum(raws []string) string {
	h := sha256.Sum256([]byte(strings.Join(raws, "\n")))
	return hex.EncodeToString(h[:])
}

// fleetLog is what a client saw: writes acknowledged, refused (by a
// claim), failed (by a fault, before the commit) and of unknown outcome
// (a fault at the commit).
type fleetLog struct {
	Acked, Refused, Failed, Unknown []fleetWrite
	Grants                          []fleetGrant
	Snapshots                       []fleetSnapshot
	Ops                             map[string]int
	Problems                        []string
}

// TestFleet runs the fleet: under -short 3 clients (one a child process,
// one through a proxy cutting connections), two workers each of 15
// operations; else 5 clients (two children, one through the proxy) of
// three workers of 100.
func TestFleet(t *testing.T) {
	t.Parallel()
	if os.Getenv(fleetChildEnv) != "" {
		return // the child's work is in TestFleetChild
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(fleetSeedEnv); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("%s: %v", fleetSeedEnv, err)
		}
	}
	t.Logf("seed %d (%s=%d runs these operations again)", seed, fleetSeedEnv, seed)
	clients, children, workers, ops := 3, 1, 2, 15
	switch {
	case testing.Short():
	case storetest.RaceEnabled: // CI's run: the detector makes each op several times dearer
		clients, children, workers, ops = 4, 2, 3, 30
	default:
		clients, children, workers, ops = 5, 2, 3, 100
	}
	url := pgtest.Migrated.Database(t)
	shared := fleetShared(t, url, 3)
	// The clients open the database at once at migration 17: each
	// migrates it, or waits for another that does, and the shared
	// sessions' header sums are filled before any Open returns.
	execAll(t, url, beforeHeaderChecksum...)
	p := pgtest.NewProxy(t, url)
	p.SetFault(fleetFaults(seed))
	logs := make([]fleetLog, clients)
	var wg sync.WaitGroup
	for c := range clients {
		spec := fleetSpec{URL: url, Seed: seed + uint64(c), Client: c, Workers: workers, Ops: ops, Shared: shared, Dir: t.TempDir()}
		switch {
		case c < children:
			wg.Go(func() { logs[c] = fleetChild(t, spec) })
		case c == clients-1:
			spec.URL, spec.Faulty = p.URL(url), true
			fallthrough
		default:
			wg.Go(func() { logs[c] = runFleetClient(context.Background(), spec) })
		}
	}
	wg.Wait()
	p.SetFault(nil)
	verifyFleet(t, url, shared, logs)
}

// fleetFaults cuts 1 connection in 200 at a message either way, and
// ends 1 in 20 right after the server's reply to a COMMIT (a server
// told to stop).
func fleetFaults(seed uint64) pgtest.Fault {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, 2))
	return func(_ int, m pgtest.Message) pgtest.Action {
		mu.Lock()
		defer mu.Unlock()
		switch x := r.IntN(1000); {
		case x < 5:
			return pgtest.Cut
		case x < 50 && !m.FromClient && m.Tag == "COMMIT":
			return pgtest.Terminate
		}
		return pgtest.Pass
	}
}

// fleetShared creates n sessions for every client to write.
func fleetShared(t *testing.T, url string, n int) []string {
	db := openURL(t, url)
	var ids []string
	for i := range n {
		st, err := db.CreateSession(context.Background(), sessiontree.SessionMeta{ID: fmt.Sprintf("fleet-shared-%d", i), Cwd: "/fleet"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, st.ID())
	}
	return ids
}

// fleetChild runs spec's client in a child process (TestFleetChild) and
// returns its log.
func fleetChild(t *testing.T, spec fleetSpec) fleetLog {
	spec.Out = filepath.Join(spec.Dir, "log.json")
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFleetChild$", "-test.count=1")
	// The child uses the parent's server: its TestMain starts none.
	cmd.Env = childenv.Env(fleetChildEnv+"="+string(b), pgtest.EnvURL+"="+pgtest.URL(t))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("client %d (child): %v\n%s", spec.Client, err, out)
		return fleetLog{}
	}
	var log fleetLog
	b, err = os.ReadFile(spec.Out)
	if err == nil {
		err = json.Unmarshal(b, &log)
	}
	if err != nil {
		t.Errorf("client %d (child): its log: %v\n%s", spec.Client, err, out)
	}
	return log
}

// TestFleetChild is a child of TestFleet: one client, whose log it writes
// to the file its spec names.
func TestFleetChild(t *testing.T) {
	env := os.Getenv(fleetChildEnv)
	if env == "" {
		t.Skip("run by TestFleet")
	}
	var spec fleetSpec
	if err := json.Unmarshal([]byte(env), &spec); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b, err := json.Marshal(runFleetClient(ctx, spec))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spec.Out, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// fleetClient is one client of the fleet.
type fleetClient struct {
	spec  fleetSpec
	id    int // client and worker: 10 * client + worker
	rng   *rand.Rand
	s     *store.Store
	db    *pgengine.DB
	own   []string
	n     int
	log   fleetLog
	acked map[string][]string // session: the markers acknowledged, in order
}

// runFleetClient opens its own pool on the database and runs spec's
// workers on it.
func runFleetClient(ctx context.Context, spec fleetSpec) fleetLog {
	s, err := openFleetStore(ctx, spec)
	if err != nil {
		return fleetLog{Problems: []string{fmt.Sprintf("client %d: open: %v", spec.Client, err)}}
	}
	defer s.Close()
	cs := make([]*fleetClient, spec.Workers)
	var wg sync.WaitGroup
	for w := range cs {
		cs[w] = &fleetClient{spec: spec, id: 10*spec.Client + w, rng: rand.New(rand.NewPCG(spec.Seed, uint64(w))),
			s: s, db: s.Database().(*pgengine.DB), acked: map[string][]string{}, log: fleetLog{Ops: map[string]int{}}}
		wg.Go(func() { cs[w].run(ctx) })
	}
	wg.Wait()
	log := fleetLog{Ops: map[string]int{}}
	for _, c := range cs {
		log.Acked = append(log.Acked, c.log.Acked...)
		log.Refused = append(log.Refused, c.log.Refused...)
		log.Failed = append(log.Failed, c.log.Failed...)
		log.Unknown = append(log.Unknown, c.log.Unknown...)
		log.Grants = append(log.Grants, c.log.Grants...)
		log.Snapshots = append(log.Snapshots, c.log.Snapshots...)
		log.Problems = append(log.Problems, c.log.Problems...)
		for op, n := range c.log.Ops {
			log.Ops[op] += n
		}
	}
	return log
}

// openFleetStore opens spec's store. A faulty client's open may fail
// (its retries spent on connections the proxy cut one after another:
// the fault draws are seeded, so a seed can cut every attempt) and is
// tried again, up to 20 times; any other failure is returned at once.
func openFleetStore(ctx context.Context, spec fleetSpec) (*store.Store, error) {
	for i := 1; ; i++ {
		s, err := store.OpenPostgres(ctx, spec.URL, store.Options{})
		if err == nil || !spec.Faulty || !errors.Is(err, sessiontree.ErrStorage) || i == 20 {
			return s, err
		}
	}
}

// run runs the worker's operations.
func (c *fleetClient) run(ctx context.Context) {
	ops := []struct {
		name string
		run  func(context.Context)
	}{
		{"append own", c.appendOwn}, {"append own", c.appendOwn}, {"append shared", c.appendShared},
		{"append shared", c.appendShared}, {"claim", c.claimAndWrite}, {"claim", c.claimAndWrite},
		{"batch", c.batch}, {"fork", c.fork}, {"export", c.export}, {"import", c.importCopy},
		{"check", c.check}, {"check all", c.checkAll}, {"search", c.search}, {"delete", c.deleteThrowaway}, {"open", c.reopen},
	}
	for len(c.own) == 0 {
		c.create(ctx) // a faulty client's may fail
	}
	for range c.spec.Ops {
		op := ops[c.rng.IntN(len(ops))]
		c.log.Ops[op.name]++
		op.run(ctx)
	}
}

func (c *fleetClient) problem(format string, args ...any) {
	c.log.Problems = append(c.log.Problems, fmt.Sprintf("client %d, worker %d: ", c.id/10, c.id%10)+fmt.Sprintf(format, args...))
}

// failed notes err, the failure of an operation, as a problem, unless
// the client's connections are cut (Faulty) and err is a failure of
// storage.
func (c *fleetClient) failed(err error, format string, args ...any) {
	if !c.spec.Faulty || !errors.Is(err, sessiontree.ErrStorage) {
		c.problem(format+": %v", append(args, err)...)
	}
}

// marker returns the next marker of the client's texts: fixed width, so
// that no marker holds another.
func (c *fleetClient) marker() string {
	c.n++
	return fmt.Sprintf("q%02dx%05dz", c.id, c.n)
}

// create creates a session of the client's own.
func (c *fleetClient) create(ctx context.Context) string {
	st, err := c.db.CreateSession(ctx, sessiontree.SessionMeta{ID: "fleet-" + c.marker(), Cwd: "/fleet"})
	if err != nil {
		c.failed(err, "create session")
		return ""
	}
	c.own = append(c.own, st.ID())
	return st.ID()
}

func (c *fleetClient) pick(ids []string) string { return ids[c.rng.IntN(len(ids))] }

// storage opens session id, a problem when it fails.
func (c *fleetClient) storage(ctx context.Context, id string) *pgengine.Storage {
	st, err := c.db.OpenStorage(ctx, id)
	if err != nil {
		c.failed(err, "open session %s", id)
		return nil
	}
	return st
}

// write appends text (holding marker) through st and logs the outcome:
// acknowledged, or refused when refusal says the error is one the
// operation may meet; any other error is a problem.
func (c *fleetClient) write(ctx context.Context, st sessiontree.Storage, id, marker, text string, refusal func(error) bool) bool {
	e, err := st.Append(ctx, userDraft(text), sessiontree.AppendOptions{})
	w := fleetWrite{Session: id, Marker: marker}
	switch {
	case err == nil:
		w.ID, w.Raw = e.ID, string(e.Raw)
		c.log.Acked = append(c.log.Acked, w)
		c.acked[id] = append(c.acked[id], marker)
		return true
	case refusal(err):
		c.log.Refused = append(c.log.Refused, w)
	default:
		c.unwritten(err, w)
	}
	return false
}

// unwritten logs w, a write that failed with err: of unknown outcome or
// failed when the client's connections are cut, else a problem.
func (c *fleetClient) unwritten(err error, w fleetWrite) {
	switch {
	case c.spec.Faulty && errors.Is(err, sessiontree.ErrCommitUnknown):
		c.log.Unknown = append(c.log.Unknown, w)
	case c.spec.Faulty && errors.Is(err, sessiontree.ErrStorage):
		c.log.Failed = append(c.log.Failed, w)
	default:
		c.problem("append %s to %s: %v", w.Marker, w.Session, err)
	}
}

func never(error) bool { return false }

func (c *fleetClient) appendOwn(ctx context.Context) {
	id := c.pick(c.own)
	if st := c.storage(ctx, id); st != nil {
		m := c.marker()
		c.write(ctx, st, id, m, m, never)
	}
}

// appendShared appends without a claim to a shared session, which
// another client's live claim refuses.
func (c *fleetClient) appendShared(ctx context.Context) {
	id := c.pick(c.spec.Shared)
	if st := c.storage(ctx, id); st != nil {
		m := c.marker()
		c.write(ctx, st, id, m, m, func(err error) bool { return errors.Is(err, sessiontree.ErrLocked) })
	}
}

// claimAndWrite claims a shared session for 30-250 ms and writes 1-3
// entries through the claim, pausing up to 150 ms before each, so that
// the lease may run out and another client take the session meanwhile;
// then releases the claim, or leaves it to expire.
func (c *fleetClient) claimAndWrite(ctx context.Context) {
	id := c.pick(c.spec.Shared)
	st := c.storage(ctx, id)
	if st == nil {
		return
	}
	holder := "holder-" + c.marker()
	cl, err := st.Claim(ctx, holder, time.Duration(30+c.rng.IntN(220))*time.Millisecond)
	if errors.Is(err, sessiontree.ErrLocked) {
		return
	}
	if err != nil {
		c.failed(err, "claim %s", id)
		return
	}
	c.log.Grants = append(c.log.Grants, fleetGrant{Session: id, Holder: holder, Fence: cl.Fence()})
	stale := func(err error) bool { return errors.Is(err, sessiontree.ErrStaleClaim) }
	for range 1 + c.rng.IntN(3) {
		time.Sleep(time.Duration(c.rng.IntN(150)) * time.Millisecond)
		m := c.marker()
		if !c.write(ctx, cl, id, m, fmt.Sprintf("%s claim %s %d", m, holder, cl.Fence()), stale) {
			break
		}
	}
	if c.rng.IntN(3) > 0 {
		if err := cl.Release(ctx); err != nil && !stale(err) {
			c.failed(err, "release %s", id)
		}
	}
}

// batch appends two or three entries in one transaction to a session
// of the client's own.
func (c *fleetClient) batch(ctx context.Context) {
	id := c.pick(c.own)
	st := c.storage(ctx, id)
	if st == nil {
		return
	}
	var marks []string
	var drafts []sessiontree.Draft
	for range 2 + c.rng.IntN(2) {
		marks = append(marks, c.marker())
		drafts = append(drafts, userDraft(marks[len(marks)-1]))
	}
	got, err := st.AppendAll(ctx, drafts, sessiontree.AppendOptions{})
	if err != nil {
		for _, m := range marks {
			c.unwritten(err, fleetWrite{Session: id, Marker: m})
		}
		return
	}
	for i, e := range got {
		c.log.Acked = append(c.log.Acked, fleetWrite{Session: id, Marker: marks[i], ID: e.ID, Raw: string(e.Raw)})
		c.acked[id] = append(c.acked[id], marks[i])
	}
}

// fork forks a session's active path (a shared one, being written) into
// a new session of the client's own, which must hold every entry the
// client had written to the source.
func (c *fleetClient) fork(ctx context.Context) {
	src := c.pick(slices.Concat(c.own, c.spec.Shared))
	f, err := c.s.Fork(ctx, src, store.ForkOptions{ID: "fleet-" + c.marker()})
	if err != nil {
		c.failed(err, "fork %s", src)
		return
	}
	c.own = append(c.own, f.ID())
	log, err := f.Log(ctx, 0, 0)
	if err != nil {
		c.failed(err, "fork %s: log", f.ID())
		return
	}
	c.holdsAll("fork of "+src, src, entryRaws(log))
}

func entryRaws(log []sessiontree.Entry) []string {
	out := make([]string, len(log))
	for i, e := range log {
		out[i] = string(e.Raw)
	}
	return out
}

// holdsAll reports a problem for each marker the client had written to
// session src that raws, what what holds of it, misses, and logs the
// snapshot, which must be the start of src's log (verifySnapshots).
func (c *fleetClient) holdsAll(what, src string, raws []string) {
	c.log.Snapshots = append(c.log.Snapshots, fleetSnapshot{What: what, Session: src, N: len(raws), Sum: snapshotSum(raws)})
	all := strings.Join(raws, "\n")
	for _, m := range c.acked[src] {
		if !strings.Contains(all, m) {
			c.problem("%s misses %s, written before", what, m)
		}
	}
}

// exported exports session id and checks the file: a header, then
// entries each under one before it, holding what the client wrote.
func (c *fleetClient) exported(ctx context.Context, id string) []byte {
	var buf bytes.Buffer
	if err := c.s.Export(ctx, id, &buf, store.ExportOptions{}); err != nil {
		c.failed(err, "export %s", id)
		return nil
	}
	seen := map[string]bool{"": true}
	var raws []string
	sc := bufio.NewScanner(bytes.NewReader(buf.Bytes()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct {
			Type, ID string
			ParentID *string `json:"parentId"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Type == "session" {
			continue
		}
		if e.ParentID != nil && !seen[*e.ParentID] {
			c.problem("export of %s: entry %s comes before its parent %s", id, e.ID, *e.ParentID)
		}
		seen[e.ID] = true
		raws = append(raws, sc.Text())
	}
	c.holdsAll("export of "+id, id, raws)
	return buf.Bytes()
}

func (c *fleetClient) export(ctx context.Context) {
	c.exported(ctx, c.pick(slices.Concat(c.own, c.spec.Shared)))
}

// importCopy exports a shared session, gives the file's header a new id
// and imports it: the new session must hold as many entries as the
// file.
func (c *fleetClient) importCopy(ctx context.Context) {
	b := c.exported(ctx, c.pick(c.spec.Shared))
	if b == nil {
		return
	}
	head, rest, _ := bytes.Cut(b, []byte("\n"))
	var h map[string]any
	if err := json.Unmarshal(head, &h); err != nil {
		c.problem("export's header: %v", err)
		return
	}
	id := "fleet-" + c.marker()
	h["id"] = id
	head, _ = json.Marshal(h)
	path := filepath.Join(c.spec.Dir, id+".jsonl")
	if err := os.WriteFile(path, append(append(head, '\n'), rest...), 0o600); err != nil {
		c.problem("%v", err)
		return
	}
	rep, err := c.s.Import(ctx, []string{path}, store.ImportOptions{})
	if err == nil && rep.Count(store.OutcomeNew) != 1 {
		err = rep.Files[0].Err
	}
	if err != nil {
		c.failed(err, "import %s", path)
		return
	}
	st := c.storage(ctx, id)
	if st == nil {
		return
	}
	c.own = append(c.own, id)
	stats, err := st.Stats(ctx)
	if n := int64(bytes.Count(rest, []byte("\n"))); err != nil || stats.Entries != n {
		c.failed(err, "imported %s: %d entries; the file has %d", id, stats.Entries, n)
	}
}

func (c *fleetClient) check(ctx context.Context) {
	id := c.pick(slices.Concat(c.own, c.spec.Shared))
	if err := c.s.Check(ctx, id); err != nil {
		c.failed(err, "check %s", id)
	}
}

// checkAll checks the whole database, while the fleet writes, deletes
// and creates sessions.
func (c *fleetClient) checkAll(ctx context.Context) {
	if err := c.s.Check(ctx, ""); err != nil {
		c.failed(err, "check the database")
	}
}

// search looks for a marker the client wrote, in its session or in
// every session, and must find its entry.
func (c *fleetClient) search(ctx context.Context) {
	if len(c.log.Acked) == 0 {
		return
	}
	w := c.log.Acked[c.rng.IntN(len(c.log.Acked))]
	opts := store.SearchOptions{SessionID: w.Session, Literal: true, Limit: store.MaxSearchLimit}
	if c.rng.IntN(2) == 0 {
		opts.SessionID = "" // every session's pending entries indexed first
	}
	res, err := c.s.Search(ctx, w.Marker, opts)
	if err != nil {
		c.failed(err, "search %s", w.Marker)
		return
	}
	for _, h := range res.Hits {
		if h.EntryID == w.ID && h.SessionID == w.Session {
			return
		}
	}
	c.problem("search %s in %s: entry %s not among %d hits", w.Marker, w.Session, w.ID, len(res.Hits))
}

// deleteThrowaway writes a session and deletes it: it must be gone.
func (c *fleetClient) deleteThrowaway(ctx context.Context) {
	id := c.create(ctx)
	if id == "" {
		return
	}
	c.own = c.own[:len(c.own)-1]
	if st := c.storage(ctx, id); st != nil {
		if _, err := st.Append(ctx, userDraft(c.marker()), sessiontree.AppendOptions{}); err != nil {
			c.failed(err, "append to %s", id)
		}
	}
	if n, err := c.s.Delete(ctx, id); err != nil || n != 1 {
		c.failed(err, "delete %s = %d", id, n)
		return
	}
	if _, err := c.db.OpenStorage(ctx, id); !errors.Is(err, sessiontree.ErrNotFound) {
		c.failed(err, "session %s deleted: open, want ErrNotFound", id)
	}
}

// reopen opens the database again (the migrations' fast path, while the
// fleet writes) and closes it.
func (c *fleetClient) reopen(ctx context.Context) {
	s, err := store.OpenPostgres(ctx, c.spec.URL, store.Options{})
	if err != nil {
		c.failed(err, "open again")
		return
	}
	if err := s.Close(); err != nil {
		c.problem("close: %v", err)
	}
}

// claimText finds a claimed write's holder and fence in an entry's JSON.
var claimText = regexp.MustCompile(`claim (holder-\S+) (\d+)"`)

// verifyFleet checks the database against the clients' logs.
func verifyFleet(t *testing.T, url string, shared []string, logs []fleetLog) {
	t.Helper()
	ctx := context.Background()
	db := openURL(t, url) // its cleanup runs Check on every session
	sessions := map[string][]sessiontree.Entry{}
	read := func(id string) []sessiontree.Entry {
		if log, ok := sessions[id]; ok {
			return log
		}
		st, err := db.OpenStorage(ctx, id)
		if err != nil {
			t.Fatalf("open %s: %v", id, err)
		}
		log, err := st.Log(ctx, 0, 0)
		stats, serr := st.Stats(ctx)
		if err != nil || serr != nil || stats.Entries != int64(len(log)) {
			t.Errorf("session %s: %d entries in its log (%v), %d counted (%v)", id, len(log), err, stats.Entries, serr)
		}
		sessions[id] = log
		return log
	}
	grants := map[string]string{}
	ops := map[string]int{}
	unknown, failed := 0, 0
	for _, l := range logs {
		for _, p := range l.Problems {
			t.Error(p)
		}
		for op, n := range l.Ops {
			ops[op] += n
		}
		verifyWrites(t, read, l)
		unknown, failed = unknown+len(l.Unknown), failed+len(l.Failed)
		for _, g := range l.Grants {
			key := fmt.Sprintf("%s fence %d", g.Session, g.Fence)
			if h, ok := grants[key]; ok {
				t.Errorf("%s granted twice: to %s and %s", key, h, g.Holder)
			}
			grants[key] = g.Holder
		}
	}
	for _, id := range shared {
		verifyClaimOrder(t, id, read(id), grants)
	}
	for _, l := range logs {
		verifySnapshots(t, read, l.Snapshots)
	}
	t.Logf("operations %v; %d claims granted; %d appends failed, %d of unknown outcome", ops, len(grants), failed, unknown)
}

// verifyWrites wants each write l acknowledged stored once with its
// bytes, each of unknown outcome at most once, and none it saw refused
// or failed.
func verifyWrites(t *testing.T, read func(string) []sessiontree.Entry, l fleetLog) {
	t.Helper()
	count := func(w fleetWrite) (n int, raw string) {
		for _, e := range read(w.Session) {
			if bytes.Contains(e.Raw, []byte(w.Marker)) {
				n, raw = n+1, string(e.Raw)
			}
		}
		return n, raw
	}
	for _, w := range l.Acked {
		if n, raw := count(w); n != 1 || raw != w.Raw {
			t.Errorf("acknowledged %s in %s: stored %d times, as %s; want once, as %s", w.Marker, w.Session, n, raw, w.Raw)
		}
	}
	for _, w := range l.Unknown {
		if n, _ := count(w); n > 1 {
			t.Errorf("%s in %s, of unknown outcome: stored %d times", w.Marker, w.Session, n)
		}
	}
	for _, w := range slices.Concat(l.Refused, l.Failed) {
		if n, _ := count(w); n != 0 {
			t.Errorf("refused or failed %s in %s: stored %d times", w.Marker, w.Session, n)
		}
	}
}

// verifySnapshots wants each fork and export the clients made hold the
// first entries of its session's log as it ends: one state of the
// session, committed.
func verifySnapshots(t *testing.T, read func(string) []sessiontree.Entry, snaps []fleetSnapshot) {
	t.Helper()
	for _, sn := range snaps {
		log := read(sn.Session)
		if len(log) < sn.N || snapshotSum(entryRaws(log[:sn.N])) != sn.Sum {
			t.Errorf("%s: its %d entries are not the first of the session's %d", sn.What, sn.N, len(log))
		}
	}
}

// verifyClaimOrder wants the writes made under claims in session id's
// log in the order of their fences, each by the holder granted it, and
// the log one chain.
func verifyClaimOrder(t *testing.T, id string, log []sessiontree.Entry, grants map[string]string) {
	t.Helper()
	var last int64
	for i, e := range log {
		if i > 0 && e.ParentID != log[i-1].ID {
			t.Errorf("%s: entry %s is under %s, not the entry before it", id, e.ID, e.ParentID)
		}
		m := claimText.FindSubmatch(e.Raw)
		if m == nil {
			continue
		}
		fence, _ := strconv.ParseInt(string(m[2]), 10, 64)
		if h := grants[fmt.Sprintf("%s fence %d", id, fence)]; h != string(m[1]) {
			t.Errorf("%s: entry %s written under fence %d by %s, which was granted to %q", id, e.ID, fence, m[1], h)
		}
		if fence < last {
			t.Errorf("%s: entry %s written under fence %d after a write under fence %d", id, e.ID, fence, last)
		}
		last = fence
	}
}
